"""PDFs as text page by page (pypdf), ruled tables as pipe tables in place and overprinted (fake bold)
pages read once (pdfplumber), a filled-in form's answers after their page; ``pages`` holds each page's
span of the text."""

from __future__ import annotations

import io
import itertools
import logging
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from graphrag.ingest.furniture import strip_furniture, strip_leaders
from graphrag.ingest.hyphenation import join_hyphenated
from graphrag.ingest.load_base import LoadError, metadata_title, unligature
from graphrag.ingest.textprep import pipe_table
from graphrag.models import Document

log = logging.getLogger(__name__)


def load_pdf(path: Path, data: bytes) -> list[Document]:
    """A PDF's text page by page (pypdf), ruled tables as pipe tables in place (pdfplumber); ``pages``
    holds each page's span of the text. A PDF locked only against copying or printing (an empty user
    password) is read; one that needs a password to open is a :class:`LoadError`."""

    from pypdf import PdfReader
    from pypdf.errors import DependencyError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            try:
                opened = reader.decrypt("")
            except DependencyError as exc:
                raise LoadError(f"{path.name}: encrypted PDF that needs a cipher not installed ({exc})") from None
            if not opened:
                raise LoadError(f"{path.name}: encrypted PDF (password protected)")
        if len(reader.pages) == 0:
            raise LoadError(f"{path.name}: the PDF has no pages")
        widgets = _Widgets()
        unreadable: list[int] = []  # pages pypdf fails on (a damaged content stream): left empty, the rest read
        first_error: Exception | None = None
        plain: list[str] = []
        answers: list[str] = []
        candidates: set[int] = set()  # pages to read from their characters too (tables, overprinting)
        outline = _outline(reader)
        # Without bookmarks, or with one alone (a paper's title), the headings come from the type too:
        # each page's runs of text with their size and font, read in the same pass as its text.
        typeset: list[list[_Run]] | None = None if len(outline) > 1 else []
        for number, page in enumerate(reader.pages):
            try:
                if typeset is None:
                    text = (page.extract_text() or "").strip()
                else:
                    runs: list[_Run] = []
                    text = (page.extract_text(visitor_text=_run_reader(runs)) or "").strip()
                    typeset.append(runs)
                answers.append(_pdf_form_answers(page, text, widgets))
            except RecursionError:
                raise
            except Exception as exc:  # noqa: BLE001 - pypdf's own and plain errors from a damaged page
                log.warning("%s: page %d unreadable (%s: %s)", path.name, number + 1, type(exc).__name__,
                            str(exc)[:200])
                unreadable.append(number + 1)
                first_error = first_error or exc
                text = ""
                answers.append("")
                if typeset is not None and len(typeset) <= number:
                    typeset.append([])
            else:
                if _wants_characters(page, text):
                    candidates.add(number)
            plain.append(text)
        tables = _pdf_pages_from_chars(_decrypted(reader) if reader.is_encrypted else data, candidates)
        parts: list[str] = []
        for number, text in enumerate(plain):
            text = tables.get(number) or text
            if answers[number]:
                text = f"{text}\n\n{answers[number]}" if text else answers[number]
            parts.append(text)
        if first_error is not None and len(unreadable) == len(parts):
            raise first_error
        # Running headers, footers and page numbers out; words hyphenated across lines whole again;
        # a table of contents without its dot leaders.
        # NUL: a font that maps a glyph ("ffi") to U+0000, which PostgreSQL cannot store
        parts = [unligature(p).replace("\x00", "") for p in parts]
        parts = [strip_leaders(part) for part in join_hyphenated(strip_furniture(parts))]
        stamp = _arxiv_stamp(parts)
        found = [(depth, unligature(title), page) for depth, title, page in _with_type_headings(outline, typeset)]
        parts, marks = mark_outline_headings(parts, found)
        pages: list[tuple[int, int]] = []
        headings: list[tuple[int, int, str]] = []
        offset = 0
        for text, marked in zip(parts, marks, strict=True):
            pages.append((offset, offset + len(text)))
            starts = [0, *(m.end() for m in re.finditer("\n", text))]  # where each line of the page starts
            headings += [(offset + starts[line], level, title) for line, level, title in marked]
            offset += len(text) + 2
        info = reader.metadata
        title = unligature(metadata_title(str(info.title) if info and info.title else "") or _first_page_title(reader))
        meta: dict[str, Any] = {"pages": len(pages)}
        if unreadable:
            meta["unreadable_pages"] = unreadable
        if stamp:
            meta["arxiv"] = stamp
        if info and info.author:
            meta["author"] = str(info.author).replace("\x00", "").strip()
    except LoadError:
        raise
    except RecursionError:
        raise LoadError(f"{path.name}: unreadable PDF (objects nested too deeply)") from None
    # pypdf raises its own errors (PdfReadError, LimitReachedError...) and, on damaged files, plain
    # Python ones from deep inside (AttributeError, IndexError): all of them mean the file cannot be read.
    except Exception as exc:  # noqa: BLE001
        raise LoadError(f"{path.name}: unreadable PDF ({type(exc).__name__}: {str(exc)[:200]})") from None
    body = "\n\n".join(parts)
    if not body.strip():
        why = "scanned images need OCR" if _has_images(reader) else "its pages hold no text"
        raise LoadError(f"{path.name}: the PDF has no extractable text ({why})")
    return [Document(source=str(path), title=title or path.stem, text=body, kind="pdf", metadata=meta,
                     pages=tuple(pages), headings=tuple(headings))]


def _xobjects(page: Any) -> list[Any]:
    """The XObjects (images, forms) a page's resources name."""
    resources = page.get("/Resources")
    xobjects = resources.get_object().get("/XObject") if resources is not None else None
    return [ref.get_object() for ref in xobjects.get_object().values()] if xobjects is not None else []


def _has_images(reader: Any, most_pages: int = 50) -> bool:
    """Whether any of the first pages draws an image (a scan, for a PDF without text)."""
    try:
        return any(x.get("/Subtype") == "/Image" for page in reader.pages[:most_pages] for x in _xobjects(page))
    except Exception:  # noqa: BLE001 - a damaged resource dictionary: say nothing of images
        return False


# A form with more fields than this is not a form a person fills in: the rest are not read.
_PDF_MAX_FIELDS = 2_000


@dataclass
class _Widgets:
    """Form widgets read so far in one PDF: each once (pages may share one annotation list), and no
    more than :data:`_PDF_MAX_FIELDS` in all."""

    seen: set[int] = field(default_factory=set)
    read: int = 0


def _pdf_field_value(value: Any, kind: Any, in_list: bool = False) -> str:
    """A form field's value as text: a text or choice field's text, a checked box's or a chosen radio
    button's export name ("Yes", "Option2"), a number; "" for unset, unchecked ("Off"), signatures,
    and anything else (a stream or dictionary is no answer)."""
    from pypdf.generic import ArrayObject, FloatObject, NameObject, NumberObject, TextStringObject

    if value is None or kind == "/Sig":
        return ""
    value = value.get_object() if hasattr(value, "get_object") else value
    if isinstance(value, ArrayObject):  # a multiple-choice list (of values, not of lists)
        return "" if in_list else ", ".join(filter(None, (_pdf_field_value(v, kind, True) for v in value[:100])))
    if isinstance(value, NameObject):
        name = str(value)[1:]
        return "" if name.lower() == "off" else name
    if isinstance(value, (TextStringObject, str, NumberObject, FloatObject)):
        return " ".join(str(value).replace("\x00", "").split())
    return ""


def _pdf_field_label(name: str) -> str:
    """A field's partial name as a label: "topmostSubform[0].Page1[0].full_name[0]" -> "full name"."""
    last = re.sub(r"\[\d+\]", "", name).rsplit(".", 1)[-1]
    return " ".join(last.replace("_", " ").split())


def _pdf_form_answers(page: Any, text: str, widgets: _Widgets) -> str:
    """The filled-in form fields on a page as "Label: value" lines. An interactive form keeps its answers
    in field values, not in the page's text, so a filled-in application would otherwise read blank.
    The label is the field's description (``/TU``) or its name; values already in the page's text (a
    form printed flat) and empty fields are left out."""
    lines: list[str] = []
    seen: set[tuple[str, str]] = set()
    from pypdf.generic import ArrayObject, IndirectObject

    try:
        annotations = page.get("/Annots") or []
        annotations = annotations.get_object() if hasattr(annotations, "get_object") else annotations
        if not isinstance(annotations, ArrayObject):
            return ""
        annotations = list(annotations)
    except Exception:  # noqa: BLE001 - a damaged annotation list: the page's text is still read
        return ""
    for annotation in annotations:
        if widgets.read >= _PDF_MAX_FIELDS:
            break
        if isinstance(annotation, IndirectObject):
            if annotation.idnum in widgets.seen:
                continue
            widgets.seen.add(annotation.idnum)
        try:
            node = annotation.get_object()
            if node.get("/Subtype") != "/Widget":
                continue
            widgets.read += 1
            # /T, /TU, /V and /FT are inherited: a widget of a radio group or of a field shown twice
            # holds only its place on the page, and its parent field the rest.
            found: dict[str, Any] = {}
            for _ in range(16):
                for key in ("/T", "/TU", "/V", "/FT"):
                    if key not in found and key in node:
                        found[key] = node[key]
                parent = node.get("/Parent")
                if parent is None:
                    break
                node = parent.get_object()
            value = _pdf_field_value(found.get("/V"), found.get("/FT"))
            label = " ".join(str(found.get("/TU") or "").split()) or _pdf_field_label(str(found.get("/T") or ""))
        except Exception:  # noqa: BLE001 - one damaged field does not hide the others
            continue
        if not value or (len(value) >= 4 and value in text) or (label, value) in seen:
            continue
        seen.add((label, value))
        lines.append(f"{label}: {value}" if label else value)
    return "\n".join(lines)


def _decrypted(reader: Any) -> bytes:
    """An opened encrypted PDF written out plain, for the table finder (pdfminer fails on some locks
    pypdf opens, such as a negative permissions value); b"" if that fails (pypdf's text then)."""

    from pypdf import PdfWriter

    try:
        out = io.BytesIO()
        PdfWriter(clone_from=reader).write(out)
        return out.getvalue()
    except Exception as exc:  # noqa: BLE001 - the text is still read, without tables
        log.debug("PDF not rewritten for table detection: %s: %s", type(exc).__name__, exc)
        return b""


def _first_page_title(reader: Any) -> str:
    """The title the first page sets in its largest type ("Shared MIME-info Database" at 24.8 pt over
    17.2 pt text), where the metadata has none; "" when no line stands out (1.3 times the page's usual
    size) or it is too long for a title. A running header with the title is stripped with the page's
    furniture, so the text alone would not give it."""
    runs: list[tuple[float, str]] = []

    def visit(text: str, cm: Any, tm: Any, font: Any, size: float) -> None:
        if text.strip() and len(runs) < 2000:
            runs.append((round(abs(size * (tm[3] if tm else 1) * (cm[3] if cm else 1)), 1), text.strip()))

    try:
        reader.pages[0].extract_text(visitor_text=visit)
    except Exception:  # noqa: BLE001 - the title is a nicety; the text was read already
        return ""
    sized = [(size, text) for size, text in runs if size > 0]
    if not sized:
        return ""
    weights = sorted((size, len(text)) for size, text in sized)
    total, seen, usual = sum(n for _, n in weights), 0, weights[0][0]
    for size, n in weights:  # the size half the page's characters are set in or below
        seen += n
        if seen * 2 >= total:
            usual = size
            break
    top = max(size for size, _ in sized)
    if top < 1.3 * usual:
        return ""
    # The first run of lines in that type (a title set on two lines), each once (an overprinted
    # line comes twice); not every line in it, which would join a page's section titles.
    first = next(i for i, (size, _) in enumerate(sized) if size >= 0.95 * top)
    lines: list[str] = []
    for size, text in sized[first:]:
        if size < 0.95 * top:
            break
        if not lines or text != lines[-1]:
            lines.append(text)
    title = " ".join(" ".join(lines).split())
    return metadata_title(title) if len(title) <= 150 and len(title.split()) <= 16 else ""


def _outline(reader: Any, limit: int = 5000) -> list[tuple[int, str, int]]:
    """The PDF's bookmarks as ``(depth, title, page index)``, in order; [] when it has none or they do
    not read."""
    out: list[tuple[int, str, int]] = []

    def walk(items: Any, depth: int) -> None:
        for item in items:
            if len(out) >= limit:
                return
            if isinstance(item, list):
                walk(item, depth + 1)
                continue
            try:
                page = reader.get_destination_page_number(item)
                title = " ".join(str(item.title or "").replace("\x00", "").split())
            except Exception:  # noqa: BLE001 - a broken destination: that bookmark is left out
                continue
            if title and page is not None and page >= 0:
                out.append((min(depth, 5), title, page))

    try:
        walk(reader.outline, 0)
    except Exception:  # noqa: BLE001 - a damaged outline: the text is read without its headings
        return []
    return out


# A run of a page's text as typeset: its size in points (the font size scaled by the text and
# graphics matrices), whether its font is bold, and the text.
_Run = tuple[float, bool, str]
_MAX_RUNS = 20_000  # a page's runs kept for reading its headings (a page of text has a few thousand)
_BOLD = re.compile(r"bold|black|heavy|semibold|demi|-med|medium|cmbx|,b\b|-b\b", re.I)
_HEADING_RATIO = 1.08  # heading type at least this much larger than the body's (LaTeX: 12 pt over 10.95)
# a prototype set in a heading's font ("char * str, unsigned int *"); a printer's file path
_CODE_MARKS = re.compile(r"[*{};=\\]")
_TOC_PAGE = re.compile(r"\s(?:\d{1,4}|[ivxlc]{1,6})$")  # a contents line's page number ("3", "iv")
_NUMBERED = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[A-Z](?:\.\d+)+\.?)\s+\S")  # "2.1 ", "3. ", "A.2 "


def _run_reader(runs: list[_Run]) -> Callable[..., None]:
    """A ``visitor_text`` for pypdf's ``extract_text`` that keeps the page's runs in ``runs``."""

    def visit(text: str, cm: Any, tm: Any, font: Any, size: float) -> None:
        if not text or len(runs) >= _MAX_RUNS:
            return
        try:
            scale = abs(size * (tm[3] if tm else 1) * (cm[3] if cm else 1))
            name = str(font.get("/BaseFont", "")) if font is not None else ""
        except Exception:  # noqa: BLE001 - an odd font dictionary: the run counts as regular type
            scale, name = abs(size or 0), ""
        runs.append((round(scale, 1), bool(_BOLD.search(name)), text))

    return visit


def _typeset_lines(runs: list[_Run]) -> list[tuple[float, bool, str]]:
    """A page's lines with their type: ``(size, bold, text)`` where every run of the line with text
    is in that size and weight, else ``(0, False, text)`` (a line in mixed type is no heading)."""
    lines: list[tuple[float, bool, str]] = []
    size, bold, mixed, started = 0.0, True, False, False  # started: the line has text yet
    parts: list[str] = []

    def close() -> None:
        text = " ".join("".join(parts).split())
        if text:
            lines.append((0.0, False, text) if mixed else (size, bold, text))

    for run_size, run_bold, text in runs:
        for i, piece in enumerate(text.split("\n")):
            if i:
                close()
                size, bold, mixed, started = 0.0, True, False, False
                parts = []
            if piece.strip():
                if not started:
                    size, bold, started = run_size, run_bold, True
                elif abs(run_size - size) > 0.3 or run_bold != bold:
                    mixed = True
            parts.append(piece)
    close()
    return lines


def type_outline(pages: list[list[_Run]]) -> list[tuple[int, str, int]]:
    """Headings read from the type, for a PDF without bookmarks, as :func:`mark_outline_headings`
    takes bookmarks: ``(depth, title, page index)``. The body's size is the one half the document's
    characters are set in or below; a line set wholly in a larger size (by 8% at least: LaTeX sets
    a section in 12 pt over 10.95) is a heading, one or two such lines in a row one title, each
    larger size a level above the next; a numbered line ("2.1 Scope") set wholly in bold of the
    body's size is a heading below them. Not headings: lines that do not read as a title
    (:func:`_reads_as_heading`), a big-type block of more than two lines, a line on more than a
    third of the pages (a running header), a size whose text is mostly not in headings (body text
    set in two sizes), and, in a document of several pages, a size found on the first page only and
    larger than every heading after it (the title block) unless a numbered line is set in it (a
    paper's first pages alone: "1 Introduction")."""
    typed = [_typeset_lines(runs) for runs in pages]
    weights: dict[float, int] = {}
    for lines in typed:
        for size, _, text in lines:
            if size > 0:
                weights[size] = weights.get(size, 0) + len(text)
    if not weights:
        return []
    total, seen, body = sum(weights.values()), 0, 0.0
    for size in sorted(weights):
        seen += weights[size]
        if seen * 2 >= total:
            body = size
            break
    found: list[tuple[float, str, int]] = []  # (size; -1 for bold numbered lines), title, page
    for page, lines in enumerate(typed):
        i = 0
        while i < len(lines):
            size, bold, text = lines[i]
            if size >= body * _HEADING_RATIO:
                j = i + 1
                while j < len(lines) and abs(lines[j][0] - size) <= 0.3:
                    j += 1
                if j - i <= 2:
                    found.append((size, " ".join(t for _, _, t in lines[i:j]), page))
                i = j
                continue
            if bold and abs(size - body) <= 0.3 and _NUMBERED.match(text):
                found.append((-1.0, text, page))
            i += 1
    found = [(size, title, page) for size, title, page in found if _reads_as_heading(title)]
    pages_of: dict[str, set[int]] = {}
    for _, title, page in found:
        pages_of.setdefault(title.lower(), set()).add(page)
    found = [f for f in found if len(pages_of[f[1].lower()]) * 3 <= max(len(pages), 3)]
    # Not heading sizes: one whose text is mostly not in headings (body text set in two sizes: its
    # paragraphs are blocks of lines) and, in a document of several pages, one found on the first
    # page only and larger than every heading after it (its title, authors, affiliations).
    in_headings: dict[float, int] = {}
    for size, title, _ in found:
        in_headings[size] = in_headings.get(size, 0) + len(title)
    later = max((size for size, _, page in found if page > 0), default=0.0)
    numbered = {size for size, title, _ in found if _NUMBERED.match(title)}  # "1 Introduction" is no title block
    sizes = sorted({size for size, _, page in found if size > 0
                    and in_headings[size] * 2 >= weights.get(size, 0)
                    and (len(pages) == 1 or size <= later or size in numbered)}, reverse=True)
    found = [f for f in found if f[0] in sizes or f[0] < 0]
    depth = {size: min(rank, 5) for rank, size in enumerate(sizes)}
    depth[-1.0] = min(len(sizes), 5)
    return [(depth[size], title, page) for size, title, page in found]


# The identifier arXiv stamps down the first page's margin ("arXiv:2004.04906v3  [cs.CL]  30 Sep 2020"),
# which the text extraction puts wherever the page's text ends: in the middle of a sentence.
_ARXIV_STAMP = re.compile(r"^[ \t]*arXiv:((?:\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?)[ \t]+"
                          r"\[[\w.-]+\][ \t]+\d{1,2}[ \t]+[A-Z][a-z]{2}[ \t]+\d{4}[ \t]*$\n?", re.M)


def _arxiv_stamp(parts: list[str]) -> str:
    """Take arXiv's stamp line out of the first page's text (in place); its identifier ("2004.04906v3"),
    or "" where the page has none."""
    if not parts:
        return ""
    match = _ARXIV_STAMP.search(parts[0])
    if match is None:
        return ""
    parts[0] = parts[0][:match.start()] + parts[0][match.end():]
    return match.group(1)


def _with_type_headings(outline: list[tuple[int, str, int]], typeset: list[list[_Run]] | None
                        ) -> list[tuple[int, str, int]]:
    """The headings to mark: the bookmarks where there are two or more; else the type's headings
    (:func:`type_outline`), under the one bookmark where there is one (a paper whose only bookmark is
    its title, its sections "1 Introduction" set in bold 12 pt)."""
    if typeset is None:
        return outline
    typed = type_outline(typeset)
    if not outline:
        return typed
    titles = {title.lower() for _, title, _ in outline}
    extra = [(depth + 1, title, page) for depth, title, page in typed if title.lower() not in titles]
    return sorted(outline + extra, key=lambda heading: heading[2])  # page by page, the bookmark first on its page


def _reads_as_heading(title: str) -> bool:
    """Whether a line in heading type reads as a title: up to 16 words with letters; not a sentence
    or its part (a trailing comma or hyphen, a period after 8 words, CJK sentence punctuation), code
    or a printer's mark (``* { } ; = \\``), a contents line ("2 Tides 14"), nor a number alone."""
    words = title.split()
    return (0 < len(words) <= 16 and len(title) <= 150 and sum(c.isalpha() for c in title) >= 2
            and not title.endswith((",", ";", "-", "*", "，", "、", "；")) and not _CODE_MARKS.search(title)
            and not (len(words) > 8 and title.endswith((".", "!")))  # a sentence (a pull quote)
            and "，" not in title and "。" not in title  # CJK sentence punctuation
            and not (_NUMBERED.match(title) and _TOC_PAGE.search(title)))  # "2 Bar 3": a contents line


# A section number before a heading's text ("2.1", "1.2.", "A.3", "IV.", "Appendix A"), which bookmarks
# may leave out (lines are compared in lower case).
_SECTION_NUMBER = re.compile(
    r"^(?:(?:appendix|annex|chapter|part|section)\s+)?(?:\d+|[a-z]|[ivxlc]+)(?:[.-](?:\d+|[a-z]))*\.?\s+", re.I)


def mark_outline_headings(pages: list[str], outline: list[tuple[int, str, int]]
                          ) -> tuple[list[str], list[list[tuple[int, int, str]]]]:
    """Pages with each bookmark's line made a Markdown heading ("## 1.2. What is this spec?", its depth
    the level), found on the page the bookmark points to or the next one: the line that is the
    bookmark's title, with or without a section number before it, or two lines that are. A bookmark
    whose line is not found is left out. The page chunker then keeps sections apart and gives each
    chunk its heading path, as the document's table of contents has it. Also returns, per page, the
    headings marked: ``(line number, level, title)``."""
    marks: list[list[tuple[int, int, str]]] = [[] for _ in pages]
    if not outline:
        return pages, marks
    lines = [page.split("\n") for page in pages]
    after = [0] * len(pages)  # the line after the last heading marked on each page: bookmarks come in order
    for depth, title, page in outline:
        want = " ".join(title.split()).lower()
        for number in (page, page + 1):
            if number >= len(lines):
                break
            found = _heading_line(lines[number], after[number], want)
            if found is not None:
                first, count = found
                text = " ".join(" ".join(lines[number][first:first + count]).split())
                shown = text.lstrip("#").strip()
                lines[number][first:first + count] = ["#" * (depth + 1) + " " + shown]
                # each page's headings are found below the last one (after[]): marks stay in line order
                marks[number].append((first, depth + 1, shown))
                after[number] = first + 1
                break
    return ["\n".join(page) for page in lines], marks


def _heading_line(lines: list[str], start: int, want: str) -> tuple[int, int] | None:
    """Where ``want`` (a bookmark's title, normalised) stands in ``lines`` from ``start``: the first
    line and how many lines (one or two) it takes."""
    want_bare = _SECTION_NUMBER.sub("", want, count=1)
    for i in range(start, len(lines)):
        for count in (1, 2):
            if i + count > len(lines):
                break
            line = " ".join(" ".join(lines[i:i + count]).split()).lower()
            if not line or len(line) > len(want) + 20:
                break
            # the same words, each side with or without its section number ("II. BASICS OF ..." for the
            # bookmark "II Basics of ...", "A. Google DeepDream" for "III-A Google DeepDream")
            bare = _SECTION_NUMBER.sub("", line, count=1)
            if want_bare in (line, bare) or want in (line, bare):
                return i, count
    return None


# Ruling read from a content stream without parsing it: the painted path segments (a line "l" from
# the current point, a rectangle "re": a rule if thin, else a box with two edges of each kind),
# horizontal and vertical; a path counts when a painting operator (stroke, fill) ends it, not a
# clipping path that "n" ends. pdfplumber's table finder needs edges both ways: a page with only
# horizontal rules (a header rule, a fraction bar, a booktabs table) has no table for it. Tokens read
# inside a string only cost a needless character-level read.
_TOKEN = re.compile(rb"[-+]?(?:\d+\.?\d*|\.\d+)|(?<![\w*])(?:re|[mln]|[SsFfBb]\*?)(?![\w*])")
_THIN = 2.0  # points: a rectangle this narrow is a rule
_TABLE_MIN_EDGES = 2  # each way
# Fake bold read by pypdf: a run of three or more characters three times in a row with nothing between
# ("Pump SetupPump SetupPump Setup", "2011201120112011"), or a CJK character three times ("年年年年").
_REPEATED = re.compile(r"(\S[^\n]{1,118}?\S)\1\1")
_MAX_SCAN = 20_000  # characters of a page's text searched for repeats (the pattern tries 118 lengths a place)
_CJK_TRIPLE = re.compile(r"([\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af])\1\1")


def _draws_paths(page: Any) -> bool:
    """Whether ``page`` paints ruling a table could be made of (edges both ways): in its content stream,
    or in the form XObjects it draws (one level down; some generators put a whole page in one)."""
    streams = [page.get_contents(), *(x for x in _xobjects(page) if x.get("/Subtype") == "/Form")]
    across = down = 0
    for stream in streams:
        if stream is None:
            continue
        numbers: list[float] = []
        point = (0.0, 0.0)
        pending = [0, 0]  # horizontal, vertical edges of the path being built
        for m in _TOKEN.finditer(stream.get_data()):
            token = m.group(0)
            if token[-1:].isdigit() or token[-1:] == b".":
                numbers = [*numbers[-3:], float(token)]
                continue
            if token == b"re" and len(numbers) >= 4:
                x, y, w, h = numbers[-4:]
                if abs(w) >= _THIN and abs(h) >= _THIN:
                    pending = [pending[0] + 2, pending[1] + 2]
                elif abs(w) >= _THIN:
                    pending[0] += 1
                elif abs(h) >= _THIN:
                    pending[1] += 1
                point = (x, y)
            elif token in (b"m", b"l") and len(numbers) >= 2:
                x, y = numbers[-2:]
                if token == b"l":
                    dx, dy = abs(x - point[0]), abs(y - point[1])
                    if dy < 1 <= dx:
                        pending[0] += 1
                    elif dx < 1 <= dy:
                        pending[1] += 1
                point = (x, y)
            elif token == b"n":
                pending = [0, 0]
            elif token not in (b"re", b"m", b"l"):  # a painting operator
                across, down = across + pending[0], down + pending[1]
                pending = [0, 0]
                if across >= _TABLE_MIN_EDGES and down >= _TABLE_MIN_EDGES:
                    return True
            numbers = []
    return False


def _wants_characters(page: Any, text: str) -> bool:
    """Whether a page is to be read from its characters too: it paints ruling or pypdf's ``text`` of it
    shows fake bold; also where its content cannot be looked at (the character-level read decides)."""
    try:
        return _draws_paths(page) or _looks_overprinted(text)
    except RecursionError:
        raise
    except Exception:  # noqa: BLE001 - odd resources or a damaged stream
        return True


def _looks_overprinted(text: str) -> bool:
    """Whether pypdf's text of a page shows glyphs drawn several times over (fake bold): a run three
    times in a row, a CJK character three times, or letters doubled throughout ("PPuummpp")."""
    if _CJK_TRIPLE.search(text):
        return True
    for m in _REPEATED.finditer(text[:_MAX_SCAN]):
        # A copy starts where a word does, and is words: not dot leaders ("........") or a shifted
        # piece of a repeated cell ("$0 $0 $0" read as "0 $" three times).
        if (m.start() == 0 or text[m.start() - 1].isspace()) and sum(ch.isalnum() for ch in m.group(1)) >= 2:
            return True
    letters = [c for c in text if c.isalpha()]
    doubled = sum(1 for a, b in itertools.pairwise(letters) if a == b)
    return len(letters) >= 20 and doubled > 0.3 * len(letters)


def _pdf_pages_from_chars(data: bytes, candidates: set[int] | None = None) -> dict[int, str]:
    """Pages read from their characters (pdfplumber) rather than by pypdf: pages that hold ruled tables,
    as their text with each table as a Markdown pipe table in place, and overprinted pages, with the
    copies of each glyph dropped.

    pypdf flattens a table into loose words ("Max pressure 42 bar"), losing which value is in which column;
    pdfplumber finds ruled tables from the page's lines. Only pages with a table are re-read this way, so
    other pages keep pypdf's text, and so do pages where the tables would lose more than they give:
    rotated pages, text in columns (pdfplumber reads lines straight across), and tables whose rows hold
    several rows of values each. pypdf also reads every copy of a glyph drawn several times on one spot
    (fake bold: a heading drawn four times a fraction of a point apart came out "2011201120112011 年年年年"):
    such a page is read from its characters with the copies dropped (:func:`_pdf_overprints`), column by
    column where its text runs in columns. A PDF pdfplumber cannot parse simply keeps pypdf's text.

    Only the pages of ``candidates`` (all where None) are parsed: reading a page's characters costs
    several times pypdf's text, and pages that paint no path and show no overprinting keep pypdf's
    text anyway.
    """

    import pdfplumber

    found: dict[int, str] = {}
    try:
        if not data:
            return {}
        with pdfplumber.open(io.BytesIO(data)) as pdf:
            for number, page in enumerate(pdf.pages):
                if candidates is not None and number not in candidates:
                    continue
                if not (page.rotation or 0) % 360 and _pdf_left_to_right(page.chars):
                    copies = _pdf_overprints(page.chars)
                    overprinted = bool(copies)
                    read = page.filter(_not_in(copies)) if overprinted else page
                    text = _pdf_page_with_tables(read) if page.lines or page.rects else None
                    if text is None and overprinted:
                        text = _pdf_page_text(read)
                    if text is not None:
                        found[number] = text
                page.close()  # drop the page's parsed layout: long manuals stay in bounded memory
    except Exception as exc:  # noqa: BLE001 - pdfminer raises many types on odd files; pypdf's text is still good
        log.debug("PDF pages read from characters skipped: %s: %s", type(exc).__name__, exc)
        return {}
    return found


# A page whose glyphs are drawn again on (nearly) the same spot at this share or more is overprinted
# (fake bold, shadowed text): copies within the tolerance, in points, of the same glyph are dropped.
_PDF_MAX_OVERPRINT = 0.05
_PDF_OVERPRINT_TOLERANCE = 1.0
_PDF_OVERPRINT_EM = 0.1


def _pdf_overprints(chars: list[dict[str, Any]]) -> set[int]:
    """The ``id`` of every glyph that repeats one drawn before it, the same glyph at the same size
    within a point (and a tenth of an em) of it, where such copies are at least 5% of the page's visible glyphs (10 at the
    least); else nothing. Fake bold and shadowed text are drawn so, and text extraction reads each copy
    (pdfplumber's ``dedupe_chars`` kept two of four copies drawn in a square a quarter point wide)."""
    visible = [c for c in chars if c["text"].strip()]
    if len(visible) < 10:
        return set()
    tolerance = _PDF_OVERPRINT_TOLERANCE
    kept: dict[tuple[str, float, int, int], list[dict[str, Any]]] = {}
    copies: set[int] = set()
    for c in visible:
        size = round(float(c.get("size", 0)), 1)
        cell_x, cell_y = int(c["x0"] // tolerance), int(c["top"] // tolerance)
        near = (other for dx in (-1, 0, 1) for dy in (-1, 0, 1)
                for other in kept.get((c["text"], size, cell_x + dx, cell_y + dy), ()))
        # Within a tenth of an em as well: two narrow letters side by side in small type ("ll" at 4 pt
        # is 0.9 pt from start to start) are not copies.
        reach = min(tolerance, _PDF_OVERPRINT_EM * size)
        if any(abs(o["x0"] - c["x0"]) <= reach and abs(o["top"] - c["top"]) <= reach for o in near):
            copies.add(id(c))
        else:
            kept.setdefault((c["text"], size, cell_x, cell_y), []).append(c)
    return copies if len(copies) >= _PDF_MAX_OVERPRINT * len(visible) else set()


def _not_in(copies: set[int]) -> Callable[[dict[str, Any]], bool]:
    """A pdfplumber filter keeping every layout object but the glyphs ``copies`` names (by ``id``)."""
    return lambda obj: id(obj) not in copies


def _pdf_page_text(page: Any) -> str | None:
    """A page's text lines read from its characters (:func:`_pdf_text_lines`); a page in columns column
    by column, left to right (read straight across, the columns would interleave)."""
    gutters = _pdf_gutters(page, page.extract_words())
    bounds = [float("-inf"), *gutters, float("inf")]
    columns = []
    for lo, hi in itertools.pairwise(bounds):
        chars = [c for c in page.chars if lo <= _pdf_middle(c)[0] < hi]
        text = "\n".join(text for _, text in _pdf_text_lines(chars) if text.strip()).strip()
        if text:
            columns.append(text)
    return "\n\n".join(columns) or None


# A cell of more lines than this is a page laid out in boxes, not a table cell.
_PDF_CELL_MAX_LINES = 12


def _pdf_table_rows(table: Any) -> list[list[str]] | None:
    """A table's rows for a pipe table, or None where it is no data table: one column (a frame around
    the page) or a cell of a whole section. A row whose filled cells all hold the same number (3 or
    more) of lines holds that many rows' values (ruling coarser than the text: "Alabama Alaska
    Arizona | 18,870 209 2,303"): it becomes that many rows, line by line."""
    raw = [[cell.strip() for cell in row] for row in _pdf_table_cells(table)]
    raw = [row for row in raw if any(row)]
    if len(raw) < 2 or max(len(row) for row in raw) < 2:
        return None
    rows: list[list[str]] = []
    for row in raw:
        lines = [cell.splitlines() for cell in row]
        counts = {len(cell) for cell in lines if cell}
        if max(counts) > _PDF_CELL_MAX_LINES:
            return None
        if len(counts) == 1 and (k := counts.pop()) >= 3 and sum(1 for cell in row if cell) >= 2:
            rows += [[cell[i] if cell else "" for cell in lines] for i in range(k)]
        else:
            rows.append(row)
    return [[" ".join(cell.split()).replace("|", "\\|") for cell in row] for row in rows]


def _pdf_gutters(page: Any, words: list[dict[str, Any]]) -> list[float]:
    """Where the page's columns part (x, left to right): gutters of 6 pt or more in the middle half of
    the page that no word crosses, with 20 words or more on each side; none on a page of fewer than
    15 lines."""
    lines = {round(w["top"]) for w in words}
    if len(lines) < 15:
        return []
    width = float(page.width)
    covered = bytearray(int(width) + 2)
    for w in words:
        start, end = max(0, int(w["x0"])), min(len(covered), int(w["x1"]) + 1)
        covered[start:end] = b"\x01" * max(0, end - start)
    lo, hi = int(width * 0.25), int(width * 0.75)
    gutters: list[float] = []
    run = 0
    for x in range(lo, hi + 1):
        if x < hi and not covered[x]:
            run += 1
            continue
        if run >= 6:  # a gutter of 6 pt or more: columns
            middle = x - run / 2
            left = sum(1 for w in words if w["x1"] <= middle)
            right = sum(1 for w in words if w["x0"] >= middle)
            if left >= 20 and right >= 20:
                gutters.append(middle)
        run = 0
    return gutters


def _pdf_middle(obj: dict[str, Any]) -> tuple[float, float]:
    """The middle of a character's (or any layout object's) box: what places it in a table or a cell."""
    return (obj["x0"] + obj["x1"]) / 2, (obj["top"] + obj["bottom"]) / 2


def _pdf_page_with_tables(page: Any) -> str | None:
    """The page's text lines outside its tables, and the tables as pipe tables, in reading order by
    height; None where the page has no data table or its text runs in columns."""
    tables: list[tuple[Any, list[list[str]]]] = []
    for table in page.find_tables():
        rows = _pdf_table_rows(table)
        if rows is not None:
            tables.append((table, rows))
    # A table inside another one's box (a frame drawn around tables) would repeat their text.
    boxes = [t.bbox for t, _ in tables]
    tables = [(t, rows) for t, rows in tables
              if not any(b != t.bbox and b[0] <= t.bbox[0] and b[1] <= t.bbox[1] and b[2] >= t.bbox[2]
                         and b[3] >= t.bbox[3] for b in boxes)]
    if not tables:
        return None
    boxes = [t.bbox for t, _ in tables]

    def outside(obj: dict[str, Any]) -> bool:
        mid_x, mid_y = _pdf_middle(obj)
        return not any(x0 <= mid_x <= x1 and top <= mid_y <= bottom for x0, top, x1, bottom in boxes)

    rest = page.filter(outside)
    if _pdf_gutters(page, rest.extract_words()):  # text in columns outside the tables
        return None
    blocks = [(top, text) for top, text in _pdf_text_lines(rest.chars) if text.strip()]
    for table, rows in tables:
        blocks.append((table.bbox[1], "\n" + pipe_table(rows) + "\n"))
    blocks.sort(key=lambda block: block[0])
    text = "\n".join(text for _, text in blocks)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


# Share of a page's characters that may read right to left (mirrored, or turned upside down) before its
# tables are left to pypdf: pdfplumber reads such text backwards ("m o r f r a f"), where pypdf follows
# the text matrix. A page mostly set sideways (turned by its text matrix, not by /Rotate) goes to pypdf
# too: its "tables" would be read across the turned lines.
_PDF_MAX_BACKWARDS = 0.1
_PDF_MAX_SIDEWAYS = 0.5


def _pdf_left_to_right(chars: list[dict[str, Any]]) -> bool:
    """Whether nearly all of a page's characters read left to right: few mirrored, most upright (a
    rotated heading or a margin stamp is read; a page turned by its text matrix is not)."""
    backwards = sum(1 for c in chars if (c.get("matrix") or (1,))[0] < 0)
    sideways = sum(1 for c in chars if not c.get("upright", True))
    return backwards <= _PDF_MAX_BACKWARDS * len(chars) and sideways <= _PDF_MAX_SIDEWAYS * len(chars)


def _pdf_table_cells(table: Any) -> list[list[str]]:
    """A table's cells as text, row by row (a merged cell's continuation is ""): each character goes to
    the cell its middle falls in, as pdfplumber's own ``Table.extract`` does, and the cell's lines are
    read by :func:`_pdf_text_lines`."""

    def inside(char: dict[str, Any], box: tuple[float, float, float, float]) -> bool:
        mid_x, mid_y = _pdf_middle(char)
        return box[0] <= mid_x < box[2] and box[1] <= mid_y < box[3]

    chars = table.page.chars
    rows: list[list[str]] = []
    for row in table.rows:
        in_row = [c for c in chars if inside(c, row.bbox)]
        rows.append(["" if cell is None else
                     "\n".join(text for _, text in _pdf_text_lines([c for c in in_row if inside(c, cell)]))
                     for cell in row.cells])
    return rows


# Characters closer in height than this (pt) are on one line: pdfplumber's own tolerance.
_PDF_LINE_TOLERANCE = 3.0


def _pdf_text_lines(chars: list[dict[str, Any]]) -> list[tuple[float, str]]:
    """Lines of text from a region's characters, top to bottom, each with its top: upright characters
    grouped by height and read left to right (:func:`_pdf_line_text`); the few set sideways (a rotated
    column heading, a margin stamp) grouped by column and read the way they turn."""
    from pdfplumber.utils import cluster_objects

    upright = [c for c in chars if c.get("upright", True)]
    sideways = [c for c in chars if not c.get("upright", True)]
    lines = [(min(c["top"] for c in line), _pdf_line_text(line))
             for line in _pdf_inline_scripts(cluster_objects(upright, "top", _PDF_LINE_TOLERANCE))]
    for column in cluster_objects(sideways, "x0", _PDF_LINE_TOLERANCE):
        # Laid down along the way the text reads: upwards when turned counter-clockwise (the matrix's
        # b > 0, a margin stamp), downwards otherwise; then read as a line, split where two labels in
        # one column are more than an em apart.
        turned = sorted(({**c, "x0": -c["bottom"], "x1": -c["top"]} if (c.get("matrix") or (1, 0))[1] > 0
                         else {**c, "x0": c["top"], "x1": c["bottom"]} for c in column), key=lambda c: c["x0"])
        start = 0
        for i in range(1, len(turned) + 1):
            if i == len(turned) or turned[i]["x0"] - turned[i - 1]["x1"] > float(turned[i].get("size") or 10.0):
                label = turned[start:i]
                lines.append((min(c["top"] for c in label), _pdf_line_text(label)))
                start = i
    lines.sort(key=lambda line: line[0])
    return lines


# Glyphs at most this share of a line's type size, sitting within that line's height, are its subscripts
# and superscripts: H2O's "2" is set lower than the line's tops allow (pdfplumber's 3 pt), and would
# otherwise read as a line of its own ("H O" above "2").
_PDF_SCRIPT_SIZE = 0.85


def _pdf_inline_scripts(clusters: list[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    """Lines (clusters of characters by height) with every line of small glyphs whose middle lies
    within the height of a line of larger type, and fewer glyphs than it, joined to that line (the
    nearest such one by middle): subscripts and superscripts read in place. A drop cap hosts nothing:
    the lines beside it have more glyphs than it."""
    def size(line: list[dict[str, Any]]) -> float:
        return statistics.median(float(c.get("size") or 0.0) for c in line)

    def middle(line: list[dict[str, Any]]) -> float:
        return statistics.median((c["top"] + c["bottom"]) / 2 for c in line)

    sizes = [size(line) for line in clusters]
    middles = [middle(line) for line in clusters]
    spans = [(min(c["top"] for c in line), max(c["bottom"] for c in line)) for line in clusters]
    joined: list[list[dict[str, Any]]] = [list(line) for line in clusters]
    alive = [True] * len(clusters)
    for i in sorted(range(len(clusters)), key=lambda k: sizes[k]):  # the smallest type first
        hosts = [j for j in range(len(clusters))
                 if j != i and alive[j] and sizes[i] <= _PDF_SCRIPT_SIZE * sizes[j]
                 and len(clusters[j]) > len(clusters[i]) and spans[j][0] <= middles[i] <= spans[j][1]
                 and _pdf_beside_glyphs(clusters[i], joined[j], sizes[i], sizes[j])]
        if hosts:
            host = min(hosts, key=lambda j: abs(middles[j] - middles[i]))
            joined[host].extend(joined[i])
            alive[i] = False
    return [line for line, keep in zip(joined, alive, strict=True) if keep]


def _pdf_beside_glyphs(small: list[dict[str, Any]], line: list[dict[str, Any]], small_size: float,
                      line_size: float) -> bool:
    """Whether small glyphs sit between a line's glyphs as scripts do: each run of them starts or ends
    within half an em of one of the line's glyphs, and none covers half its width of one (two small
    lines stacked beside a heading, a box of small print at the end of a line, stay lines of their own)."""
    ordered = sorted(small, key=lambda c: c["x0"])
    runs: list[list[dict[str, Any]]] = [[ordered[0]]]
    for c in ordered[1:]:
        if c["x0"] - runs[-1][-1]["x1"] > 0.5 * small_size:
            runs.append([c])
        else:
            runs[-1].append(c)
    reach = 0.5 * line_size
    for run in runs:
        left, right = run[0]["x0"], max(c["x1"] for c in run)
        if not any(abs(left - g["x1"]) <= reach or abs(g["x0"] - right) <= reach for g in line):
            return False
    return not any(min(c["x1"], g["x1"]) - max(c["x0"], g["x0"]) > 0.5 * (c["x1"] - c["x0"])
                   for c in small for g in line)


# A gap between two letters wider than the line's own gap between letters by this share of the type
# size is a space between words: TeX and some word processors place each word instead of writing a
# space glyph, and their narrowest word gaps are about 0.2 em.
_PDF_WORD_GAP_EM = 0.15
# Letter spacing (tracking) wider than this share of the type size is not read as letter spacing.
_PDF_MAX_TRACKING_EM = 1.0


def _pdf_line_text(chars: list[dict[str, Any]]) -> str:
    """One line's text from its characters, left to right, words rebuilt from the gaps between them.

    pdfplumber's default joins characters under 3 pt apart, whatever the type size: small type set
    without space glyphs runs words together ("infrastructuresen"), and letter-spaced type comes out a
    letter at a time ("S p a c e d"). Here a space glyph always ends a word; the usual gap between
    letters is the line's own (the lower median of the gaps no space glyph bridges, so tracked letters
    and CJK set apart stay together); a gap wider than that by 0.15 em is a word break too. Ligature
    glyphs are written out ("ﬁ" -> "fi"), as pdfplumber does.
    """
    from pdfplumber.utils.text import LIGATURES

    # Left to right by where each glyph starts (a combining mark drawn over its letter comes after it);
    # a space glyph starting where a letter starts goes before it.
    ordered = sorted(chars, key=lambda c: (round(c["x0"], 1), bool(c["text"].strip())))
    if not ordered:
        return ""
    size = statistics.median(float(c.get("size") or 0) for c in ordered) or 10.0
    # Each letter with whether a space glyph comes before it and its gap to the letters before (from the
    # furthest right any of them reaches: a mark or an overlapping glyph does not open a gap).
    letters: list[tuple[str, bool, float]] = []
    reach: float | None = None
    spaced = False
    for char in ordered:
        if not char["text"].strip():
            spaced = True
            continue
        letters.append((char["text"], spaced, char["x0"] - reach if reach is not None else 0.0))
        reach = char["x1"] if reach is None else max(reach, char["x1"])
        spaced = False
    # The usual gap between letters, from the gaps no space glyph bridges: tracked (letter-spaced) type
    # and CJK set apart have one; the lower median, so that a line of two short words keeps 0.
    gaps = [gap for _, spaced, gap in letters[1:] if not spaced]
    tracking = min(max(statistics.median_low(gaps), 0.0), _PDF_MAX_TRACKING_EM * size) if gaps else 0.0
    limit = tracking + _PDF_WORD_GAP_EM * size
    out: list[str] = []
    for i, (text, spaced, gap) in enumerate(letters):
        if i and (spaced or gap > limit):
            out.append(" ")
        out.append(LIGATURES.get(text, text))
    return "".join(out)
