"""The answer model (``GRAPHRAG_ANSWER_MODEL``), the prompt, and the built-in ``test`` model.

``GRAPHRAG_ANSWER_MODEL`` takes any pydantic-ai model string (``openai:gpt-4o-mini``,
``anthropic:claude-...`` once its package is installed), with credentials from the provider's usual
variables (``OPENAI_API_KEY``...). With ``GRAPHRAG_ANSWER_BASE_URL`` set, the model is served by an
OpenAI-compatible Chat Completions endpoint (Ollama, vLLM, LM Studio): ``openai:llama3.2`` or just
``llama3.2``, with ``GRAPHRAG_ANSWER_API_KEY`` when the endpoint wants one.

``test`` is pydantic-ai's ``TestModel`` answering extractively: for each of the top hits (up to
three) it writes the hit's sentence that shares the most words with the question, followed by that
hit's ``[n]`` (hits sharing no word with the question are left out, unless none does). It calls
nothing outside the process, so demos and checks run end to end without credentials, and its
answers pass the citation check by construction.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphrag.answer.citations import CITE_RE, NO_ANSWER, content_words, split_sentences
from graphrag.errors import ConfigurationError, NotConfigured

if TYPE_CHECKING:
    from pydantic_ai.models import Model

    from graphrag.config import Settings

TEST_MODEL = "test"
CONTEXT_CHARS = 2000  # per hit in the prompt: chunks are shorter; this bounds an oversized one
TEST_SENTENCES = 3  # hits the test model quotes from

INSTRUCTIONS = f"""\
You answer a question using only the numbered sources you are given.
- Cite the source of every sentence that states a fact with its number in square brackets, e.g. [2],
  or [1][3] when it rests on several. Cite only numbers that are listed.
- Say only what the cited sources say; never add facts from memory.
- If the sources do not answer the question, reply exactly: {NO_ANSWER}
- Be concise: a few sentences, no preamble."""

NOT_CONFIGURED = ("no answer model is configured: set GRAPHRAG_ANSWER_MODEL to a pydantic-ai model "
                  "(e.g. openai:gpt-4o-mini; with GRAPHRAG_ANSWER_BASE_URL an OpenAI-compatible endpoint such "
                  "as Ollama), or to 'test' for the built-in extractive test model")


@dataclass(frozen=True)
class AnswerModel:
    """A resolved answer model: what pydantic-ai runs, and the name the response reports."""

    model: Model
    name: str


def require_model(settings: Settings) -> str:
    """The configured model spec, or :class:`NotConfigured` (501) naming the setting."""
    spec = (settings.answer_model or "").strip()
    if not spec:
        raise NotConfigured(NOT_CONFIGURED)
    return spec


def resolve(settings: Settings, question: str, hit_texts: Sequence[str]) -> AnswerModel:
    """The model to answer ``question`` over ``hit_texts`` with (the test model is built per answer,
    from the hits; any other is built once per process and setting)."""
    spec = require_model(settings)
    if spec == TEST_MODEL:
        from pydantic_ai.models.test import TestModel

        return AnswerModel(TestModel(custom_output_text=extractive_answer(question, hit_texts)), TEST_MODEL)
    key = settings.answer_api_key.get_secret_value() if settings.answer_api_key else None
    return _external(spec, settings.answer_base_url, key)


@functools.lru_cache(maxsize=8)
def _external(spec: str, base_url: str | None, api_key: str | None) -> AnswerModel:
    # Cached: a provider holds an HTTP client, which is meant to be shared across requests.
    from pydantic_ai.exceptions import UserError as PydanticAIUserError

    try:
        if base_url:
            from pydantic_ai.models.openai import OpenAIChatModel
            from pydantic_ai.providers.openai import OpenAIProvider

            name = spec.removeprefix("openai:")
            model: Model = OpenAIChatModel(name, provider=OpenAIProvider(base_url=base_url, api_key=api_key))
            return AnswerModel(model, f"openai:{name}")
        if api_key and spec.startswith("openai:"):
            from pydantic_ai.models.openai import OpenAIChatModel
            from pydantic_ai.providers.openai import OpenAIProvider

            name = spec.removeprefix("openai:")
            return AnswerModel(OpenAIChatModel(name, provider=OpenAIProvider(api_key=api_key)), spec)
        from pydantic_ai.models import infer_model

        return AnswerModel(infer_model(spec), spec)
    except ImportError as exc:
        raise ConfigurationError(f"GRAPHRAG_ANSWER_MODEL {spec!r} needs a package that is not installed: "
                                 f"{_one_line(exc)}") from None
    except (PydanticAIUserError, ValueError) as exc:
        raise ConfigurationError(f"GRAPHRAG_ANSWER_MODEL {spec!r} cannot be used: {_one_line(exc)}") from None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


def prompt(question: str, hits: Sequence[dict[str, Any]]) -> str:
    """The user prompt: the hits numbered ``[1]..[n]`` (title, section, source, text), then the question."""
    parts = ["Sources:"]
    for n, hit in enumerate(hits, 1):
        where = " > ".join([hit.get("title") or "", *hit.get("heading_path", [])]).strip(" >")
        head = f"[{n}] {where} ({hit.get('source', '')})" if where else f"[{n}] ({hit.get('source', '')})"
        text = hit.get("content") or ""
        parts.append(f"{head}\n{text[:CONTEXT_CHARS]}")
    parts.append(f"Question: {question}")
    return "\n\n".join(parts)


_HEADING_RE = re.compile(r"^\s*#{1,6}\s.*$", re.MULTILINE)


def extractive_answer(question: str, hit_texts: Sequence[str], max_hits: int = TEST_SENTENCES) -> str:
    """For each of the top ``max_hits`` hits, the sentence sharing most words with the question (the first on
    a tie) followed by the hit's ``[n]``; hits sharing no word with the question are left out, unless none
    shares any (then the top hit's first sentence). :data:`NO_ANSWER` without hits."""
    asked = set(content_words(question))
    picked: list[tuple[int, str, int]] = []  # (n, sentence, words shared with the question)
    for n, text in enumerate(hit_texts[:max_hits], 1):
        body = CITE_RE.sub("", _HEADING_RE.sub("", text))
        sentences = [" ".join(s.text.split()) for s in split_sentences(body)]
        sentences = [s for s in sentences if content_words(s)]
        if sentences:
            scored = [(len(asked & set(content_words(s))), -i, s) for i, s in enumerate(sentences)]
            shared, _, best = max(scored)
            picked.append((n, best, shared))
    if not picked:
        return NO_ANSWER
    chosen = [p for p in picked if p[2] > 0] or picked[:1]
    out = []
    for n, sentence, _ in chosen:
        if sentence[-1:] in ".!?":
            out.append(f"{sentence[:-1]} [{n}]{sentence[-1]}")
        else:
            out.append(f"{sentence} [{n}].")
    return " ".join(out)
