"""API reference directives filled in from the project's Python sources, read with ast (never imported)."""

from __future__ import annotations

from pathlib import Path

from graphrag.ingest.autodoc import Options, PythonSources, expand_autodoc_rst, expand_mkdocstrings
from graphrag.ingest.includes import Includes

BASE = '''
class Gauge:
    """A tide gauge."""

    def read(self, hour: int) -> float:
        """The water level at ``hour``, in metres."""

    def _calibrate(self):
        """Private: not shown."""
'''

HARBOUR = '''
from typing import Annotated

from annotated_doc import Doc
from werkzeug import Thing as Thing

from .base import Gauge

__all__ = ["Harbour", "open_harbour"]

#: How many berths a harbour has unless told.
DEFAULT_BERTHS = 12


class Harbour(Gauge):
    """The Quellport harbour and its berths.

    Usage
    =====

    Open it before the ferries come.
    """

    def __init__(self, name: Annotated[str, Doc("The harbour's name, as charts print it.")], berths: int = 12):
        self.name = name

    @property
    def depth(self) -> float:
        """The channel depth at low tide."""

    def undocumented(self):
        pass

    tide = "spring"
    """Which tide the harbour is set for."""


def open_harbour(name: str) -> Harbour:
    """Open the harbour called ``name``."""


def hidden():
    """Not in __all__."""
'''


def _project(tmp_path: Path) -> Includes:
    (tmp_path / ".git").mkdir()
    package = tmp_path / "src" / "tides"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""Tides."""\nfrom .harbour import Harbour as Harbour\nfrom .harbour import Thing\n')
    (package / "base.py").write_text(BASE)
    (package / "harbour.py").write_text(HARBOUR)
    (package / "broken.py").write_text("def (:\n")
    return Includes(tmp_path, 1 << 20)


def test_names_are_found_through_re_exports_and_described_from_their_source(tmp_path: Path) -> None:
    sources = PythonSources(_project(tmp_path))
    harbour = sources.describe("tides.Harbour", "Harbour", Options(members=True, inherited=True))
    assert harbour is not None and harbour.kind == "class"
    assert harbour.signature == "(name: str, berths: int=12)"  # Annotated[..., Doc()] shows its type
    assert harbour.params == [("name", "The harbour's name, as charts print it.")]
    assert harbour.doc.startswith("The Quellport harbour and its berths.")
    # documented public members, then the base class's (inherited); not _calibrate, not undocumented
    assert [(m.kind, m.name, m.signature, m.doc) for m in harbour.members] == [
        ("attribute", "depth", "", "The channel depth at low tide."),
        ("attribute", "tide", "", "Which tide the harbour is set for."),
        ("method", "read", "(hour: int) -> float", "The water level at ``hour``, in metres.")]
    plain = sources.describe("tides.Harbour", "Harbour", Options(members=True, exclude=frozenset({"tide"})))
    assert plain is not None and [m.name for m in plain.members] == ["depth"]
    module = sources.describe("tides.harbour", "tides.harbour", Options(members=True))
    assert module is not None and [m.name for m in module.members] == ["Harbour", "open_harbour"]  # __all__
    constant = sources.describe("tides.harbour.DEFAULT_BERTHS", "DEFAULT_BERTHS", Options())
    assert constant is not None and constant.doc == "How many berths a harbour has unless told."
    # another package's name, a syntax error and a name nobody defines are not found
    assert sources.describe("tides.Thing", "Thing", Options()) is None
    assert sources.describe("tides.broken.x", "x", Options()) is None
    assert sources.describe("tides.Nowhere", "Nowhere", Options()) is None


def test_sphinx_autodoc_directives_are_filled_in_and_examples_are_not(tmp_path: Path) -> None:
    rst = (".. module:: tides\n\n.. autoclass:: Harbour\n   :members:\n\n   Written under the directive.\n\n"
           ".. autofunction:: tides.harbour.open_harbour\n\n.. autoclass:: Nowhere\n\n"
           ".. code-block:: rst\n\n   .. autoclass:: Harbour\n")
    text = expand_autodoc_rst(rst, _project(tmp_path))
    assert ".. autoclass:: Harbour(name: str, berths: int=12)\n\n   The Quellport harbour and its berths." in text
    assert "   :param name: The harbour's name, as charts print it." in text
    assert "   .. attribute:: depth\n\n      The channel depth at low tide." in text
    assert "   Written under the directive." in text  # the directive's own content follows
    assert ".. autofunction:: open_harbour(name: str) -> tides.Harbour" not in text  # shown as written
    assert ".. autofunction:: tides.harbour.open_harbour(name: str) -> Harbour" in text
    assert ".. autoclass:: Nowhere\n" in text and text.endswith(".. code-block:: rst\n\n   .. autoclass:: Harbour\n")


def test_mkdocstrings_lines_become_headings_signatures_and_docstrings(tmp_path: Path) -> None:
    md = ("# Reference\n\n::: tides.Harbour\n    options:\n      members:\n        - depth\n\n"
          "```markdown\n::: tides.Harbour\n```\n\n::: elsewhere.Thing\n")
    text = expand_mkdocstrings(md, _project(tmp_path))
    assert text.startswith("# Reference\n\n## `tides.Harbour`\n\n```python\nHarbour(name: str, berths: int=12)\n```\n\n"
                           "The Quellport harbour and its berths.\n\n### Usage\n")  # its heading below the object's
    assert "**Parameters**\n\n- `name`: The harbour's name, as charts print it." in text
    assert "### `Harbour.depth`\n\nThe channel depth at low tide." in text and "Harbour.read" not in text
    assert "```markdown\n::: tides.Harbour\n```" in text and text.endswith("::: elsewhere.Thing\n")


def test_sphinx_info_fields_read_as_sphinx_shows_them() -> None:
    from graphrag.ingest.html_reader import load_html
    from graphrag.ingest.rst import rst_to_html

    rst = (".. function:: connect(host)\n\n   Connect.\n\n   :param str host: The harbour host.\n   :type host: str\n"
           "   :raises ValueError: When closed.\n   :returns: A link.\n   :rtype: Link\n   :Author: Ada\n")
    text = load_html(Path("api.html"), rst_to_html(rst).encode())[0].text
    for line in ("host: The harbour host.", "host (type): str", "Raises ValueError: When closed.",
                 "Returns: A link.", "Return type: Link", "Author: Ada"):
        assert line in text.split("\n"), (line, text)
    assert "param" not in text


def test_inherited_members_cannot_multiply_a_page_past_its_budget(tmp_path: Path, monkeypatch) -> None:
    import graphrag.ingest.autodoc as autodoc

    (tmp_path / ".git").mkdir()
    (tmp_path / "big").mkdir()
    methods = "".join(f'    def m{i}(self):\n        """{"Sounding. " * 20}"""\n\n' for i in range(50))
    classes = "".join(f"class C{i}(Base):\n    pass\n\n" for i in range(40))
    (tmp_path / "big" / "__init__.py").write_text(f"class Base:\n{methods}\n{classes}")
    monkeypatch.setattr(autodoc, "MAX_ADDED_CHARS", 60_000)
    rst = "".join(f".. autoclass:: big.C{i}\n   :members:\n   :inherited-members:\n\n" for i in range(40))
    text = expand_autodoc_rst(rst, Includes(tmp_path, 1 << 20))
    filled = text.count(".. method:: m0()")
    assert 0 < filled < 40 and len(text) < 60_000 + len(rst)
    assert ".. autoclass:: big.C39\n   :members:" in text  # past the budget: left as written


def test_autosummary_tables_show_summaries_and_a_toctree_the_whole_reference(tmp_path: Path) -> None:
    includes = _project(tmp_path)
    (tmp_path / "src" / "tides" / "mixin.py").write_text(
        'class Levels:\n    @property\n    def mean(self) -> float:\n        """The mean level. Averaged hourly."""\n')
    (tmp_path / "src" / "tides" / "station.py").write_text(
        'from typing import Generic, TypeVar\n\nfrom .mixin import Levels\n\nT = TypeVar("T")\n\n\n'
        'class Station(Levels, Generic[T]):\n    """A tide station."""\n\n    @property\n    def depth(self) -> float:\n'
        '        """The depth in metres."""\n\n    @depth.setter\n    def depth(self, value: float) -> None:\n'
        '        self._depth = value\n')
    rst = (".. currentmodule:: tides\n\n.. autosummary::\n   :nosignatures:\n\n   ~harbour.open_harbour\n   Harbour\n"
           "   Nowhere\n\n.. currentmodule:: tides.station\n\n.. autosummary::\n   :toctree: generated/\n\n"
           "   Station.depth\n   Station.mean\n\nAfter the table.\n")
    text = expand_autodoc_rst(rst, includes)
    # the table: the name as written (~ shows the last part), the docstring's first sentence
    assert "- ``open_harbour``: Open the harbour called `name`." in text
    assert "- ``Harbour``: The Quellport harbour and its berths." in text and "- ``Nowhere``\n" in text
    # a property is its getter, not its setter; a member a base class defines (a mixin) is found
    assert "- ``Station.depth``: The depth in metres." in text and "- ``Station.mean``: The mean level." in text
    # :toctree: pages: each object's whole reference follows the table
    assert ".. autoattribute:: Station.mean\n\n   The mean level. Averaged hourly." in text
    assert "Usage" not in text.split(".. currentmodule:: tides.station")[0]  # no :toctree:, no docstring body
    assert text.endswith("After the table.\n")
    # a table of names the project does not define is read as written
    unknown = ".. autosummary::\n\n   numpy.abs\n"
    assert expand_autodoc_rst(unknown, includes) == unknown


def test_a_monorepos_package_a_stub_and_listed_re_exports_are_found(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    package = tmp_path / "tides-core" / "python" / "tides_core"  # a compiled package beside the main one
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from ._core import Validator, helper\n\n__all__ = ['Validator', 'helper']\n")
    (package / "_core.pyi").write_text(
        'class Validator:\n    """Validates tide tables in compiled code."""\n\n'
        '    def __init__(self, schema: dict) -> None: ...\n\n    def validate(self, value: object) -> object:\n'
        '        """Validate ``value``."""\n\n\ndef helper() -> None:\n    """Help."""\n')
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "tests").mkdir()  # folders a package search skips
    page = "::: tides_core\n    options:\n        members:\n        - helper\n        - Validator\n"
    text = expand_mkdocstrings(page, Includes(tmp_path, 1 << 20))
    # the listed members in the list's order, read from the stub; the class's own members under it
    assert text.index("`tides_core.helper`") < text.index("`tides_core.Validator`")
    assert "Validates tide tables in compiled code." in text and "`Validator.validate`" in text
    assert "Validator(schema: dict) -> None" in text
