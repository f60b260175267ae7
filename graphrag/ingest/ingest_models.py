"""The models ingestion needs (embedding, token counting, extraction, representations), loaded once per
process, and what of a chunk gets embedded."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphrag.config import Settings
from graphrag.errors import one_line
from graphrag.ingest import representations as extended
from graphrag.ingest.chunk import Chunker, ChunkOptions, HFTokenCounter
from graphrag.ingest.embed import Embedder
from graphrag.ingest.embedders import Embedders
from graphrag.ingest.extract import EXTRACTION_VERSION, ExtractOptions, SpacyExtractor
from graphrag.ingest.extractors import build_extractor, extract_options, with_glossary
from graphrag.ingest.glossary import file_stamp, glossary_path, load_glossary
from graphrag.models import Chunk

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ExtractionProfile:
    """How one collection's documents are extracted: the extractor, and its part of the content hash."""

    extractor: Any
    signature: str


class IngestModels:
    """The models ingestion needs, loaded once per process."""

    def __init__(self, settings: Settings, llm_model: Any = None, extended_model: Any = None) -> None:
        self.settings = settings
        # The tokenizer (Rust) splits a batch over a thread pool of its own; ingestion's lanes already
        # keep every core busy, where that only adds hand-offs and spinning (chunking and token
        # counting of 1,000 SciFact documents: 4.1-4.5 CPU s with it, 3.6 without). A user's setting wins.
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        self.embedders = Embedders(settings)
        self.extended_model = extended_model  # a pydantic-ai model for GRAPHRAG_EXTENDED=llm (tests pass one)
        self.llm_model = llm_model
        # Per glossary file (a folder of glossaries): what the file was when read, and its extractor.
        self._profiles: dict[Path | None, tuple[tuple[int, int] | None, ExtractionProfile]] = {}
        self._profiles_lock = threading.Lock()
        self.representers: dict[str, Any] = {}
        self._counters: dict[str, HFTokenCounter] = {}
        # Settings that can be wrong (a glossary file) are read before any model work starts.
        self.extractor_options = extract_options(settings)
        building: threading.Thread | None = None
        if self.embedders.default_spec.provider != "openai":
            # A local model loads here (callers build IngestModels off the event loop), not inside the
            # first search, whose legs would wait for it; an endpoint is asked on first use instead.
            building = build_chunk_encoder(self.embedder)
        try:
            self.extractor_model = settings.spacy_model
            self.spacy = SpacyExtractor(settings.spacy_model, self.extractor_options)
            self.extractor: Any = build_extractor(settings, self.spacy, llm_model)
            self.extractor_name = f"{settings.extractor}:{type(self.extractor.inner).__name__}"
            self.boilerplate = (settings.boilerplate_filter, settings.boilerplate_repeated_documents)
            self.chunk_options = ChunkOptions(budget=settings.chunk_tokens,
                                              overlap_tokens=settings.chunk_overlap_tokens)
        finally:
            # Also on a failure: a process must not exit while the encoder is half built (its native
            # threads abort the interpreter's exit).
            if building is not None:
                building.join()

    def _signature(self, opts: ExtractOptions) -> str:
        """Part of the content hash: changing what is extracted re-ingests documents."""
        return (f"|{self.extractor_model}|{sorted(opts.drop_labels)}|{opts.noun_phrases}|{opts.svo}"
                f"|{self.extractor_name}|{opts.code_entities}|{opts.identifier_min_chunks}|{opts.keyphrases}"
                f"|{opts.keyphrase_min_chunks}|{self.boilerplate}|v{EXTRACTION_VERSION}"
                f"|tech:{opts.tech_names.fingerprint if opts.tech_names else 'off'}"
                f"{f'|terms:{opts.terms_fingerprint}' if opts.terms else ''}")

    def extraction(self, collection: str) -> ExtractionProfile:
        """The extractor and content-hash signature for documents of ``collection``: the process's own,
        or, where ``GRAPHRAG_ENTITY_TERMS`` names a folder of glossaries, one with the collection's
        glossary (:func:`glossary_path`), read again once its file has changed. A bad file is a
        one-line ConfigurationError (called before anything of an ingest is written)."""
        default = ExtractionProfile(self.extractor, self._signature(self.extractor_options))
        setting = self.settings.entity_terms
        if setting is None or not setting.is_dir():
            return default
        with self._profiles_lock:  # called from worker threads: one reads a changed file at a time
            return self._collection_profile(setting, collection, default)

    def _collection_profile(self, setting: Path, collection: str, default: ExtractionProfile) -> ExtractionProfile:
        path = glossary_path(setting, collection)
        stamp = file_stamp(path)
        cached = self._profiles.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        glossary = load_glossary(path)
        if glossary.fingerprint == self.extractor_options.terms_fingerprint:
            profile = default
        else:
            spacy = self.spacy.with_glossary(glossary.terms, glossary.fingerprint)
            profile = ExtractionProfile(with_glossary(self.extractor, self.settings, spacy, self.llm_model),
                                        self._signature(spacy.options))
        self._profiles[path] = (stamp, profile)
        return profile

    @property
    def embedder(self) -> Embedder:
        """The configured embedding model (new collections use it; others keep their own)."""
        return self.embedders.default

    @property
    def counter(self) -> HFTokenCounter:
        """The token counter of the configured model."""
        return self.counter_for(self.embedder)

    def counter_for(self, embedder: Embedder) -> HFTokenCounter:
        """Chunk sizes are counted with the tokenizer of the model that embeds them."""
        found = self._counters.get(embedder.name)
        if found is None:
            found = self._counters[embedder.name] = HFTokenCounter(embedder.tokenizer, embedder.max_seq_length)
        return found

    @property
    def nlp(self) -> Any:
        """The spaCy pipeline (the graph leg parses queries with it)."""
        return self.spacy.nlp

    def representer(self, mode: str) -> Any:
        """The extended-search representer of ``mode`` (built once)."""
        found = self.representers.get(mode)
        if found is None:
            found = self.representers[mode] = extended.build_representer(mode, self.settings, self.extended_model)
        return found

    def chunker(self, embedder: Embedder | None = None) -> Chunker:
        embedder = embedder or self.embedder
        return Chunker(self.counter_for(embedder), self.chunk_options, embed=embedder.encode)


def embedding_text(chunk: Chunk, counter: Any) -> str:
    """What gets embedded: the chunk under its heading path, when that still fits the model."""
    return _embedding_text(chunk, counter)[0]


def _embedding_text(chunk: Chunk, counter: Any) -> tuple[str, int | None]:
    """:func:`embedding_text` and the tokens of what it put before the chunk's text (None: nothing)."""
    path = " > ".join(chunk.heading_path)
    if not path or chunk.text.lstrip("# ").startswith(chunk.heading_path[-1]):
        return chunk.text, None
    path_tokens = counter.count([path])[0]
    if chunk.token_count + path_tokens + 1 > counter.max_tokens:
        return chunk.text, None
    return f"{path}\n{chunk.text}", path_tokens


def embedding_inputs(chunks: Sequence[Chunk], counter: Any, embedder: Embedder) -> tuple[list[str], list[int]]:
    """Each chunk's :func:`embedding_text` and its :meth:`Embedder.token_lengths` (what a model batch
    pads it to).

    Where the counter's tokenizer splits at white space first (``additive``: the packaged MiniLM's
    WordPiece), a text's length is added up from the counts chunking made (the chunk's
    ``token_count``, its heading path's tokens, the model's special tokens) instead of tokenizing
    every text once more; otherwise, or for a chunk without a count, the texts are tokenized."""
    made = [_embedding_text(c, counter) for c in chunks]
    texts = [text for text, _ in made]
    if not getattr(counter, "additive", False) or not all(c.token_count > 0 for c in chunks):
        return texts, embedder.token_lengths(texts)
    lengths = [min(c.token_count + (path or 0) + counter.special_tokens, embedder.max_seq_length)
               for c, (_, path) in zip(chunks, made, strict=True)]
    return texts, lengths


def build_chunk_encoder(embedder: Embedder) -> threading.Thread | None:
    """Start building the embedder's chunk encoder (OpenVINO's conversion of the model, about a second
    of one core) in a thread, so that it happens while the rest of the models load rather than in the
    first ingest batch, where the extraction lane would wait for it; None if it has none to build.
    A failure is logged: the first chunk batch then tries again (and keeps PyTorch if it fails)."""
    build = getattr(embedder, "chunk_encoder", None)
    if build is None or getattr(embedder, "runtime", None) != "openvino":
        return None

    def run() -> None:
        try:
            build()
        except Exception as exc:  # noqa: BLE001 - the first chunk batch builds it again and reports
            log.warning("chunk encoder of %s not built in advance: %s", embedder.name, one_line(exc))

    thread = threading.Thread(target=run, name="chunk-encoder", daemon=True)
    thread.start()
    return thread
