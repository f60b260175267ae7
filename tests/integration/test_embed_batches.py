"""Chunk embeddings are batched by length in model tokens, not characters: a batch is padded to its
longest text in tokens, and characters are a poor stand-in for them (numbers and symbols take several
tokens per character, plain words fewer)."""

from __future__ import annotations

from typing import Any

import numpy as np

# The same number of characters, very different numbers of tokens.
WORDS = "the cells were grown in the usual medium for the whole of the study timespan "
DIGITS = "3.1415 2.7182 1.4142 1.7320 0.5772 2.2360 1.6180 0.6931 2.3025 1.2020 4.6692 "


def test_token_lengths_count_what_a_batch_pads(models: Any) -> None:
    embedder = models.embedder
    words, digits = embedder.token_lengths([WORDS, DIGITS])
    assert len(WORDS) == len(DIGITS)
    assert digits > 2 * words  # the same characters, more than twice the tokens
    assert words == len(embedder.tokenizer(WORDS)["input_ids"])  # [CLS] and [SEP] included
    assert embedder.token_lengths([WORDS * 40]) == [embedder.max_seq_length]  # cut where the model cuts
    assert embedder.token_lengths([]) == []


def test_encode_batches_texts_of_similar_token_length_with_the_same_vectors(models: Any) -> None:
    embedder = models.embedder
    # Interleaved so that an order by characters (all equal) would mix them in every batch.
    texts = [(WORDS if i % 2 else DIGITS) + str(i) for i in range(2 * embedder.batch_size)]
    lengths = embedder.token_lengths(texts)
    batches: list[list[int]] = []
    # What tokenises one model batch: the OpenVINO encoder's feed, or the PyTorch model's preprocess.
    owner = embedder.chunk_encoder() or embedder.model
    name = "_feed" if owner is not embedder.model else "preprocess"
    tokenise = getattr(owner, name)

    def recording(batch: list[str]) -> Any:
        batches.append([lengths[texts.index(t)] for t in batch])
        return tokenise(batch)

    setattr(owner, name, recording)
    try:
        vectors = embedder.encode(texts, threads=1)
    finally:
        delattr(owner, name)  # back to the class's method
    assert len(batches) >= 2
    for batch in batches:  # one kind of text per batch: nothing padded to the other's length
        assert max(batch) - min(batch) <= 2, batches
    one_by_one = np.vstack([embedder.encode([t], threads=1) for t in texts])
    assert np.allclose(vectors, one_by_one, atol=1e-3)
    # Lengths given by the caller (the pipeline counts them once) give the same vectors.
    assert np.allclose(embedder.encode(texts, threads=1, lengths=lengths), vectors, atol=1e-6)
