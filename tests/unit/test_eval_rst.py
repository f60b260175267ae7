"""MyST's ``{eval-rst}`` blocks rendered as their reStructuredText, and directive fences read as such."""

from __future__ import annotations

from pathlib import Path

from graphrag.ingest.eval_rst import render_eval_rst
from graphrag.ingest.textprep import DirectiveFences


def test_an_eval_rst_block_reads_as_it_renders_and_examples_stay(tmp_path: Path) -> None:
    page = ("# Page\n\n```{eval-rst}\n.. note::\n\n   An **rst** note with :code:`x`.\n\n"
            "A `link <https://example.org>`_ and a term.\n```\n\n"
            "````md\n```{eval-rst}\n.. note:: shown, not rendered\n```\n````\n\nAfter.\n")
    text = render_eval_rst(page, tmp_path / "page.md")
    assert "**Note**\n\nAn rst note with `x`.\n\nA link and a term." in text
    assert ".. note:: shown, not rendered" in text  # inside a code block: an example
    assert ":code:" not in text and "`_" not in text and text.endswith("After.\n")


def test_a_directive_fence_closing_is_not_a_code_block_opening() -> None:
    lines = ["````{myst-example}", "```{eval-rst}", ".. x::", "```", "````", "text", "```python", "code", "```", "more"]
    fences = DirectiveFences()
    assert [fences.in_code(line) for line in lines] == [False, False, False, False, False, False, True, True, True, False]
