"""The query router: embed once, run the legs concurrently (each with its own timeout), fuse, shape.

A leg that fails or times out is reported in ``legs`` with its status while the others answer.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphrag.communities.search import global_cue, route_global
from graphrag.errors import InvalidInput, ServiceUnavailable, one_line
from graphrag.ingest.embed import Embedder, resolve_device
from graphrag.ingest.embedders import Embedders, EmbeddingSpace
from graphrag.models import Hit, Leg, LegReport, Mode, SearchResult, is_collection_name
from graphrag.observability import events, tracing
from graphrag.search import extended as extended_search
from graphrag.search import extras, fusion
from graphrag.search.batching import EmbeddingBatcher
from graphrag.search.config import LEGS, SearchConfig, validate_query
from graphrag.search.expansion import (
    Expansion,
    QueryExpander,
    check_groups,
    expanded_keyword_leg,
    weighted_strings,
)
from graphrag.search.filters import parse_filter
from graphrag.search.graph import graph_leg, passages, plan_graph_leg
from graphrag.search.legs import (
    LegResult,
    completion_scores,
    fetch_rows,
    keyword_leg,
    keyword_scores,
    similarities,
    vector_leg,
)
from graphrag.search.recipes import derive
from graphrag.search.registry import LegInputs, LegRunner
from graphrag.stores.filters import compile_filter
from graphrag.stores.neo4j import Neo4jStore
from graphrag.stores.postgres import PostgresStore, is_connection_error

log = logging.getLogger(__name__)

#: The fusion key of the graph leg's named-document ranking; hits it found show it in their ``legs``.
NAMED = "named"


class SearchRouter:
    """Holds the stores and models a search needs; one per process, safe to share between requests."""

    #: Entries of the query-embedding cache; 0 turns it off (benchmarks measure the embedding that way).
    query_cache_size: int = 2048
    #: Concurrent requests share model calls for their query and mention embeddings (see batching.py).
    embed_batching: bool = True
    #: Seconds a collection's graph prior (how entity-centric it is) is reused before it is measured again.
    graph_prior_ttl_s: float = 300.0
    #: Share of documents named after an entity from which the graph leg gets its full fusion weight.
    graph_prior_full_share: float = 0.5
    #: Per-leg timeout of requests that do not set one (GRAPHRAG_LEG_TIMEOUT_S); None: the recipes' 5 s.
    leg_timeout_s: float | None = None

    def __init__(self, postgres: PostgresStore, neo4j: Neo4jStore, embedder: Embedders | Embedder, nlp: Any = None,
                 reranker_path: str | None = None, reranker_device: str = "cpu") -> None:
        """``embedder``: the loaded models by name (each collection is searched with its own model), or
        one model, which then serves every collection that records it. ``nlp`` is not used by search
        (the graph leg needs no parse of the query); it is accepted for callers that pass one.
        ``reranker_device``: where the reranker runs (``auto``, ``cpu``, ``cuda[:N]``)."""
        self.postgres = postgres
        self.neo4j = neo4j
        self.embedders = embedder if isinstance(embedder, Embedders) else Embedders(None, default=embedder)
        self.nlp = nlp
        self.reranker_path = reranker_path
        self.reranker_device = reranker_device
        self._reranker: Any = None
        self._cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._graph_priors: dict[tuple[str, ...] | None, tuple[float, float]] = {}
        self._chunk_counts: dict[tuple[str, ...] | None, tuple[int, float]] = {}
        self._batchers: dict[str, Callable[[list[str]], Awaitable[np.ndarray]]] = {}
        #: The legs by name (registry.py); tests replace one to force a failure or a timeout.
        self.legs: dict[str, LegRunner] = {
            Leg.VECTOR: LegRunner(self._vector_leg),
            Leg.KEYWORD: LegRunner(self._keyword_leg, embeds=False, after_embedding=False),
            # The graph leg's passage feedback is keyword passages: it never waits for the embedding.
            Leg.GRAPH: LegRunner(self._graph_leg, embeds=False, after_embedding=False),
            Leg.EXTENDED: LegRunner(self._extended_leg),
        }
        #: Query expansion (synonyms, entity aliases); the runtime configures it from the settings.
        self.expander = QueryExpander()
        #: The per-leg timeout of requests that name none (GRAPHRAG_LEG_TIMEOUT_S; None: the recipes').
        self.leg_timeout_s: float | None = None

    @property
    def embedder(self) -> Embedder:
        """The configured (default) embedding model."""
        return self.embedders.default

    def _embed_with(self, embedder: Embedder) -> Callable[[list[str]], Awaitable[np.ndarray]]:
        """The model's query-time encoder: concurrent requests share model calls (batching.py)."""
        found = self._batchers.get(embedder.name)
        if found is None:
            found = EmbeddingBatcher(embedder.aencode_queries) if self.embed_batching else embedder.aencode_queries
            self._batchers[embedder.name] = found
        return found

    async def space(self, collections: tuple[str, ...] | None) -> EmbeddingSpace:
        """The embedding model of the searched collections (read on every search, so a re-embed's
        switch applies to the next search at once)."""
        return await self.embedders.for_search(self.postgres, collections)

    async def embed_query(self, query: str, space: EmbeddingSpace | None = None) -> np.ndarray:
        """The query embedding by the space's model (default: the configured one), cached
        (identical queries are common: retries, agents, pagination)."""
        embedder = space.embedder if space is not None else self.embedder
        embed = self._embed_with(embedder)
        if self.query_cache_size <= 0:
            return (await embed([query]))[0]
        key = (embedder.name, query)
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        vector = (await embed([query]))[0]
        self._cache[key] = vector
        if len(self._cache) > self.query_cache_size:
            self._cache.popitem(last=False)
        return vector

    def build_config(self, mode: str = "auto", *, limit: int | None = None, collections: Any = None,
                     filters: Any = None, **options: Any) -> SearchConfig:
        """Validate the request's options into a frozen config (clear errors for bad input)."""
        if collections is not None:
            if isinstance(collections, str):
                collections = [collections]
            if not isinstance(collections, (list, tuple)) or not all(isinstance(c, str) for c in collections):
                raise InvalidInput("collections must be a list of collection names")
            bad = [c for c in collections if not is_collection_name(c)]
            if bad:
                raise InvalidInput(f"invalid collection name {bad[0]!r}")
            collections = tuple(collections) or None
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100):
            raise InvalidInput(f"limit must be an integer from 1 to 100, got {limit!r}")
        spec = parse_filter(filters)
        compile_filter(spec)  # raises InvalidInput naming the problem
        if options.get("leg_timeout_s") is None and self.leg_timeout_s is not None:
            options["leg_timeout_s"] = self.leg_timeout_s
        return derive(mode, limit=limit, collections=collections, filters=spec, **options)

    async def search(self, query: str, mode: str = "auto", **options: Any) -> SearchResult:
        """Run one search: embed the query once, run the legs concurrently, fuse their rankings,
        refine the pool (rules, rerank, collapse, MMR, budget) and shape the hits. The result's
        :meth:`~graphrag.models.SearchResult.to_dict` is the REST response (docs/architecture.md)."""
        started = time.perf_counter()
        text = validate_query(query)
        rerank = bool(options.pop("rerank", False))
        shaping = extras.options(options.pop("highlight", False), options.pop("full_document_threshold", None),
                                 options.pop("token_limit", None))
        extended = options.pop("extended", False)
        if not isinstance(extended, bool):
            raise InvalidInput("extended must be true or false")
        expand = options.pop("expand", None)
        if expand is not None and not isinstance(expand, bool):
            raise InvalidInput("expand must be true or false")
        groups = check_groups(options.pop("synonyms", None))
        if mode == Mode.GLOBAL or (mode == Mode.AUTO and global_cue(text) is not None):
            # Community reports answer corpus-level questions; auto falls through when none apply.
            routed = await route_global(self, text, mode, options, started)
            if routed is not None:
                return routed
        config = self.build_config(mode, **options)
        if config.legs == (Leg.GRAPH,) and config.graph_leg == "never":
            raise InvalidInput("graph_leg 'never' leaves mode 'graph' nothing to run")
        # Synonyms given with the request ask for expansion, unless the request says expand: false.
        expanding = Leg.KEYWORD in config.legs and self.expander.wanted(
            expand if expand is not None else (True if groups else None), config.collections)
        expansion_task = (asyncio.ensure_future(self.expander.expand(self.postgres, self.neo4j, text,
                                                                     config.collections, groups))
                          if expanding else None)
        run = await self._run_legs(text, mode, config, extended, expansion_task)

        t1 = time.perf_counter()
        pool = await self._fuse(text, config, run, _done(expansion_task))
        guess = [c.chunk_id for c in pool[: config.limit]]
        # Entities of the likely results are looked up while the pool is refined (rows, rerank).
        entities_task = asyncio.ensure_future(self._entities_of(guess)) if guess else None
        pool = await self._refine(text, config, run, pool, rerank)
        run.timings["fusion_ms"] = round(_ms(t1) - run.timings["rows_ms"], 2)

        t2 = time.perf_counter()
        entities = await entities_task if entities_task is not None else {}
        unguessed = [c.chunk_id for c in pool if c.chunk_id not in set(guess)]
        if unguessed:  # filters, rules, MMR or a rerank changed which chunks made it
            entities.update(await self._entities_of(unguessed))
        run.timings["entities_ms"] = _ms(t2)
        graph = run.results.get(Leg.GRAPH)
        result = SearchResult(
            query=text, mode=mode, took_ms=_ms(started), legs=run.legs,
            hits=[self._shape(c, entities.get(c.chunk_id, []), config) for c in pool],
            graph_context=graph.context if graph is not None else {"entities": [], "relations": []},
            timings=run.timings)
        if extended:
            bests = {leg: max((score for _, score, _ in hits), default=0.0) for leg, hits in run.rankings.items()}
            extended_search.annotate(result.hits, [c.legs for c in pool], bests)
        if shaping["highlight"] or shaping["full_document_threshold"] is not None:
            t3 = time.perf_counter()
            await extras.apply(self.postgres, result, **shaping)
            run.timings["extras_ms"] = _ms(t3)
            result.took_ms = _ms(started)
        return result

    async def _run_legs(self, text: str, mode: str, config: SearchConfig, extended: bool,
                        expansion_task: asyncio.Future[Expansion] | None) -> _LegRun:
        """Run the config's legs (and the extended leg) concurrently, each with its own timeout; a
        leg that fails or times out is reported in ``legs`` while the others answer."""
        run_legs = (*config.legs, *((extended_search.LEG,) if extended else ()))
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        # The query is embedded while the legs that do not need it (keyword, graph) already run; a leg
        # with `after_embedding` (vector, extended) starts, with its timer and timeout, once it is there.
        # Searches whose legs do not embed (keyword, graph; without MMR) never embed: on 2 cores that
        # is half their CPU time.
        needs_embedding = config.mmr_lambda is not None or any(self.legs[leg].embeds for leg in run_legs)
        space_task = asyncio.ensure_future(self.space(config.collections) if needs_embedding else _none())

        async def embed() -> np.ndarray:
            return await self.embed_query(text, await space_task)

        embed_task = asyncio.ensure_future(embed() if needs_embedding else _none())
        if needs_embedding:
            embed_task.add_done_callback(lambda task: timings.setdefault("embed_ms", _ms(t0)))

        legs: dict[str, LegReport] = {}
        results: dict[str, LegResult] = {}
        failures: dict[str, BaseException] = {}
        # The graph leg's passage feedback is the keyword leg's top hits when that leg runs anyway.
        keyword_hits: asyncio.Future[list[tuple[str, float]]] | None = (
            asyncio.get_running_loop().create_future() if {Leg.KEYWORD, Leg.GRAPH} <= set(config.legs) else None)
        # The graph prior (cached; a Neo4j read when not) is fetched beside the other legs. The graph
        # leg waits for it: where it makes the leg's weight negligible, fusion would throw the leg's
        # work away, so (unless the request says otherwise) the leg is not run at all.
        fused_graph = Leg.GRAPH in config.legs and len(config.legs) > 1 and config.graph_leg != "never"
        prior_task = asyncio.ensure_future(self.graph_prior(config.collections)) if fused_graph else None

        # Both tasks give a value whenever a leg runs that reads them (needs_embedding).
        inputs = LegInputs(text, config, embed_task, space_task, expansion_task, keyword_hits)  # type: ignore[arg-type]

        async def run(leg: str) -> None:
            # A span per leg (when tracing is on); the store calls the leg makes nest under it.
            with tracing.span(f"search.leg.{leg}", {"graphrag.leg": leg, "graphrag.mode": mode}) as span:
                await run_leg(leg)
                report = legs[leg]
                tracing.annotate(span, {"graphrag.leg.status": report.status, "graphrag.leg.hits": report.hits,
                                        "graphrag.leg.took_ms": report.took_ms},
                                 error=report.error if report.failed else None)

        async def run_leg(leg: str) -> None:
            if leg == Leg.GRAPH and len(config.legs) > 1 and (reason := await graph_skip()) is not None:
                legs[leg] = LegReport("skipped", reason=reason)
                return
            t = time.perf_counter()
            try:
                if self.legs[leg].after_embedding:
                    await embed_task
                    t = time.perf_counter()
                result = await asyncio.wait_for(self.legs[leg].run(inputs), config.leg_timeout_s)
                results[leg] = result
                if leg == Leg.KEYWORD and keyword_hits is not None and not keyword_hits.done():
                    keyword_hits.set_result(passages(result, config.graph_prf))
                legs[leg] = LegReport("ok", _ms(t), len(result.hits), details=dict(result.info),
                                      confidence=round(result.confidence, 3) if result.confidence != 1.0 else None)
            except TimeoutError:
                legs[leg] = LegReport("timeout", _ms(t), error=f"no answer within {config.leg_timeout_s}s")
            except InvalidInput:
                raise
            except Exception as exc:  # noqa: BLE001 - a failing leg must not sink the others
                log.warning("%s leg failed: %s", leg, exc)
                failures[leg] = exc
                legs[leg] = LegReport("error", _ms(t), error=one_line(exc))
            finally:
                if leg == Leg.KEYWORD and keyword_hits is not None and not keyword_hits.done():
                    keyword_hits.set_result([])  # the graph leg walks without passage feedback

        async def graph_skip() -> str | None:
            """Why the fused search leaves the graph leg out, or None to run it."""
            if prior_task is None:
                return "graph_leg is 'never'"
            if config.graph_leg == "always":
                return None
            t_prior = time.perf_counter()
            prior = await prior_task
            timings["graph_prior_ms"] = _ms(t_prior)
            if prior < config.graph_skip_below:
                return (f"graph prior {prior:.3f} is below graph_skip_below {config.graph_skip_below}: "
                        "its fusion weight would be negligible")
            return None

        try:
            await asyncio.gather(*(run(leg) for leg in run_legs))
            embedding = await embed_task  # a failed embedding fails the search, as it always did
        except BaseException:
            if prior_task is not None:
                prior_task.cancel()
            raise
        finally:
            for task in (embed_task, space_task, *((expansion_task,) if expansion_task is not None else ())):
                if not task.done():
                    task.cancel()
                task.add_done_callback(lambda task: task.cancelled() or task.exception())
        events.search_finished(events.SearchEvent(mode, legs))  # metrics of the legs that ran
        prior = await prior_task if prior_task is not None else None
        down = [exc for exc in failures.values() if is_connection_error(exc)]
        if down and not results:
            # Every leg reads PostgreSQL: with it unreachable an empty 200 would be a silent lie.
            raise ServiceUnavailable(f"PostgreSQL is unavailable; retry shortly ({one_line(down[0], 120)})")
        for leg in LEGS:
            legs.setdefault(leg, LegReport("skipped", reason=f"not part of mode {str(mode)!r}"))
        # The legs finish in a different order each time: a fixed order keeps answers repeatable (the
        # legs of each hit, and the fused sums, follow the order of the rankings).
        legs = {**{leg: legs[leg] for leg in LEGS if leg in legs}, **legs}
        results = {leg: results[leg] for leg in run_legs if leg in results}  # the extended leg included
        if prior is not None and (legs[Leg.GRAPH].status == "skipped" or Leg.GRAPH in results):
            legs[Leg.GRAPH].prior = round(prior, 3)
        space = space_task.result() if space_task.done() and not space_task.cancelled() else None
        if space is not None and space.note and Leg.VECTOR in results:
            legs[Leg.VECTOR].note = space.note
        return _LegRun(legs, results, embedding, space, prior, timings)

    async def _fuse(self, text: str, config: SearchConfig, run: _LegRun,
                    expansion: Expansion | None) -> list[fusion.Candidate]:
        """The legs' rankings fused into one candidate pool (the graph prior and each leg's confidence
        weigh them); score fusion first completes every candidate's keyword and vector scores."""
        results = run.results
        run.rankings = rankings = {leg: r.hits for leg, r in results.items()}
        weights = {leg: config.weights.get(leg, 1.0) * results[leg].confidence for leg in results}
        prior = run.prior if run.prior is not None else 1.0
        if Leg.GRAPH in weights:
            weights[Leg.GRAPH] *= prior
        named = results[Leg.GRAPH].named if Leg.GRAPH in results else []
        if named and config.graph_named_weight > 0:
            # The graph leg's second ranking (documents named after what the query names) fuses
            # as its own list, so that it adds to the walk's evidence instead of replacing it.
            rankings[NAMED] = named
            weights[NAMED] = config.graph_named_weight * prior
            run.legs[Leg.GRAPH].named = len(named)
        run.rows = {cid: row for r in results.values() for cid, row in r.rows.items()}
        run.t_rows = time.perf_counter()
        if config.fusion == "convex" and len(rankings) > 1:
            # Scores only: the rows (text, metadata, vectors) are read for the pool that survives fusion.
            union = list(dict.fromkeys(cid for hits in rankings.values() for cid, _, _ in hits))
            completed = await self._completion(text, union, results, config, expansion, run)
            candidates = fusion.convex(rankings, weights, completed)
        else:
            candidates = fusion.rrf(rankings, weights, config.rrf_k)
        if len(config.legs) == 1 and len(rankings) == 1:
            # One leg: its own score (cosine similarity, BM25, graph relevance) says more than a fused value.
            for cand in candidates:
                cand.score = cand.legs[config.legs[0]]["score"]
        return candidates[: max(config.limit * 4, 40)]

    async def _refine(self, text: str, config: SearchConfig, run: _LegRun, pool: list[fusion.Candidate],
                      rerank: bool) -> list[fusion.Candidate]:
        """The pool's rows, then the request's boosts, rules, rerank, collapse, MMR, limit and budget."""
        rows = run.rows
        missing = [c.chunk_id for c in pool if c.chunk_id not in rows]
        if missing:  # rows the graph leg already fetched (to apply filters) are not fetched again
            rows.update(await fetch_rows(self.postgres, missing, config))
        run.timings["rows_ms"] = _ms(run.t_rows)
        pool = [c for c in pool if c.chunk_id in rows]
        for cand in pool:
            cand.row = rows[cand.chunk_id]
            # MMR compares vectors with each other and the query: only those of the query's model.
            same_model = run.space is None or cand.row.get("embedding_model") == run.space.name
            cand.embedding = _vector(cand.row) if same_model else None
        if config.boost_mode:
            terms = [t.lower() for t in re.findall(r"\w{3,}", text)]
            pool = fusion.boost(pool, config.boost_factor, terms)
        if config.rules:
            pool = fusion.apply_rules(pool, config.rules)
        if rerank:
            pool = await self._rerank(text, pool)
        if config.collapse:
            pool = fusion.collapse_documents(pool)
        if config.mmr_lambda is not None and run.embedding is not None:  # MMR always embeds the query
            pool = fusion.mmr(pool, run.embedding, config.mmr_lambda, config.limit)
        pool = pool[: config.limit]
        if config.token_budget is not None:
            pool = fusion.within_budget(pool, config.token_budget)
        return pool

    async def graph_prior(self, collections: tuple[str, ...] | None) -> float:
        """How much fusion should trust the graph leg on these collections, from 0.05 to 1.

        Graph traversal helps where documents are about entities and link to each other through
        them (encyclopedic pages, wikis, CRM records: the multi-hop questions of HotpotQA); on
        collections whose documents are not named after entities (papers, reports: SciFact) the
        walk mostly adds noise to the text legs. The prior is the share of (a sample of) documents
        named after an entity they mention, scaled so that ``graph_prior_full_share`` gives 1. It is
        measured without labels, per collection set, and cached for ``graph_prior_ttl_s``.
        """
        now = time.monotonic()
        cached = self._graph_priors.get(collections)
        if cached is not None and cached[1] > now:
            return cached[0]
        try:
            row = await asyncio.wait_for(self.neo4j.q.search.entity_named_documents(
                list(collections) if collections else None, sample=2000), timeout=1.0)
        except Exception as exc:  # noqa: BLE001 - without the measure the graph keeps its full weight
            log.info("graph prior unavailable: %s", one_line(exc))
            return 1.0
        documents, named = int(row["documents"]), int(row["named"])
        prior = 1.0 if not documents else max(0.05, min(1.0, named / documents / self.graph_prior_full_share))
        if len(self._graph_priors) >= 1024:  # one entry per collection set seen: keep it bounded
            self._graph_priors.clear()
        self._graph_priors[collections] = (prior, now + self.graph_prior_ttl_s)
        return prior

    async def warm_graph(self) -> None:
        """Get the graph leg's statement planned in Neo4j before the first graph search (which would
        otherwise spend seconds of its leg timeout on it); a failure is logged, the search reports it."""
        try:
            await plan_graph_leg(self.neo4j, self.build_config("graph"))
        except Exception as exc:  # noqa: BLE001 - the first graph search then plans it itself
            log.info("graph statement not planned in advance: %s", one_line(exc))

    async def chunk_count(self, collections: tuple[str, ...] | None) -> int:
        """Chunks in these collections (the graph leg's IDF), cached like the graph prior."""
        now = time.monotonic()
        cached = self._chunk_counts.get(collections)
        if cached is not None and cached[1] > now:
            return cached[0]
        count = max(await self.postgres.q.search.chunk_count(list(collections) if collections else None), 1)
        if len(self._chunk_counts) >= 1024:
            self._chunk_counts.clear()
        self._chunk_counts[collections] = (count, now + self.graph_prior_ttl_s)
        return count

    async def _keyword_leg(self, inputs: LegInputs) -> LegResult:
        """BM25, over the query's expansions too when the search expands it."""
        text, config = inputs.text, inputs.config
        if inputs.expansion is None:
            return await keyword_leg(self.postgres, text, config)
        expansion = await asyncio.shield(inputs.expansion)
        result = (await expanded_keyword_leg(self.postgres, text, expansion, self.expander.weight, config)
                  if expansion.terms else await keyword_leg(self.postgres, text, config))
        result.info = expansion.report()
        return result

    async def _vector_leg(self, inputs: LegInputs) -> LegResult:
        space = await asyncio.shield(inputs.space)
        embedding = await asyncio.shield(inputs.embedding)
        return await vector_leg(self.postgres, embedding, inputs.config, space.name, space.dim)

    async def _extended_leg(self, inputs: LegInputs) -> LegResult:
        space = await asyncio.shield(inputs.space)
        embedding = await asyncio.shield(inputs.embedding)
        return await extended_search.extended_leg(self.postgres, inputs.text, embedding, inputs.config, space.name,
                                                  space.dim)

    async def _graph_leg(self, inputs: LegInputs) -> LegResult:
        config = inputs.config
        feedback: Awaitable[list[tuple[str, float]]] | list[tuple[str, float]] = []
        if config.graph_prf:
            feedback = inputs.keyword_hits if inputs.keyword_hits is not None else self._feedback(inputs.text, config)
        return await graph_leg(self.postgres, self.neo4j, inputs.text, config,
                               total_chunks=self.chunk_count(config.collections), feedback=feedback)

    async def _feedback(self, text: str, config: SearchConfig) -> list[tuple[str, float]]:
        """The graph leg's passage feedback when no keyword leg runs beside it: the top BM25 passages."""
        found = await keyword_leg(self.postgres, text, config.model_copy(update={"overfetch": config.graph_prf}))
        return passages(found, config.graph_prf)

    async def _completion(self, text: str, union: list[str], results: dict[str, LegResult], config: SearchConfig,
                          expansion: Expansion | None, run: _LegRun) -> dict[str, dict[str, float]]:
        """Score fusion's completions: the BM25 scores (with the query's expanded terms when the keyword
        leg used them) and the query similarities (computed in PostgreSQL, for chunks of the query's
        model) of the candidates the keyword and the vector leg did not return. One statement when both
        are needed (the usual case). Without the BM25 scores fusion counts what the legs returned."""
        def others(leg: str) -> list[str]:
            found = {h[0] for h in results[leg].hits}
            return [c for c in union if c not in found]

        keyword_ids = others(Leg.KEYWORD) if Leg.KEYWORD in results else []
        embedding, space = run.embedding, run.space
        vector_ids = others(Leg.VECTOR) if Leg.VECTOR in results and embedding is not None and space is not None \
            else []
        texts, weights = weighted_strings(text, expansion if expansion is not None and expansion.terms else None,
                                          self.expander.weight)
        bm25: dict[str, float] = {}
        cosine: dict[str, float] = {}
        try:
            if keyword_ids and vector_ids:
                assert embedding is not None and space is not None
                bm25, cosine = await asyncio.wait_for(
                    completion_scores(self.postgres, texts, weights, keyword_ids, embedding, vector_ids, space.name,
                                      config), config.leg_timeout_s)
            elif keyword_ids:
                bm25 = await asyncio.wait_for(
                    keyword_scores(self.postgres, text, keyword_ids, config, texts=texts, weights=weights),
                    config.leg_timeout_s)
        except Exception as exc:  # noqa: BLE001 - without them, fusion counts what the legs returned
            log.warning("scores of other legs' candidates unavailable: %s", one_line(exc))
            return {}
        if vector_ids and not keyword_ids:
            assert embedding is not None and space is not None
            cosine = await similarities(self.postgres, embedding, vector_ids, space.name)
        return {"keyword": bm25,
                "vector": {cid: s for cid, s in cosine.items() if config.threshold is None or s >= config.threshold}}

    async def _entities_of(self, chunk_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
        try:
            found = await asyncio.wait_for(self.neo4j.q.search.chunk_entities(chunk_ids), timeout=2.0)
        except Exception as exc:  # noqa: BLE001 - entities decorate results; their absence is not fatal
            log.info("entities for results unavailable: %s", exc)
            return {}
        return {cid: [{"id": e["id"], "name": e["name"], "label": e["label"]} for e in entities]
                for cid, entities in found.items()}

    async def _rerank(self, query: str, pool: list[fusion.Candidate]) -> list[fusion.Candidate]:
        if not self.reranker_path:
            raise InvalidInput("no reranker configured: set GRAPHRAG_RERANKER_MODEL to a local cross-encoder path")
        if self._reranker is None:
            from sentence_transformers import CrossEncoder

            device = resolve_device(self.reranker_device)
            self._reranker = await asyncio.to_thread(CrossEncoder, self.reranker_path, device=device)
        scores = await asyncio.to_thread(self._reranker.predict, [(query, c.row["content"]) for c in pool])
        for cand, score in zip(pool, scores, strict=True):
            cand.legs.setdefault("rerank", {})["score"] = float(score)
            cand.score = float(score)
        return sorted(pool, key=lambda c: -c.score)

    @staticmethod
    def _shape(cand: fusion.Candidate, entities: list[dict[str, Any]], config: SearchConfig) -> Hit:
        row = cand.row
        legs = {leg: {k: v for k, v in info.items() if k in ("rank", "score", "entities", "matched", "title")}
                for leg, info in cand.legs.items()}
        return Hit(
            chunk_id=cand.chunk_id,
            document_id=str(row["document_id"]),
            collection=row["collection"],
            source=row["source"],
            title=row["title"],
            heading_path=list(row["heading_path"] or []),
            content="" if config.metadata_only else row["content"],
            score=round(cand.score, 6),
            legs=legs,
            entities=entities,
            metadata={**(row.get("document_metadata") or {}), **(row.get("metadata") or {})},
            chunk_index=row["chunk_index"],
            char_start=row["char_start"],
            char_end=row["char_end"],
        )


@dataclass
class _LegRun:
    """One search's legs after they ran, and what fusion and refinement add to it."""

    legs: dict[str, LegReport]
    results: dict[str, LegResult]
    embedding: np.ndarray | None
    space: EmbeddingSpace | None
    #: The collections' graph prior, when the search fused the graph leg (else None).
    prior: float | None
    timings: dict[str, float]
    rankings: dict[str, list[tuple[str, float, dict[str, Any]]]] = field(default_factory=dict)
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    t_rows: float = 0.0


def _vector(row: dict[str, Any]) -> np.ndarray | None:
    emb = row.get("embedding")
    if emb is None:
        return None
    if hasattr(emb, "to_numpy"):
        emb = emb.to_numpy()
    return np.asarray(emb, dtype=np.float32)


async def _none() -> None:
    return None


def _done(task: asyncio.Future[Any] | None) -> Any:
    """The task's result when it finished well, else None."""
    if task is None or not task.done() or task.cancelled() or task.exception() is not None:
        return None
    return task.result()


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)

