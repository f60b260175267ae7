"""Word documents as Markdown: the body's XML walked in document order (headings, numbered lists,
tables, revisions, content controls, fields, text boxes), footnotes and endnotes at the end."""

from __future__ import annotations

import io
import logging
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


from graphrag.ingest.load_base import (LIST_INDENT_LEVELS, LoadError, escape_markdown, file_title, image_text,
                                       join_blocks, metadata_title, small_count)
from graphrag.ingest.textprep import markdown_title, pipe_table
from graphrag.models import Document

log = logging.getLogger(__name__)


# A real .docx has tens of entries and its XML compresses about 5-15x.
DOCX_MAX_ENTRIES = 10_000


DOCX_MAX_RATIO = 100


def load_docx(path: Path, data: bytes) -> list[Document]:
    """A Word document's body as Markdown-like text: headings, lists (numbered ones numbered), pipe tables,
    and its footnotes and endnotes at the end; page headers, footers and comments are left out.

    The body's XML is read directly (python-docx opens the package): its paragraph API skips tracked
    insertions, content controls, fields, text boxes and equations, and its table API rows in content
    controls, all of which hold document text.
    """
    import zlib

    import docx
    from lxml import etree

    # Zip bomb guards, all from the archive's directory, before anything is inflated. zipfile never
    # inflates an entry past its declared size (it stops, then fails the CRC), so declared sizes are
    # a real bound. The entry count is checked before ZipFile parses the directory: it builds an object
    # per entry (~0.5 KB), so a 50 MB file of empty entries would otherwise cost ~0.3 GB.
    if data.startswith(_OLE_MAGIC):
        raise LoadError(f"{path.name}: {_ole_kind(data)}")
    entries = data.count(b"PK\x01\x02")  # central directory signatures: an upper bound on entries
    if entries > DOCX_MAX_ENTRIES:
        raise LoadError(f"{path.name}: DOCX has {entries} zip entries, over the {DOCX_MAX_ENTRIES} limit "
                        "(zip bomb guard)")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
        total = sum(info.file_size for info in infos)
        if total > 20 * len(data) + 50_000_000:
            raise LoadError(f"{path.name}: DOCX expands to {total} bytes (zip bomb guard)")
        for info in infos:
            if info.file_size > 10_000_000 and info.file_size > DOCX_MAX_RATIO * max(info.compress_size, 1):
                raise LoadError(f"{path.name}: DOCX entry {info.filename[:100]!r} expands {info.compress_size} "
                                f"bytes to {info.file_size} (over {DOCX_MAX_RATIO}x; zip bomb guard)")
        try:
            document = docx.Document(io.BytesIO(data))
        except KeyError:
            # A relationship to a part the archive lacks (a styles or numbering part dropped by a
            # converter): Word repairs such a file, so the document is read without those parts.
            document = docx.Document(io.BytesIO(_docx_without_dangling_relationships(data)))
        reader = _DocxReader(document)
        body = join_blocks(reader.body_lines())
    except LoadError:
        raise
    except RecursionError:
        raise LoadError(f"{path.name}: unreadable DOCX (tables nested too deeply)") from None
    # zlib.error (a corrupt deflate stream) and XMLSyntaxError (malformed XML parts, or an entity
    # expansion that lxml stops) used to escape as raw errors (a 500 on upload); zipfile raises
    # NotImplementedError for compression it lacks (Deflate64) and RuntimeError for encrypted entries.
    except (zipfile.BadZipFile, zlib.error, etree.XMLSyntaxError, KeyError, ValueError, OSError,
            NotImplementedError, RuntimeError) as exc:
        raise LoadError(f"{path.name}: unreadable DOCX ({_docx_error(exc)})") from None
    title, meta = "", {}
    try:  # metadata only: a broken docProps part does not make the document unreadable
        props = document.core_properties
        title = metadata_title(props.title or "")
        meta = {"author": props.author} if props.author else {}
    except Exception as exc:  # noqa: BLE001
        log.debug("DOCX core properties skipped: %s: %s", type(exc).__name__, exc)
    title = title or markdown_title(body) or file_title(path)
    return [Document(source=str(path), title=title, text=body, kind="markdown", metadata=meta)]


def _docx_without_dangling_relationships(data: bytes) -> bytes:
    """The DOCX package with each relationship to an internal part it does not hold taken out."""
    import posixpath
    from urllib.parse import unquote

    from lxml import etree

    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as archive, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as repaired:
        names = {name.lower() for name in archive.namelist()}
        for info in archive.infolist():
            content = archive.read(info)
            if info.filename.endswith(".rels"):
                # word/_rels/document.xml.rels holds the relationships of word/document.xml: targets
                # are relative to word/ (or absolute from the package root with a leading "/").
                base = posixpath.dirname(posixpath.dirname(info.filename))
                tree = etree.fromstring(content, etree.XMLParser(resolve_entities=False, no_network=True))
                for rel in list(tree):
                    target = unquote(rel.get("Target") or "")  # "media/image%201.png"
                    if rel.get("TargetMode") == "External" or not target:
                        continue
                    part = target.lstrip("/") if target.startswith("/") else posixpath.normpath(
                        posixpath.join(base, target))
                    if part.lower() not in names:  # part names ignore case (OPC)
                        tree.remove(rel)
                content = etree.tostring(tree, xml_declaration=True, encoding="UTF-8", standalone=True)
            repaired.writestr(info, content)
    return out.getvalue()


# An OLE compound file, not a zip: Word wraps a password-protected DOCX in one, and Word 97-2003
# documents are one (a ".doc" renamed, or saved with the wrong extension).
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def _ole_kind(data: bytes) -> str:
    """Why an OLE compound file given as a DOCX cannot be read, from the streams its directory names."""
    if "EncryptedPackage".encode("utf-16-le") in data:
        return "password-protected DOCX (encrypted): save it without a password to ingest it"
    if "WordDocument".encode("utf-16-le") in data:
        return "a Word 97-2003 document (.doc), not a DOCX: save it as .docx to ingest it"
    return "an OLE compound file, not a DOCX (zip) package"


def _docx_error(exc: Exception) -> str:
    """What went wrong reading a DOCX, in a line without Python object reprs."""
    import zlib

    text = str(exc)
    if isinstance(exc, ValueError) and "is not a Word file" in text:
        content_type = re.search(r"content type is '([^']*)'", text)
        return f"not a Word document: content type {content_type.group(1) if content_type else 'unknown'}"
    if isinstance(exc, KeyError) and "officeDocument" in text:
        return "no main document part; Strict Open XML documents are not supported"
    kind = "corrupt compressed data" if isinstance(exc, zlib.error) else type(exc).__name__
    return f"{kind}: {text[:200]}"


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


_M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"


_MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"


_WP = "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_DGM = "{http://schemas.openxmlformats.org/drawingml/2006/diagram}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"


# Wrappers whose content is document text: content controls, custom XML, tracked insertions and moves.
_DOCX_WRAPPERS = frozenset({_W + "sdt", _W + "sdtContent", _W + "customXml", _W + "ins", _W + "moveTo",
                            _W + "smartTag", _W + "fldSimple", _W + "hyperlink", _W + "r", _W + "dir", _W + "bdo"})


# Never text: deleted and moved-away runs, properties, a field's code, the VML copy of a drawing.
_DOCX_SKIP = frozenset({_W + "del", _W + "moveFrom", _W + "pPr", _W + "rPr", _W + "sdtPr", _W + "sdtEndPr",
                        _W + "instrText", _W + "delInstrText", _MC_FALLBACK, _W + "commentReference"})


class _DocxReader:
    """Walks a python-docx document's XML in document order."""

    def __init__(self, document: Any) -> None:
        self.document = document
        self.styles = self._styles()
        self.numbering = self._numbering()
        self.counters: dict[tuple[str, int], int] = {}
        self.notes: list[tuple[str, str]] = []  # (mark, text) of footnotes/endnotes referenced, in order
        self.drop_cap = ""  # a drop cap's letters, waiting for the paragraph they begin

    # -- parts -------------------------------------------------------------------------------------
    def _part_xml(self, reltype_suffix: str) -> Any:
        from docx.oxml import parse_xml

        for rel in self.document.part.rels.values():
            if rel.reltype.endswith(reltype_suffix) and not rel.is_external:
                try:
                    return parse_xml(rel.target_part.blob)
                except Exception as exc:  # noqa: BLE001 - an optional part; the body is still read
                    log.debug("DOCX part %s skipped: %s", reltype_suffix, exc)
        return None

    def _styles(self) -> dict[str, tuple[str, str, int | None, Any]]:
        """styleId -> (name, basedOn id, outline level, numPr element) of paragraph styles."""
        root = self._part_xml("/styles")
        out: dict[str, tuple[str, str, int | None, Any]] = {}
        if root is None:
            return out
        for style in root.iter(_W + "style"):
            sid = style.get(_W + "styleId") or ""
            name_el, based_el = style.find(_W + "name"), style.find(_W + "basedOn")
            ppr = style.find(_W + "pPr")
            outline = ppr.find(_W + "outlineLvl") if ppr is not None else None
            level = outline.get(_W + "val") if outline is not None else None
            out[sid] = ((name_el.get(_W + "val") or "") if name_el is not None else "",
                        (based_el.get(_W + "val") or "") if based_el is not None else "",
                        (value if (value := small_count(level, -1, 9)) >= 0 else None),
                        ppr.find(_W + "numPr") if ppr is not None else None)
        return out

    def _numbering(self) -> dict[str, dict[int, tuple[str, int]]]:
        """numId -> level -> (format, start)."""
        root = self._part_xml("/numbering")
        if root is None:
            return {}
        abstract: dict[str, dict[int, tuple[str, int]]] = {}
        for node in root.iter(_W + "abstractNum"):
            levels: dict[int, tuple[str, int]] = {}
            for lvl in node.iter(_W + "lvl"):
                fmt, start = lvl.find(_W + "numFmt"), lvl.find(_W + "start")
                ilvl = lvl.get(_W + "ilvl") or "0"
                first = start.get(_W + "val") if start is not None else "1"
                levels[small_count(ilvl, 0, 8)] = (
                    (fmt.get(_W + "val") or "decimal") if fmt is not None else "decimal",
                    small_count(first, 1, 10**6))
            abstract[node.get(_W + "abstractNumId") or ""] = levels
        out: dict[str, dict[int, tuple[str, int]]] = {}
        for num in root.iter(_W + "num"):
            ref = num.find(_W + "abstractNumId")
            if ref is not None:
                out[num.get(_W + "numId") or ""] = abstract.get(ref.get(_W + "val") or "", {})
        return out

    # -- the body ----------------------------------------------------------------------------------
    def body_lines(self) -> list[str]:
        lines: list[str] = []
        self._blocks(self.document.element.body, lines)
        notes = {kind: self._notes(kind) for kind in ("footnote", "endnote")}
        for mark, key in self.notes:
            kind, _, note_id = key.partition(":")
            text = notes[kind].get(note_id, "")
            if text:
                lines.append(f"[{mark}] {text}")
        return lines

    def _blocks(self, root: Any, lines: list[str], flat: bool = False) -> None:
        """Paragraphs and tables under ``root`` in document order (iterative: nesting cannot recurse);
        ``flat``: a table's cells as lines of their own (a table inside a cell)."""
        pending = [iter(root)]
        while pending:
            node = next(pending[-1], None)
            if node is None:
                pending.pop()
            elif node.tag == _W + "p":
                self._paragraph(node, lines)
            elif node.tag == _W + "tbl" and not flat and self._one_column(node):
                # a box around text (a callout, a framed note) or a list: its cells' paragraphs, headings
                # and tables read as the document's own
                pending.append(child for tr in self._children(node, _W + "tr")
                               for tc in self._children(tr, _W + "tc") for child in tc)
            elif node.tag == _W + "tbl":
                rows = self._table_rows(node)
                if flat:
                    lines += [cell.replace("\\|", "|") for row in rows for cell in row if cell]
                elif rows:
                    lines.append(pipe_table(rows))
            elif node.tag in _DOCX_WRAPPERS:
                pending.append(iter(node))

    def _paragraph(self, p: Any, lines: list[str]) -> None:
        boxes: list[Any] = []
        text = self._text(p, boxes).strip()
        ppr = p.find(_W + "pPr")
        frame = ppr.find(_W + "framePr") if ppr is not None else None
        if frame is not None and frame.get(_W + "dropCap") in ("drop", "margin") and not boxes:
            self.drop_cap += text  # a drop cap is its own paragraph: the first letter of the next one
            return
        if self.drop_cap and text:
            text, self.drop_cap = self.drop_cap + text, ""
        if text:
            lines.append(self._render(p, text))
        for box in boxes:  # text boxes and diagrams anchored in the paragraph: their own blocks after it
            if box.tag == _DGM + "relIds":
                lines += self._diagram_lines(box.get(_R + "dm") or "")
            else:
                self._blocks(box, lines)

    def _image(self, doc_pr: Any) -> str:
        """A picture's alt text as a Markdown image (``![A heart that has leaked out](media/image2.jpg)``),
        or "" when it has none worth reading (:func:`~graphrag.ingest.load_base.image_text`)."""
        alt = doc_pr.get("descr") or doc_pr.get("title") or ""
        if not alt:
            return ""
        target = ""
        graphic = doc_pr.getparent()
        blip = next(graphic.iter(_A + "blip"), None) if graphic is not None else None
        rel = self.document.part.rels.get(blip.get(_R + "embed") or "") if blip is not None else None
        if rel is not None and not rel.is_external:
            target = str(rel.target_ref)
        return image_text(alt, target)

    def _diagram_lines(self, rel_id: str) -> list[str]:
        """A SmartArt diagram's text as a list, each node under its parent (its data part's points and
        their parent-of connections, in the part's order)."""
        from docx.oxml import parse_xml

        rel = self.document.part.rels.get(rel_id)
        if rel is None or rel.is_external:
            return []
        try:
            root = parse_xml(rel.target_part.blob)
        except Exception as exc:  # noqa: BLE001 - a damaged diagram: the body is still read
            log.debug("DOCX diagram %s skipped: %s", rel_id, exc)
            return []
        texts: dict[str, str] = {}
        order: list[str] = []
        for pt in root.iter(_DGM + "pt"):
            if pt.get("type", "node") != "node":
                continue
            key = pt.get("modelId") or ""
            body = pt.find(_DGM + "t")
            paras = ["".join(t.text or "" for t in para.iter(_A + "t")) for para in body.iter(_A + "p")] if body is not None else []
            text = " ".join(" ".join(paras).split())
            order.append(key)
            if text:
                texts[key] = text
        parent: dict[str, str] = {}
        for cxn in root.iter(_DGM + "cxn"):
            if cxn.get("type", "parOf") == "parOf":
                parent.setdefault(cxn.get("destId") or "", cxn.get("srcId") or "")
        out = []
        for key in order:
            if key not in texts:
                continue
            depth, up, seen = 0, parent.get(key), {key}
            while up and up not in seen and depth < LIST_INDENT_LEVELS:
                seen.add(up)
                depth += up in texts  # the diagram's own root point has no text
                up = parent.get(up)
            out.append("  " * depth + "- " + escape_markdown(texts[key]))
        return ["\n".join(out)] if out else []

    def _text(self, root: Any, boxes: list[Any] | None = None) -> str:
        """The visible text under ``root``: runs in insertions, content controls, fields, hyperlinks and
        equations included; deletions and field codes not. Text boxes go to ``boxes`` (or inline)."""
        parts: list[str] = []
        pending = [iter(root)]
        while pending:
            node = next(pending[-1], None)
            if node is None:
                pending.pop()
                continue
            tag = node.tag
            if not isinstance(tag, str) or tag in _DOCX_SKIP:
                continue
            if tag == _W + "t" or tag == _M + "t":
                parts.append(node.text or "")
            elif tag == _W + "tab":
                parts.append("\t")
            elif tag in (_W + "br", _W + "cr"):
                parts.append("\n")
            elif tag == _W + "noBreakHyphen":
                parts.append("-")
            elif tag == _W + "sym":
                parts.append(_docx_symbol(node.get(_W + "char") or ""))
            elif tag in (_W + "footnoteReference", _W + "endnoteReference"):
                kind = "footnote" if tag == _W + "footnoteReference" else "endnote"
                mark = str(len(self.notes) + 1)
                self.notes.append((mark, f"{kind}:{node.get(_W + 'id')}"))
                parts.append(f"[{mark}]")
            elif tag == _W + "txbxContent" and boxes is not None:
                boxes.append(node)
            elif tag == _WP + "docPr":
                parts.append(self._image(node))
            elif tag == _DGM + "relIds" and boxes is not None:
                boxes.append(node)
            elif tag == _W + "p" and parts:  # a paragraph inside (a text box read inline)
                parts.append(" ")
                pending.append(iter(node))
            else:
                pending.append(iter(node))
        return "".join(parts)

    def _render(self, p: Any, text: str) -> str:
        ppr = p.find(_W + "pPr")
        style_el = ppr.find(_W + "pStyle") if ppr is not None else None
        style_id = (style_el.get(_W + "val") or "") if style_el is not None else ""
        level = self._heading_level(ppr, style_id)
        if level is not None:
            return "#" * level + " " + " ".join(text.split())
        marker = self._list_marker(ppr, style_id)
        if marker is not None:
            return marker + " ".join(text.split())
        # Plain text that would read as Markdown structure ("# not a heading", "- literal dash") is escaped.
        return escape_markdown("\n".join(line.strip() for line in text.splitlines()))

    def _style_chain(self, style_id: str) -> Iterator[tuple[str, str, int | None, Any]]:
        seen: set[str] = set()
        while style_id and style_id not in seen and style_id in self.styles:
            seen.add(style_id)
            style = self.styles[style_id]
            yield style
            style_id = style[1]

    def _heading_level(self, ppr: Any, style_id: str) -> int | None:
        """1-6 for a heading: a Title or "Heading N" style (or one based on it), or an outline level."""
        outline = ppr.find(_W + "outlineLvl") if ppr is not None else None
        if outline is not None and 0 <= (value := small_count(outline.get(_W + "val"), -1, 9)) < 9:
            return min(value + 1, 6)
        for name, _, level, _ in self._style_chain(style_id):
            lowered = name.lower()
            if lowered == "title":
                return 1
            if lowered.startswith("heading ") and small_count(lowered[8:], 0, 9) > 0:
                return min(small_count(lowered[8:], 0, 9), 6)
            if level is not None and level < 9:
                return min(level + 1, 6)
        if not self.styles and style_id.lower().startswith("heading") and small_count(style_id[7:], 0, 9) > 0:
            return min(small_count(style_id[7:], 0, 9), 6)  # no styles part: Word's own style ids
        return None

    def _list_marker(self, ppr: Any, style_id: str) -> str | None:
        """"- " or "3. " (indented by level) for a list paragraph: numbering on it or on its style;
        a "List ..." style without numbering is a bullet unless it only continues an item."""
        num = ppr.find(_W + "numPr") if ppr is not None else None
        for _, _, _, style_num in self._style_chain(style_id):
            if num is not None:
                break
            num = style_num
        if num is not None:
            num_id_el, ilvl_el = num.find(_W + "numId"), num.find(_W + "ilvl")
            num_id = (num_id_el.get(_W + "val") or "") if num_id_el is not None else ""
            raw_level = (ilvl_el.get(_W + "val") or "0") if ilvl_el is not None else "0"
            level = small_count(raw_level, 0, 8)
            if num_id and num_id != "0":
                fmt, start = self.numbering.get(num_id, {}).get(level, ("bullet", 1))
                for key in [k for k in self.counters if k[0] == num_id and k[1] > level]:
                    del self.counters[key]  # a new item at this level restarts the deeper ones
                indent = "  " * min(level, LIST_INDENT_LEVELS)
                if fmt in ("bullet", "none"):
                    return indent + "- "
                count = self.counters.get((num_id, level), start - 1) + 1
                self.counters[(num_id, level)] = count
                return f"{indent}{count}. "
        name = next((n for n, _, _, _ in self._style_chain(style_id)), "")
        if name.startswith("List") and "Continue" not in name and name not in ("List Paragraph", "List"):
            return "- "
        return None

    # -- tables ------------------------------------------------------------------------------------
    def _children(self, node: Any, tag: str) -> Iterator[Any]:
        """``tag`` children of ``node``, also inside content controls and custom XML around them."""
        pending = [iter(node)]
        while pending:
            child = next(pending[-1], None)
            if child is None:
                pending.pop()
            elif child.tag == tag:
                yield child
            elif child.tag in (_W + "sdt", _W + "sdtContent", _W + "customXml"):
                pending.append(iter(child))

    def _one_column(self, tbl: Any) -> bool:
        """Whether a table has one column (no row with two cells)."""
        return all(sum(1 for _ in self._children(tr, _W + "tc")) <= 1 for tr in self._children(tbl, _W + "tr"))

    def _table_rows(self, tbl: Any) -> list[list[str]]:
        """Rows of cell text: a cell merged across columns once (then empty cells), one merged down
        in each row it spans (as an HTML rowspan: every row reads whole); nested tables flattened into
        their cell."""
        rows: list[list[str]] = []
        above: dict[int, str] = {}  # column -> the text of the cell there in the row above
        for tr in self._children(tbl, _W + "tr"):
            cells: list[str] = []
            for tc in self._children(tr, _W + "tc"):
                tcpr = tc.find(_W + "tcPr")
                merge = tcpr.find(_W + "vMerge") if tcpr is not None else None
                span_el = tcpr.find(_W + "gridSpan") if tcpr is not None else None
                continued = merge is not None and (merge.get(_W + "val") or "continue") == "continue"
                text = above.get(len(cells), "") if continued else self._cell_text(tc)
                above[len(cells)] = text
                cells.append(text)
                span = (span_el.get(_W + "val") or "1") if span_el is not None else "1"
                cells.extend([""] * (small_count(span, 1, 50) - 1))
            if any(cells):
                rows.append(cells)
        return rows

    def _cell_text(self, tc: Any) -> str:
        """A cell's paragraphs and nested tables, in order, on one line, pipes escaped."""
        lines: list[str] = []
        self._blocks(tc, lines, flat=True)
        text = " ".join(line.lstrip("\\").replace("\n", " ") for line in lines)
        return " ".join(text.split()).replace("|", "\\|")

    # -- notes -------------------------------------------------------------------------------------
    def _notes(self, kind: str) -> dict[str, str]:
        root = self._part_xml(f"/{kind}s")
        out: dict[str, str] = {}
        if root is None:
            return out
        for note in root.iter(_W + kind):
            if (note.get(_W + "type") or "normal") == "normal":
                out[note.get(_W + "id") or ""] = " ".join(self._text(note).split())
        return out


def _docx_symbol(code: str) -> str:
    """A ``w:sym`` character: symbol fonts put theirs at U+F0xx, where the low byte is the Latin-1 one."""
    try:
        value = int(code, 16)
    except ValueError:
        return ""
    if 0xF000 <= value <= 0xF0FF:
        value -= 0xF000
    return chr(value) if 0x20 <= value < 0x110000 else ""
