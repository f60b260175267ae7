"""A faster greedy decoder for a spaCy pipeline's ``ner``, with the same entities.

spaCy's entity recogniser is a transition-based parser: it reads a document token by token and at
each token picks the best-scoring valid move (begin, in, last, unit or out, per label). Its network
is cheap (the token vectors and their projections are computed once per batch in large matrix
products); the loop is not. For every token of every document it asks each of its 74 moves whether
it is valid, one C call per move, which on scientific abstracts is about half the recogniser's time
(a quarter of the whole extraction).

Every move consumes exactly one token, so the documents of a batch can be decoded side by side: step
``t`` reads token ``t`` of every document still that long. Each step here is a few array operations
over all of those documents at once, doing what spaCy does per state, in the same order of float
operations: the state's three feature rows (the next token, the open entity's first token and the
token before the next, or the padding row) summed onto zeros, the bias added, the maxout, the output
layer through BLIS (the library spaCy's loop calls, so the same sums), its bias, and the first
best-scoring valid move (the invalid ones set to -inf by one row per kind of state: which entity is
open, whether the token is white space, whether the next one starts a sentence). The validity
rules are spaCy's for documents without preset entities; a
batch with any preset entity, or a model this decoder does not know (beam search, unseen classes,
other features), goes through spaCy's own ``pipe``. The token vectors and the projections are
computed by the model itself, on the same sub-batches as spaCy (its batches sorted by length, in
quarters), so they are bit for bit the ones spaCy's loop would read.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

# Move types, as spaCy's BiluoPushDown names them in its class names ("B-ORG", "U-", "O").
_MOVES = {"B": 0, "I": 1, "L": 2, "U": 3, "O": 4}


class FastEntityRecognizer:
    """Runs a spaCy ``ner`` component's greedy decoding over whole batches at once (:meth:`pipe`).

    Build it with :meth:`for_pipe`, which returns None for a component it cannot stand in for."""

    def __init__(self, ner: Any) -> None:
        self.ner = ner
        model = ner.model
        self.tok2vec = model.get_ref("tok2vec")
        self.lower = model.get_ref("lower")
        upper = model.get_ref("upper")
        self.upper_w = np.ascontiguousarray(upper.get_param("W"), dtype=np.float32)  # (classes, hidden)
        self.upper_b = np.asarray(upper.get_param("b"), dtype=np.float32)
        self.feat_bias = np.asarray(self.lower.get_param("b"), dtype=np.float32)  # (hidden, pieces)
        moves = ner.moves
        names = [moves.get_class_name(i) for i in range(moves.n_moves)]
        kinds, labels = [], []
        self.label_names: list[str] = [""]  # label index -> name; 0 is "no label"
        for name in names:
            kind, _, label = name.partition("-")
            kinds.append(_MOVES[kind])
            if label and label not in self.label_names:
                self.label_names.append(label)
            labels.append(self.label_names.index(label) if label else 0)
        self.kind = np.array(kinds, dtype=np.int8)
        self.label = np.array(labels, dtype=np.int32)
        self.penalty = self._penalties()

    def _penalties(self) -> np.ndarray:
        """Per kind of state, 0 for each move it may take and -inf for the others (spaCy's rules for
        documents without preset entities). Rows 0-2: no entity open, at a white-space token (only
        out), at a token that cannot go on into the next (out or unit), at one that can (also begin).
        Row 3 + 2 * label + go_on: an entity of that label open (last; in too where it can go on)."""
        kind, has_label = self.kind, self.label != 0
        out, begin = kind == _MOVES["O"], (kind == _MOVES["B"]) & has_label
        unit, inside, last = ((kind == _MOVES[k]) & has_label for k in "UIL")
        rows = [out, out | unit, out | unit | begin]
        for label in range(len(self.label_names)):
            same = self.label == label
            rows += [same & last, same & (last | inside)]
        return np.where(np.array(rows), np.float32(0), np.float32(-np.inf)).astype(np.float32)

    @classmethod
    def for_pipe(cls, ner: Any) -> FastEntityRecognizer | None:
        """A decoder for ``ner``, or None where this one would not give spaCy's result (beam search,
        unseen classes, post-processing hooks, another feature set or move set)."""
        try:
            from blis.py import gemm  # noqa: F401 - the output layer's products, as spaCy's loop does them
            from spacy.pipeline._parser_internals.ner import BiluoPushDown
            from thinc.api import NumpyOps

            model = ner.model
            names = [ner.moves.get_class_name(i) for i in range(ner.moves.n_moves)]
            lower = model.get_ref("lower")
            ok = (isinstance(ner.moves, BiluoPushDown)
                  and ner.cfg.get("beam_width", 1) == 1
                  and not getattr(ner, "postprocesses", None)
                  and model.attrs.get("has_upper") and not model.attrs.get("unseen_classes")
                  and lower.get_dim("nF") == 3 and lower.get_dim("nP") >= 2
                  and isinstance(model.ops, NumpyOps)
                  and all(n == "O" or (n[:2] in ("B-", "I-", "L-", "U-")) for n in names)
                  and all(n[2:] for n in names if n[:2] in ("B-", "I-", "L-")))
        except Exception:  # noqa: BLE001 - any other spaCy: keep its own decoder
            log.debug("fast NER decoder unavailable", exc_info=True)
            return None
        return cls(ner) if ok else None

    # --- the component's pipe ----------------------------------------------------------------

    def pipe(self, docs: Iterable[Any], batch_size: int = 256) -> Iterator[Any]:
        """Set the entities of every document, yielding them in order (as ``ner.pipe`` does, batched
        and sub-batched by spaCy's own ``minibatch``)."""
        from spacy.util import minibatch

        for batch in minibatch(docs, size=batch_size):
            if any(self._has_preset(doc) for doc in batch):
                yield from self.ner.pipe(batch, batch_size=batch_size)  # spaCy keeps what was preset
                continue
            by_length = sorted(batch, key=len)
            subbatches = list(minibatch(by_length, size=max(batch_size // 4, 2)))
            self._decode(subbatches)
            yield from batch

    @staticmethod
    def _has_preset(doc: Any) -> bool:
        from spacy.attrs import ENT_IOB

        return len(doc) > 0 and bool(doc.to_array([ENT_IOB]).any())

    def _features(self, subbatches: list[list[Any]]) -> tuple[list[np.ndarray], list[int], list[int]]:
        """Every sub-batch's precomputed feature rows (its padding row, then one per token), stacked
        into one contiguous (rows, hidden * pieces) table per feature (row gathers are then plain
        takes), and for each document (in sub-batch order) its first token's row and its padding row."""
        blocks: list[np.ndarray] = []
        firsts: list[int] = []
        pads: list[int] = []
        base = 0
        for sub in subbatches:
            if not any(len(doc) for doc in sub):  # spaCy computes nothing for such a batch
                firsts.extend(base for _ in sub)
                pads.extend(base for _ in sub)
                continue
            tokvecs = self.tok2vec.predict(sub)
            cached = self.lower.predict(tokvecs)  # (1 + tokens, features, hidden, pieces)
            row = base + 1
            for doc in sub:
                firsts.append(row)
                pads.append(base)
                row += len(doc)
            blocks.append(cached)
            base += cached.shape[0]
        width = self.feat_bias.size  # hidden * pieces
        if not blocks:
            return [np.zeros((0, width), dtype=np.float32) for _ in range(3)], firsts, pads
        return [np.concatenate([b[:, f] for b in blocks]).reshape(base, width) for f in range(3)], firsts, pads

    def _decode(self, subbatches: list[list[Any]]) -> None:
        from spacy.attrs import IS_SPACE, SENT_START
        from spacy.tokens import Span

        by_feature, firsts, pads = self._features(subbatches)
        flat = [doc for sub in subbatches for doc in sub]
        # Longest first, so the documents still being read at step t are a prefix.
        order = sorted(range(len(flat)), key=lambda i: -len(flat[i]))
        docs = [flat[i] for i in order]
        first = np.array([firsts[i] for i in order], dtype=np.int64)
        pad = np.array([pads[i] for i in order], dtype=np.int64)
        lengths = np.array([len(doc) for doc in docs], dtype=np.int64)
        found: list[list[tuple[int, int, int]]] = [[] for _ in docs]
        width = int(lengths[0]) if len(docs) else 0
        if width:
            # Per document and token: may an entity go on past it (a next token that does not start
            # a sentence), and is it white space.
            goes_on = np.zeros((len(docs), width), dtype=bool)
            space = np.zeros((len(docs), width), dtype=bool)
            for i, doc in enumerate(docs):
                n = len(doc)
                if n:
                    arr = doc.to_array([SENT_START, IS_SPACE])
                    goes_on[i, :n - 1] = arr[1:, 0] != 1
                    space[i, :n] = arr[:, 1] != 0
            self._run(by_feature, first, pad, lengths, goes_on, space, found)
        for doc, ents in zip(docs, found, strict=True):
            doc.set_ents([Span(doc, s, e, label=self.label_names[lab]) for s, e, lab in ents], default="outside")

    def _run(self, by_feature: list[np.ndarray], first: np.ndarray, pad: np.ndarray, lengths: np.ndarray,
             goes_on: np.ndarray, space: np.ndarray, found: list[list[tuple[int, int, int]]]) -> None:
        """The greedy decoding, one token position of every document per step."""
        from blis.py import gemm

        n = len(lengths)
        is_open = np.zeros(n, dtype=bool)
        ent_start = np.zeros(n, dtype=np.int64)
        ent_label = np.zeros(n, dtype=np.int32)
        descending = -lengths
        hidden_size, pieces = self.feat_bias.shape
        bias = self.feat_bias.reshape(-1)
        for t in range(int(lengths[0])):
            k = int(np.searchsorted(descending, -t, side="left"))  # documents longer than t
            op = is_open[:k]
            # The state's features: next token; open entity's first token; the token before the next.
            row0 = first[:k] + t
            row1 = np.where(op, first[:k] + ent_start[:k], pad[:k])
            row2 = np.where(op, row0 - 1, pad[:k])
            summed = by_feature[0].take(row0, axis=0)
            summed += by_feature[1].take(row1, axis=0)
            summed += by_feature[2].take(row2, axis=0)
            summed += bias
            hidden = summed.reshape(k, hidden_size, pieces).max(axis=2)
            scores = gemm(hidden, self.upper_w, trans2=True, beta=0.0)
            scores += self.upper_b
            on = goes_on[:k, t]
            solid = ~space[:k, t]
            state = np.where(op, 3 + 2 * ent_label[:k] + on, solid.astype(np.int64) + (solid & on))
            scores += self.penalty.take(state, axis=0)  # invalid moves to -inf: the best valid one wins
            guess = scores.argmax(axis=1)
            kind = self.kind[guess]
            label = self.label[guess]
            for i in np.flatnonzero(kind == 2):  # last: the open entity ends here
                found[i].append((int(ent_start[i]), t + 1, int(ent_label[i])))
            for i in np.flatnonzero(kind == 3):  # unit: a one-token entity
                found[i].append((t, t + 1, int(label[i])))
            began = np.flatnonzero(kind == 0)
            is_open[:k] = (op & (kind != 2)) | (kind == 0)
            ent_start[began] = t
            ent_label[began] = label[began]
