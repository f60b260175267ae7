"""Which embedding model serves which collection: loaded models by name, and the collection records.

A collection is created with the configured model (``GRAPHRAG_EMBEDDING_MODEL``) and keeps it:
ingestion into it and searches over it use that model, whatever a later process is configured with,
until ``graphrag reembed`` moves it to another one. Models are loaded once per process, on first use.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass

from graphrag.config import Settings
from graphrag.errors import ConfigurationError, InvalidInput
from graphrag.ingest.embed import Embedder, EmbeddingSpec, load_embedder, parse_spec
from graphrag.models import entity_vector_slot
from graphrag.stores.postgres import CollectionRecord, ModelRecord, PostgresStore

log = logging.getLogger(__name__)


#: Settings of where and how a local model runs; their errors are not about which model a collection needs.
_RUN_SETTINGS = ("GRAPHRAG_EMBEDDING_DEVICE", "GRAPHRAG_EMBEDDING_RUNTIME", "GRAPHRAG_EMBEDDING_PRECISION")


@dataclass(frozen=True)
class EmbeddingSpace:
    """The model a search or a write uses, with where its vectors live in each store."""

    embedder: Embedder
    #: Set when the search named no collection and they use several models: the vector side then
    #: covers the collections of this model only, and the response says so.
    note: str | None = None

    @property
    def name(self) -> str:
        return self.embedder.name

    @property
    def dim(self) -> int:
        """The vectors' dimension (``load`` checked it equals the one recorded for the model)."""
        return self.embedder.dim

    @property
    def entity_property(self) -> str:
        return entity_vector_slot(self.name)[0]

    @property
    def entity_index(self) -> str:
        return entity_vector_slot(self.name)[1]


class Embedders:
    """Loaded embedding models by name; the configured one is the default for new collections."""

    def __init__(self, settings: Settings | None, default: Embedder | None = None) -> None:
        """``settings`` say how to load models; without them only ``default`` (then required) serves."""
        if settings is None and default is None:
            raise ValueError("Embedders needs settings or a default model")
        self.settings = settings
        self.default_spec: EmbeddingSpec = (default.spec if default is not None
                                            else parse_spec(settings.embedding_model, settings.embedding_base_url))  # type: ignore[union-attr]
        self._loaded: dict[str, Embedder] = {default.name: default} if default is not None else {}
        self._lock = threading.Lock()

    @property
    def default(self) -> Embedder:
        """The configured model (loaded on first use)."""
        dim = self.settings.embedding_dim if self.settings is not None else None
        return self.load(self.default_spec, dim=dim, request_dim=dim)

    def load(self, spec: EmbeddingSpec, *, dim: int | None = None, request_dim: int | None = None) -> Embedder:
        """The model ``spec`` names, loaded once per process (blocking: call it from a worker thread)."""
        with self._lock:
            found = self._loaded.get(spec.name)
            if found is None:
                if self.settings is None:
                    raise ConfigurationError(f"embedding model {spec.name} is not loaded here")
                key = self.settings.embedding_api_key
                found = load_embedder(spec, api_key=key.get_secret_value() if key else None, dim=dim,
                                      request_dim=request_dim, batch_size=self.settings.embedding_batch_size,
                                      timeout_s=self.settings.embedding_timeout_s,
                                      max_retries=self.settings.embedding_max_retries,
                                      query_runtime=self.settings.query_encoder,
                                      precision=self.settings.embedding_precision,
                                      runtime=self.settings.embedding_runtime,
                                      device=self.settings.embedding_device)
                self._loaded[spec.name] = found
        if dim is not None and found.dim != dim:
            raise ConfigurationError(f"embedding model {spec.name} gives {found.dim}-dim vectors, "
                                     f"but {dim} are recorded for it")
        return found

    def load_record(self, record: ModelRecord) -> Embedder:
        """The model a collection recorded (the configured endpoint's key is used for remote ones)."""
        if record.name == self.default_spec.name:
            spec = self.default_spec
        else:
            provider, _, target = record.spec.partition(":")
            base_url = record.base_url
            if provider == "openai" and self.settings is not None and self.settings.embedding_base_url:
                # The endpoint may have moved since the model was recorded: the setting wins.
                base_url = self.settings.embedding_base_url.rstrip("/")
            spec = EmbeddingSpec(provider, target, record.name, base_url)
        try:
            return self.load(spec, dim=record.dim)
        except ConfigurationError as exc:
            if exc.message.startswith(_RUN_SETTINGS):
                raise  # where or how the model runs, not which model: the hint below would mislead
            raise ConfigurationError(
                f"{exc.message} (this collection was built with {record.name}; set GRAPHRAG_EMBEDDING_MODEL "
                "so it can be loaded, or move the collection with `graphrag reembed`)") from None

    async def aload_record(self, record: ModelRecord) -> Embedder:
        """:meth:`load_record` off the event loop; a model already loaded (every search after the
        first) answers at once, without the thread hand-off."""
        found = self._loaded.get(record.name)
        if found is not None and found.dim == record.dim:
            return found
        return await asyncio.to_thread(self.load_record, record)

    async def register(self, postgres: PostgresStore, embedder: Embedder) -> ModelRecord:
        """Record ``embedder`` (first use) and check it still gives the recorded dimension."""
        spec = embedder.spec
        record = await postgres.register_model(spec.name, spec.provider, spec.spec, embedder.dim, spec.base_url)
        if record.dim != embedder.dim:
            raise ConfigurationError(f"embedding model {spec.name} now gives {embedder.dim}-dim vectors, "
                                     f"but {record.dim} are recorded for it")
        return record

    async def for_write(self, postgres: PostgresStore, collection: str,
                        text_config: str | None = None) -> tuple[CollectionRecord, EmbeddingSpace]:
        """The collection's record and model, creating the record (with the configured model and
        text-search configuration) on its first write."""
        info = (await postgres.collection_info([collection])).get(collection)
        if info is None:
            embedder = await asyncio.to_thread(lambda: self.default)
            await self.register(postgres, embedder)
            default_config = self.settings.text_search_config if self.settings is not None else "english"
            await postgres.create_collection(collection, embedder.name, text_config or default_config)
            info = (await postgres.collection_info([collection]))[collection]
        elif text_config is not None and text_config != info.text_config:
            raise InvalidInput(f"collection {collection!r} uses the text-search configuration {info.text_config!r}, "
                               f"not {text_config!r} (it is chosen when a collection is created)")
        embedder = await self.aload_record(info.model)
        return info, EmbeddingSpace(embedder)

    async def for_search(self, postgres: PostgresStore, collections: tuple[str, ...] | None) -> EmbeddingSpace:
        """The one model the searched collections share; several is a clear error (vectors of
        different models are never compared). Unknown collections fall back to the default model."""
        infos = await postgres.collection_info(list(collections) if collections else None)
        models: dict[str, ModelRecord] = {}
        members: dict[str, list[str]] = {}
        for name, info in sorted(infos.items()):
            models.setdefault(info.model.name, info.model)
            members.setdefault(info.model.name, []).append(name)
        if not models:
            embedder = await asyncio.to_thread(lambda: self.default)
            return EmbeddingSpace(embedder)
        if len(models) == 1:
            record = next(iter(models.values()))
            return EmbeddingSpace(await self.aload_record(record))
        if collections:
            listing = "; ".join(f"{model} ({models[model].dim} dims): {', '.join(names[:5])}"
                                + (f" and {len(names) - 5} more" if len(names) > 5 else "")
                                for model, names in members.items())
            raise InvalidInput(
                f"these collections use different embedding models ({listing}); search them in separate "
                "requests or move one with `graphrag reembed`")
        # No collection named: everything is searched, and the vector side takes the configured
        # model's collections (or else the model most collections use) and says so.
        chosen = self.default_spec.name if self.default_spec.name in models else max(members, key=lambda m: len(members[m]))
        others = sorted(n for m, names in members.items() if m != chosen for n in names)
        note = (f"vector similarity covered the collections embedded with {chosen}; {len(others)} other "
                f"collection(s) use another model (name them in `collections` to search them by vector)")
        return EmbeddingSpace(await self.aload_record(models[chosen]), note)
