"""Grounded answers: retrieve through the search router, answer from the numbered hits with the
configured model, check every sentence's citation.

One path for every front end (``POST /answer``, ``graphrag ask``, the ``answer`` agent tool):
:func:`prepare` checks the model setting (501 when unset, before any work) and runs the search;
:func:`complete` answers in one piece, :func:`stream` answers as events (``hits``, then ``delta``
text pieces, then ``done`` with citations, the check and usage; ``error`` when the model fails on
the way). With no hits, the model is not asked: the answer is :data:`NO_ANSWER`.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from graphrag.answer.citations import NO_ANSWER, CheckReport, check_answer, resolved_citations
from graphrag.answer.model import INSTRUCTIONS, TEST_MODEL, AnswerModel, prompt, require_model, resolve
from graphrag.errors import ConfigurationError, GraphRAGError, ServiceUnavailable, one_line
from graphrag.models import SearchResult
from graphrag.runtime import Runtime

log = logging.getLogger(__name__)

DEFAULT_LIMIT = 5  # hits in the context: enough to answer from, few enough to cite precisely
MAX_LIMIT = 20

EventName = Literal["hits", "delta", "done", "error"]


@dataclass(frozen=True)
class AnswerOptions:
    """How to retrieve and what to do with unsupported sentences (``drop`` cuts them out of the answer;
    they are always listed)."""

    mode: str = "auto"
    limit: int = DEFAULT_LIMIT
    collections: Sequence[str] | None = None
    filters: dict[str, Any] | None = None
    graph_leg: str = "auto"
    drop_unsupported: bool = False


@dataclass
class Prepared:
    """A question with its retrieved hits, ready to be answered."""

    question: str
    options: AnswerOptions
    search: SearchResult
    model: AnswerModel | None  # None without hits: nothing to ask a model about
    started: float = field(default_factory=time.perf_counter)
    #: The search's hits in their REST shape (the answer response carries them).
    hits: list[dict[str, Any]] = field(default_factory=list)

    @property
    def legs(self) -> dict[str, dict[str, Any]]:
        """The search's legs in their REST shape."""
        return {str(leg): report.to_dict() for leg, report in self.search.legs.items()}


async def prepare(rt: Runtime, question: str, options: AnswerOptions, *,
                  model: AnswerModel | None = None) -> Prepared:
    """Check the model setting (:class:`~graphrag.errors.NotConfigured` when unset), then search.

    ``collections`` must already be the caller's scope (and named ones checked to exist). ``model``
    replaces the configured one (tests, embedding applications).
    """
    started = time.perf_counter()
    if model is None:
        spec = require_model(rt.settings)
        if spec != TEST_MODEL:
            resolve(rt.settings, question, ())  # a model that cannot be built fails before the search
    router = await rt.router(options.mode)
    result = await router.search(question, mode=options.mode, limit=options.limit,
                                 collections=list(options.collections) if options.collections else None,
                                 filters=options.filters, graph_leg=options.graph_leg)
    if result.hits and model is None:
        model = resolve(rt.settings, question, [h.content for h in result.hits])
    return Prepared(question=result.query, options=options, search=result, model=model, started=started,
                    hits=[h.to_dict() for h in result.hits])


async def complete(rt: Runtime, prepared: Prepared) -> dict[str, Any]:
    """The whole answer at once: the REST JSON response (docs/architecture.md, ``POST /answer``)."""
    if prepared.model is None:
        return _finish(rt, prepared, NO_ANSWER, None)
    if prepared.search.mode == "global":
        return _finish(rt, prepared, await _global_text(prepared), None)
    agent = _agent(prepared.model)
    try:
        result = await agent.run(prompt(prepared.question, prepared.hits),
                                 model_settings={"timeout": rt.settings.answer_timeout_s})
    except Exception as exc:  # noqa: BLE001 - mapped to one clear service error
        raise _model_error(prepared.model, exc) from exc
    return _finish(rt, prepared, result.output, result.usage)


async def stream(rt: Runtime, prepared: Prepared) -> AsyncIterator[tuple[EventName, dict[str, Any]]]:
    """The answer as events: ``hits`` (the search), ``delta`` pieces of text (joined, they are the
    model's answer), then ``done`` (the :func:`complete` response without ``hits``); a model failure
    after the first event is an ``error`` event with problem details, and ends the stream."""
    yield "hits", {"query": prepared.question, "hits": prepared.hits, "legs": prepared.legs}
    if prepared.model is None:
        yield "delta", {"text": NO_ANSWER}
        done = _finish(rt, prepared, NO_ANSWER, None)
    elif prepared.search.mode == "global":
        try:
            text = await _global_text(prepared)
        except GraphRAGError as error:
            yield "error", {"type": "about:blank", "title": error.title, "status": error.status_code,
                            "detail": error.message}
            return
        yield "delta", {"text": text}
        done = _finish(rt, prepared, text, None)
    else:
        pieces: list[str] = []
        try:
            async with _agent(prepared.model).run_stream(
                    prompt(prepared.question, prepared.hits),
                    model_settings={"timeout": rt.settings.answer_timeout_s}) as result:
                async for delta in result.stream_text(delta=True, debounce_by=None):
                    if delta:
                        pieces.append(delta)
                        yield "delta", {"text": delta}
                usage = result.usage
        except Exception as exc:  # noqa: BLE001 - the stream has started: report in band
            problem = _model_error(prepared.model, exc)
            yield "error", {"type": "about:blank", "title": problem.title, "status": problem.status_code,
                            "detail": problem.message}
            return
        done = _finish(rt, prepared, "".join(pieces), usage)
    done.pop("hits", None)
    yield "done", done


async def _global_text(prepared: Prepared) -> str:
    """A corpus-level question (the search ranked community reports): map-reduce the reports with the
    model (the `test` model: the extractive answer), citing the reports as ``[n]`` like any hit."""
    from graphrag.communities.answer import global_answer

    assert prepared.model is not None
    model = None if prepared.model.name == TEST_MODEL else prepared.model.model
    try:
        result = await global_answer(model, prepared.question, prepared.hits)
    except Exception as exc:  # noqa: BLE001 - mapped to one clear service error
        raise _model_error(prepared.model, exc) from exc
    ids = [(hit.get("community") or {}).get("id") for hit in prepared.hits]
    if result.generated:
        by_label: dict[str, Any] = {p.label: p.community_id for p in result.partials}
    else:  # the extractive answer labels the reports in their order
        by_label = {f"C{n}": cid for n, cid in enumerate(ids, 1)}

    def renumber(match: re.Match[str]) -> str:
        cid = by_label.get(match.group(1))
        return f"[{ids.index(cid) + 1}]" if cid in ids else match.group(0)

    return re.sub(r"\[(C\d+)\]", renumber, result.answer)


def _agent(model: AnswerModel) -> Any:
    from pydantic_ai import Agent

    return Agent(model.model, instructions=INSTRUCTIONS, output_type=str, name="graphrag-answer")


def _finish(rt: Runtime, prepared: Prepared, text: str, usage: Any) -> dict[str, Any]:
    hits = prepared.hits
    report = check_answer(text, [h["content"] for h in hits], threshold=rt.settings.answer_support_threshold,
                          drop=prepared.options.drop_unsupported)
    took = round((time.perf_counter() - prepared.started) * 1000, 1)
    # The question stays out of the log: it is the user's content.
    log.info("answered from %d hits with %s in %.0f ms; %d unsupported sentence(s)%s", len(hits),
             prepared.model.name if prepared.model else "no model (no hits)", took, len(report.unsupported),
             ", dropped" if report.dropped else "")
    return {
        "query": prepared.question,
        "answer": report.answer,
        "hits": hits,
        "citations": citations(report.answer, hits),
        "unsupported": unsupported(report),
        "dropped": report.dropped,
        "model": prepared.model.name if prepared.model else None,
        "usage": usage_dict(usage),
        "took_ms": took,
        "legs": prepared.legs,
    }


def citations(answer: str, hits: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The hits ``answer`` cites, once each, in the order first cited: ``n`` and the hit's identity."""
    out = []
    for n in resolved_citations(answer, len(hits)):
        hit = hits[n - 1]
        out.append({"n": n, "chunk_id": hit["chunk_id"], "document_id": hit["document_id"],
                    "source": hit["source"], "title": hit["title"]})
    return out


def unsupported(report: CheckReport) -> list[dict[str, Any]]:
    """The flagged sentences: text, the numbers cited, why, and the lexical support found."""
    return [{"sentence": c.sentence.text, "cited": list(c.sentence.cited), "reason": c.reason,
             "support": round(c.support, 3)} for c in report.unsupported]


def usage_dict(usage: Any) -> dict[str, int]:
    """pydantic-ai's token usage of the run (zeros when no model was asked)."""
    if usage is None:
        return {"requests": 0, "input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    return {"requests": int(usage.requests), "input_tokens": int(usage.input_tokens),
            "output_tokens": int(usage.output_tokens), "total_tokens": int(usage.total_tokens)}


def _model_error(model: AnswerModel, exc: BaseException) -> GraphRAGError:
    """A failure of the answer model as one service error (503) that names the model, never a key."""
    if isinstance(exc, GraphRAGError):
        return exc
    status = getattr(exc, "status_code", None)
    what = f"HTTP {status}" if isinstance(status, int) else f"{type(exc).__name__}: {one_line(exc, 200)}"
    log.warning("answer model %s failed: %s", model.name, what)
    if status in (401, 403, 404):
        # Retrying will not help: the key or the model name is wrong.
        return ConfigurationError(f"the answer model {model.name} was refused ({what}): check GRAPHRAG_ANSWER_MODEL "
                                  "and the provider's API key")
    return ServiceUnavailable(f"the answer model {model.name} failed ({what}); retry shortly")
