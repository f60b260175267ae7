"""The citation check, the prompt and the answer-model setting: pure logic, no stores, no model calls."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from graphrag.answer.citations import (
    NO_ANSWER,
    check_answer,
    check_sentence,
    cited_numbers,
    content_words,
    resolved_citations,
    split_sentences,
    stem,
)
from graphrag.answer.model import TEST_MODEL, extractive_answer, prompt, require_model, resolve
from graphrag.config import Settings
from graphrag.errors import ConfigurationError, NotConfigured

HITS = [
    "# Apex Logistics Inc.\n\nApex Logistics Inc. was founded by Sarah Johnson in Oslo in 2011. "
    "The company builds warehouse robots.",
    "# Sarah Johnson\n\nSarah Johnson grew up in Bergen, Norway, where she studied mechanical engineering.",
    "# Rivers\n\nThe Danube flows through Vienna, Budapest and Belgrade.",
]


def test_sentences_keep_their_citations_and_spans() -> None:
    text = ("Apex Logistics Inc. was founded by Sarah Johnson. [1] She studied in Bergen [2][1].\n"
            "- Dr. Johnson builds robots [1, 3].\n1. The J. R. R. Tolkien estate sold 1.5 million copies.")
    sentences = split_sentences(text)
    assert [s.text for s in sentences] == [
        "Apex Logistics Inc. was founded by Sarah Johnson. [1]",  # a citation after the full stop stays with it
        "She studied in Bergen [2][1].",
        "- Dr. Johnson builds robots [1, 3].",
        "1. The J. R. R. Tolkien estate sold 1.5 million copies.",
    ]
    assert [s.cited for s in sentences] == [(1,), (2, 1), (1, 3), ()]
    assert all(text[s.start:s.end] == s.text for s in sentences)
    assert cited_numbers("a [2] b [1; 4] c [2]") == [2, 1, 4, 2]

    wrapped = split_sentences(
        "## Summary\n**Answer:**\nApex was founded by\nSarah Johnson [1].\n\nIt builds robots [1]")
    assert [s.text for s in wrapped] == ["## Summary", "**Answer:**", "Apex was founded by\nSarah Johnson [1].",
                                         "It builds robots [1]"]
    assert check_answer("## Summary\n**Answer:**\nApex was founded by\nSarah Johnson [1].", HITS).unsupported == []


def test_content_words_are_stemmed_and_skip_stop_words_and_markers() -> None:
    assert content_words("According to [1], the companies were founded in 1,000 places.") == [
        "company", "found", "1000", "place"]
    assert stem("boxes") == "box" and stem("studies") == stem("studied") == "study" and stem("Johnson's") == "johnson"
    assert stem("status") == "status" and stem("building") == "build"


def test_a_sentence_supported_by_its_hit_passes_a_wrong_hit_fails() -> None:
    good = split_sentences("Sarah Johnson founded Apex Logistics in Oslo [1].")[0]
    check = check_sentence(good, HITS)
    assert check.supported and check.support == 1.0 and check.reason is None
    wrong = split_sentences("Sarah Johnson founded Apex Logistics in Oslo [3].")[0]
    check = check_sentence(wrong, HITS)
    assert not check.supported and check.reason == "not_supported" and check.support < 0.5
    assert "apex" in check.missing


def test_a_number_the_cited_hit_lacks_makes_a_sentence_unsupported() -> None:
    assert check_sentence(split_sentences("Apex Logistics was founded in 2011 [1].")[0], HITS).supported
    check = check_sentence(split_sentences("Apex Logistics was founded in 2012 in Oslo by Sarah Johnson [1].")[0], HITS)
    assert not check.supported and check.support > 0.8 and check.missing == ("2012",)


def test_unknown_numbers_and_uncited_claims_are_flagged_and_the_no_answer_is_not() -> None:
    unknown = check_sentence(split_sentences("Apex builds warehouse robots [7].")[0], HITS)
    assert not unknown.supported and unknown.reason == "unknown_citation" and unknown.unknown == (7,)
    beside = check_sentence(split_sentences("Apex builds warehouse robots [1][7].")[0], HITS)
    assert not beside.supported and beside.reason == "unknown_citation" and beside.unknown == (7,)
    uncited = check_sentence(split_sentences("Apex builds warehouse robots.")[0], HITS)
    assert not uncited.supported and uncited.reason == "uncited"
    report = check_answer(f"Here is what the sources say:\n{NO_ANSWER}", HITS)
    assert report.unsupported == []


def test_threshold_is_the_share_of_content_words() -> None:
    # 3 of its 6 content words (sarah, johnson, robot) are in hit 1: supported up to a threshold of 0.5.
    sentence = split_sentences("Sarah Johnson enjoys painting robots quietly [1].")[0]
    share = check_sentence(sentence, HITS, threshold=0.0).support
    assert 0.4 < share < 0.8
    assert check_sentence(sentence, HITS, threshold=share).supported
    assert not check_sentence(sentence, HITS, threshold=share + 0.01).supported


def test_drop_cuts_flagged_sentences_and_never_leaves_an_empty_answer() -> None:
    answer = "Apex was founded by Sarah Johnson [1]. The Danube flows through Oslo [1].\nShe studied engineering [2]."
    flagged = check_answer(answer, HITS)
    assert flagged.answer == answer and not flagged.dropped
    assert [c.sentence.text for c in flagged.unsupported] == ["The Danube flows through Oslo [1]."]
    dropped = check_answer(answer, HITS, drop=True)
    assert dropped.dropped and dropped.answer == "Apex was founded by Sarah Johnson [1].\nShe studied engineering [2]."
    assert check_answer("The Danube flows through Oslo [1].", HITS, drop=True).answer == NO_ANSWER


def test_resolved_citations_are_hits_once_each_in_first_cited_order() -> None:
    assert resolved_citations("b [3] a [1][3] c [9] d [0] [1, 2]", 3) == [3, 1, 2]


def test_the_test_model_quotes_the_hits_and_passes_the_check() -> None:
    answer = extractive_answer("Who founded Apex Logistics?", HITS)
    assert answer == "Apex Logistics Inc. was founded by Sarah Johnson in Oslo in 2011 [1]."
    text = extractive_answer("Where did Sarah Johnson study, and what does Apex build?", HITS)
    assert "[1]" in text and "[2]" in text and "[3]" not in text  # the rivers hit shares no word
    assert check_answer(text, HITS).unsupported == []
    assert extractive_answer("anything", []) == NO_ANSWER


def test_prompt_numbers_the_hits_in_order() -> None:
    hits = [{"title": "Apex", "heading_path": ["History"], "source": "apex.md", "content": "Founded in Oslo."},
            {"title": "Rivers", "heading_path": [], "source": "rivers.md", "content": "The Danube."}]
    text = prompt("Who founded Apex?", hits)
    assert text.index("[1] Apex > History (apex.md)\nFounded in Oslo.") < text.index("[2] Rivers (rivers.md)")
    assert text.endswith("Question: Who founded Apex?")


def test_answer_model_setting() -> None:
    with pytest.raises(NotConfigured, match="GRAPHRAG_ANSWER_MODEL") as caught:
        require_model(Settings(answer_model=None))
    assert caught.value.status_code == 501
    test = resolve(Settings(answer_model=TEST_MODEL), "Who founded Apex Logistics?", HITS)
    assert test.name == "test" and type(test.model).__name__ == "TestModel"
    # An OpenAI-compatible endpoint (e.g. Ollama): built without any request being made.
    local = resolve(Settings(answer_model="llama3.2", answer_base_url="http://127.0.0.1:11434/v1",
                             answer_api_key=SecretStr("k")), "q", [])
    assert local.name == "openai:llama3.2" and local.model.model_name == "llama3.2"
    assert str(local.model.base_url).startswith("http://127.0.0.1:11434/v1")
    with pytest.raises(ConfigurationError, match="GRAPHRAG_ANSWER_MODEL 'nosuch:model'"):
        resolve(Settings(answer_model="nosuch:model"), "q", [])
