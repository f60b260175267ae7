"""Addresses too long to read, cut to where they point (pure logic)."""

from __future__ import annotations

import pytest

from graphrag.ingest.long_urls import LONG_URL, shorten_long_urls

PAYLOAD = "eNqFkc9uwjAMxl/F6wXQKIVNk1AX0HbZC4zDDr2E4EK0NIkStxtDvPviFQ0OSFzyx" * 20


def test_a_playground_link_keeps_its_text_and_host_and_the_line_its_length() -> None:
    text = f"[Try it in the Playground](https://play.vuejs.org/#{PAYLOAD}) and read on.\nNext line.\n"
    out = shorten_long_urls(text)
    assert len(out) == len(text) and out.count("\n") == text.count("\n")
    first = out.split("\n")[0]
    assert first.startswith("[Try it in the Playground](https://play.vuejs.org/) ")
    assert " ".join(first.split()) == "[Try it in the Playground](https://play.vuejs.org/) and read on."
    assert out.split("\n")[1] == "Next line."


@pytest.mark.parametrize(("target", "kept"), [
    (f"https://example.org/docs/page?state={PAYLOAD}", "https://example.org/docs/page"),  # query cut
    (f"https://example.org/{PAYLOAD}", "https://example.org/"),  # the path is the payload
    (f"data:image/png;base64,{PAYLOAD}", "data:image/png;base64,"),
])
def test_what_is_kept_of_a_long_address(target: str, kept: str) -> None:
    for text, closing in ((f"![chart]({target})", ")"), (f"<{target}>", ">"), (f'<img src="{target}">', '"')):
        out = shorten_long_urls(text)
        assert len(out) == len(text)
        assert kept + closing in out and PAYLOAD[:20] not in out


@pytest.mark.parametrize("text", [
    "[docs](https://example.org/a/b/c?x=1#install) is short.\n",
    f"```text\nhttps://play.vuejs.org/#{PAYLOAD}\n```\n",  # code is never touched
    f"Inline `https://play.vuejs.org/#{PAYLOAD}` code.\n",
    "A word " + "x" * (LONG_URL * 3) + " without a scheme.\n",
])
def test_short_addresses_code_and_other_long_words_are_left_alone(text: str) -> None:
    assert shorten_long_urls(text) == text


@pytest.mark.timeout(60)  # a hang guard
@pytest.mark.parametrize("text", ["https://" * 100000, "https://a" + "b" * 1_000_000, "`https://" + "a" * 300 + " " * 10 + "`" * 100000,
                                  "data:" + "a;" * 200000])
def test_long_hostile_lines_cost_linear_work(text: str) -> None:
    assert len(shorten_long_urls(text)) == len(text)
