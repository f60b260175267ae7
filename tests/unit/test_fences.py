"""Code fences where Markdown puts them: on a list item's first line and inside block quotes."""

from __future__ import annotations

from graphrag.ingest.textprep import (
    BlockState,
    Fence,
    fence_closes,
    fence_ends_before,
    fence_open,
    lines_outside_fences,
    prose_view,
)

LIST_TABLE = """* - Setting
  - Example
* - Offset
  - ```yaml
    offset: 3
    ```
* - Depth
  - See the Marrowgate tables.
"""


def test_a_fence_on_a_list_items_first_line_opens_at_the_items_content() -> None:
    assert fence_open("  - ```yaml") == Fence(4, "```")
    assert fence_open("1. ~~~~") == Fence(3, "~~~~")
    assert fence_open("- ``` inline ``` code") is None  # a backtick in the info string: inline code
    assert fence_open("- ```{note}") is None  # a MyST directive in a list item is no code block
    assert fence_open("```{note}") == Fence(0, "```")  # at a line's start, the MyST passes decide
    lines = LIST_TABLE.splitlines()
    outside = [lines[i] for i in lines_outside_fences(lines)]
    assert outside == ["* - Setting", "  - Example", "* - Offset", "* - Depth", "  - See the Marrowgate tables."]


def test_a_block_quoted_fence_closes_quoted_and_ends_with_its_quote() -> None:
    fence = fence_open("> ```rust")
    assert fence == Fence(0, "```", 1)
    assert fence_closes("> ```", fence) and not fence_closes(">", fence) and not fence_closes("", fence)
    inner = fence_open("> > ```")  # in a quote inside a quote: closed as deep, ended by a shallower line
    assert inner == Fence(0, "```", 2) and fence_closes("> > ```", inner) and fence_ends_before("> text", inner)
    # Not quoted: the quote ends, and the block with it; the line is not inside (here it opens a block).
    assert fence_ends_before("```", fence) and not fence_ends_before("> ```", fence)
    state = BlockState()
    kinds = [state.step(line) for line in ["> ```rust", "> let depth = 3;", ">", "Olga Brandt reads it.", "> ```"]]
    # the quote holding the block ended at the unquoted line, which is text; the last line opens a new block
    assert kinds == ["fence", "code", "code", "text", "fence"]


def test_prose_view_keeps_quoted_and_list_item_code_out_of_the_prose() -> None:
    view = prose_view("> ```rust\n> let vantorel = sound(harbour);\n> ```\n\nOlga Brandt checks it.\n\n" + LIST_TABLE)
    assert "vantorel" not in view.text and "offset: 3" not in view.text
    assert "Olga Brandt checks it." in view.text and "See the Marrowgate tables." in view.text
    assert view.code_blocks == ["> let vantorel = sound(harbour);", "    offset: 3"]
