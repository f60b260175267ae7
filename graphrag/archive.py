"""The portable collection archive: a tar stream (optionally gzip) of JSON-lines members.

Layout, in this order::

    graphrag-archive.json           header: format, version, collection, embedding model, text config
    parts/000001/documents.jsonl    a run of documents (in id order) ...
    parts/000001/chunks.jsonl       ... their chunks, vectors as base64 float32 (little endian)
    parts/000001/representations.jsonl  their extended-search titles, summaries, propositions (version 2)
    parts/000001/entities.jsonl     entities first used in this part, with their name vector
    parts/000001/mentions.jsonl     (chunk, entity key, count, label) of this part's chunks
    parts/000001/relations.jsonl    relations whose last evidence document is in this part
    parts/000002/...
    manifest.json                   last: everything in the header plus counts and the SHA-256,
                                    size and row count of every other member

Each part is small (about ``part_chunks`` chunks), so writing and reading need memory for one part,
not for the collection, and the archive can be written to a socket as it is produced. The manifest
comes last because its checksums are known only then: a reader verifies an archive in one pass before
it trusts any of it, and a truncated archive lacks its manifest. This module is pure (no stores).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import re
import tarfile
import time
import zlib
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from graphrag.errors import InvalidInput

FORMAT = "graphrag-collection"
#: Version 2 added each part's ``representations`` member (extended search); version 1 archives,
#: which have none, are still read.
FORMAT_VERSION = 2
HEADER = "graphrag-archive.json"
MANIFEST = "manifest.json"
PART_KINDS = ("documents", "chunks", "representations", "entities", "mentions", "relations")
_KINDS_BY_VERSION = {1: tuple(k for k in PART_KINDS if k != "representations"), 2: PART_KINDS}
VECTOR_ENCODING = "base64-float32-le"
#: A member larger than this is not one we wrote (parts hold about a thousand chunks).
MAX_MEMBER_BYTES = 1 << 30
COMPRESSIONS = ("gzip", "none")
_PART_RE = re.compile(r"^parts/(\d{6})/(documents|chunks|representations|entities|mentions|relations)\.jsonl$")
_GZIP_MAGIC = b"\x1f\x8b"


class ArchiveError(InvalidInput):
    """The file is not a graphrag collection archive, or it is damaged: nothing was written."""


def part_kinds(version: int) -> tuple[str, ...]:
    """The members of a part, in order, in archives of format ``version``."""
    return _KINDS_BY_VERSION.get(version, PART_KINDS)


def part_member(part: int, kind: str) -> str:
    """The member name of one kind of rows of a part (parts count from 1)."""
    return f"parts/{part:06d}/{kind}.jsonl"


def encode_vector(vector: Any) -> str | None:
    """A vector as base64 of its float32 little-endian bytes (exact for the float32 vectors we store)."""
    if vector is None:
        return None
    if hasattr(vector, "to_numpy"):  # pgvector's Vector
        vector = vector.to_numpy()
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def decode_vector(text: Any, dim: int, where: str) -> np.ndarray | None:
    """The float32 vector of :func:`encode_vector`; a wrong length or encoding is an :class:`ArchiveError`."""
    if text is None:
        return None
    if not isinstance(text, str):
        raise ArchiveError(f"{where}: a vector must be a base64 string")
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError:
        raise ArchiveError(f"{where}: a vector is not valid base64") from None
    if len(raw) != dim * 4:
        raise ArchiveError(f"{where}: a vector has {len(raw) // 4} dimensions, the archive's model {dim}")
    vec = np.frombuffer(raw, dtype="<f4").astype(np.float32)
    if not np.isfinite(vec).all():
        raise ArchiveError(f"{where}: a vector holds NaN or infinity")
    return vec


def jsonl(rows: list[dict[str, Any]]) -> bytes:
    """Rows as JSON lines (compact, keys sorted: the same rows always give the same bytes)."""
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
                   for r in rows).encode("utf-8")


def read_jsonl(data: bytes, member: str) -> list[dict[str, Any]]:
    """The rows of a JSON-lines member; anything but one JSON object per line is an :class:`ArchiveError`."""
    rows = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ArchiveError(f"{member} is not UTF-8 text") from None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ArchiveError(f"{member} line {n} is not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise ArchiveError(f"{member} line {n} is not a JSON object")
        rows.append(row)
    return rows


@dataclass
class Member:
    """One member as listed in the manifest."""

    name: str
    sha256: str
    bytes: int
    rows: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "sha256": self.sha256, "bytes": self.bytes}
        if self.rows is not None:
            out["rows"] = self.rows
        return out


class _Sink:
    """What the tar writer writes into; :meth:`take` hands over what was written since the last call."""

    def __init__(self, target: IO[bytes] | None = None) -> None:
        self.target = target
        self._buffer = io.BytesIO()
        self.written = 0

    def write(self, data: bytes) -> int:
        self.written += len(data)
        if self.target is not None:
            return self.target.write(data)
        return self._buffer.write(data)

    def flush(self) -> None:
        if self.target is not None:
            self.target.flush()

    def take(self) -> bytes:
        data = self._buffer.getvalue()
        self._buffer = io.BytesIO()
        return data


class ArchiveWriter:
    """Writes an archive as a stream. Members are added whole (one part's rows at a time); with no
    ``target``, :meth:`take` returns the bytes produced so far (for a streamed HTTP response)."""

    def __init__(self, target: IO[bytes] | None = None, *, compression: str = "gzip",
                 compresslevel: int = 6) -> None:
        if compression not in COMPRESSIONS:
            raise InvalidInput(f"unknown compression {compression!r}; choose one of {', '.join(COMPRESSIONS)}")
        self.sink = _Sink(target)
        self._gzip: gzip.GzipFile | None = None
        inner: Any = self.sink
        if compression == "gzip":
            # mtime=0: the same collection gives the same bytes, whenever it is exported.
            self._gzip = gzip.GzipFile(fileobj=self.sink, mode="wb", compresslevel=compresslevel, mtime=0)
            inner = self._gzip
        self._tar = tarfile.open(fileobj=inner, mode="w|", format=tarfile.PAX_FORMAT)
        self.members: list[Member] = []
        self._mtime = int(time.time())

    def add(self, name: str, data: bytes, rows: int | None = None) -> None:
        """Add one member (its checksum goes into the manifest)."""
        info = tarfile.TarInfo(name)
        info.size = len(data)
        info.mtime = self._mtime
        info.mode = 0o644
        self._tar.addfile(info, io.BytesIO(data))
        if name != MANIFEST:
            self.members.append(Member(name, hashlib.sha256(data).hexdigest(), len(data), rows))

    def add_rows(self, name: str, rows: list[dict[str, Any]]) -> None:
        self.add(name, jsonl(rows), len(rows))

    def finish(self, manifest: dict[str, Any]) -> None:
        """Write the manifest (with every member's checksum) and close the stream."""
        body = dict(manifest)
        body["members"] = [m.to_dict() for m in self.members]
        self.add(MANIFEST, json.dumps(body, indent=2, sort_keys=True).encode("utf-8"))
        self._tar.close()
        if self._gzip is not None:
            self._gzip.close()
        self.sink.flush()

    def abort(self) -> None:
        """Close the stream without a manifest (what was written is an incomplete archive)."""
        for close in (self._tar.close, *((self._gzip.close,) if self._gzip is not None else ())):
            try:
                close()
            except (OSError, ValueError):
                pass

    def take(self) -> bytes:
        return self.sink.take()


@dataclass
class Manifest:
    """A verified archive's manifest."""

    data: dict[str, Any]
    parts: int
    members: list[Member] = field(default_factory=list)

    @property
    def collection(self) -> str:
        return str(self.data["collection"])

    @property
    def model(self) -> dict[str, Any]:
        return dict(self.data["embedding_model"])

    @property
    def text_config(self) -> str:
        return str(self.data["text_config"])

    @property
    def counts(self) -> dict[str, int]:
        return dict(self.data.get("counts", {}))

    @property
    def version(self) -> int:
        return int(self.data["format_version"])

    @property
    def kinds(self) -> tuple[str, ...]:
        """The members of each part (they depend on the format version)."""
        return part_kinds(self.version)


def _open_tar(handle: IO[bytes]) -> tarfile.TarFile:
    head = handle.read(2)
    handle.seek(0)
    source: IO[bytes] = (gzip.GzipFile(fileobj=handle, mode="rb")  # type: ignore[assignment]
                         if head == _GZIP_MAGIC else handle)
    try:
        return tarfile.open(fileobj=source, mode="r|")
    except (EOFError, zlib.error) as exc:  # a gzip stream that ends or breaks early
        raise ArchiveError(f"the archive is damaged (truncated or corrupt: {_reason(exc)})") from None
    except (tarfile.TarError, OSError) as exc:
        raise ArchiveError(f"not a graphrag collection archive (not a tar file: {_reason(exc)})") from None


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:160] or type(exc).__name__


def iter_members(path: Path) -> Generator[tuple[str, bytes], None, None]:
    """``(name, bytes)`` of every member in order, read as a stream (one member in memory at a time).

    Damage shows as an :class:`ArchiveError`: a file that is no (gzip'ed) tar, a member that is not a
    plain file or too large, a truncated stream.
    """
    with path.open("rb") as handle:
        tar = _open_tar(handle)
        try:
            while True:
                try:
                    info = tar.next()
                except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
                    raise ArchiveError(f"the archive is damaged (truncated or corrupt: {_reason(exc)})") from None
                if info is None:
                    return
                if not info.isfile():
                    raise ArchiveError(f"not a graphrag collection archive (member {info.name!r} is not a file)")
                if info.size > MAX_MEMBER_BYTES:
                    raise ArchiveError(f"not a graphrag collection archive (member {info.name!r} is too large)")
                try:
                    extracted = tar.extractfile(info)
                    data = extracted.read() if extracted is not None else b""
                except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
                    raise ArchiveError(f"the archive is damaged (truncated or corrupt: {_reason(exc)})") from None
                if len(data) != info.size:
                    raise ArchiveError(f"the archive is damaged (member {info.name} is truncated)")
                yield info.name, data
        finally:
            tar.close()


def parse_header(data: bytes) -> dict[str, Any]:
    """The header member, checked for the format and a version this code reads."""
    try:
        header = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise ArchiveError(f"not a graphrag collection archive ({HEADER} is not JSON)") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ArchiveError(f"not a graphrag collection archive ({HEADER} names another format)")
    version = header.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ArchiveError(f"not a graphrag collection archive ({HEADER} has no format_version)")
    if version < 1:
        raise ArchiveError(f"not a graphrag collection archive ({HEADER} has format_version {version})")
    if version > FORMAT_VERSION:
        raise ArchiveError(f"the archive has format version {version}; this graphrag reads version "
                           f"{FORMAT_VERSION} and older: upgrade graphrag to import it")
    _check_description(header, HEADER)
    return header


def _check_description(data: dict[str, Any], where: str) -> None:
    model = data.get("embedding_model")
    if not isinstance(data.get("collection"), str) or not isinstance(data.get("text_config"), str):
        raise ArchiveError(f"{where} lacks the collection or its text config")
    if not isinstance(model, dict) or not all(isinstance(model.get(k), str) for k in ("name", "provider", "spec")):
        raise ArchiveError(f"{where} lacks the embedding model")
    dim = model.get("dim")
    if not isinstance(dim, int) or isinstance(dim, bool) or not 1 <= dim <= 16000:
        raise ArchiveError(f"{where}: the embedding model's dimension is missing or out of range")


def read_header(path: Path) -> dict[str, Any]:
    """The header (the first member) alone: what the archive holds, before it is verified."""
    for name, data in iter_members(path):
        if name != HEADER:
            break
        return parse_header(data)
    raise ArchiveError(f"not a graphrag collection archive (it does not start with {HEADER})")


def verify(path: Path, on_member: Callable[[str, bytes], None] | None = None) -> Manifest:
    """Read the whole archive once: every member's SHA-256 and size against the manifest, the member
    order, the header against the manifest. ``on_member(name, data)`` sees each part member as it
    passes (row checks); an error it raises is reported only when the checksums hold, so damage is
    named as damage. Returns the manifest; anything wrong is an :class:`ArchiveError`.
    """
    seen: list[Member] = []
    header: dict[str, Any] | None = None
    manifest: dict[str, Any] | None = None
    deferred: ArchiveError | None = None
    expected_part, expected_kind = 1, 0
    kinds: tuple[str, ...] = PART_KINDS
    for name, data in iter_members(path):
        if manifest is not None:
            raise ArchiveError(f"not a graphrag collection archive (member {name!r} after {MANIFEST})")
        if header is None:
            if name != HEADER:
                raise ArchiveError(f"not a graphrag collection archive (it does not start with {HEADER})")
            header = parse_header(data)
            kinds = part_kinds(header["format_version"])
        elif name == MANIFEST:
            try:
                manifest = json.loads(data)
            except (ValueError, UnicodeDecodeError):
                raise ArchiveError(f"the archive is damaged ({MANIFEST} is not JSON)") from None
            if not isinstance(manifest, dict):
                raise ArchiveError(f"the archive is damaged ({MANIFEST} is not an object)")
            continue
        else:
            match = _PART_RE.match(name)
            if not match:
                raise ArchiveError(f"not a graphrag collection archive (unexpected member {name!r})")
            part, kind = int(match.group(1)), match.group(2)
            if (part, kind) != (expected_part, kinds[expected_kind]):
                raise ArchiveError(f"the archive is damaged (member {name} is out of order; expected "
                                   f"{part_member(expected_part, kinds[expected_kind])})")
            expected_kind += 1
            if expected_kind == len(kinds):
                expected_part, expected_kind = expected_part + 1, 0
            if on_member is not None and deferred is None:
                try:
                    on_member(name, data)
                except ArchiveError as exc:
                    deferred = exc
        seen.append(Member(name, hashlib.sha256(data).hexdigest(), len(data)))
    if header is None:
        raise ArchiveError("not a graphrag collection archive (it is empty)")
    if manifest is None:
        raise ArchiveError(f"the archive is incomplete: it ends without its {MANIFEST} (truncated?)")
    if expected_kind != 0:
        raise ArchiveError(f"the archive is damaged (part {expected_part} is incomplete)")
    listed = manifest.get("members")
    if not isinstance(listed, list) or not all(isinstance(m, dict) for m in listed):
        raise ArchiveError(f"the archive is damaged ({MANIFEST} does not list its members)")
    names = [m.get("name") for m in listed]
    if names != [m.name for m in seen]:
        missing = sorted(set(m.name for m in seen) ^ set(str(n) for n in names))
        raise ArchiveError(f"the archive is damaged (its members do not match {MANIFEST}"
                           + (f": {missing[0]}" if missing else ": order differs") + ")")
    members = []
    for entry, got in zip(listed, seen, strict=True):
        if entry.get("sha256") != got.sha256 or entry.get("bytes") != got.bytes:
            raise ArchiveError(f"the archive is damaged: the checksum of {got.name} does not match {MANIFEST} "
                               f"(sha256 {got.sha256[:12]}..., manifest {str(entry.get('sha256'))[:12]}...)")
        rows = entry.get("rows")
        members.append(Member(got.name, got.sha256, got.bytes, rows if isinstance(rows, int) else None))
    if manifest.get("format") != FORMAT or manifest.get("format_version") != header.get("format_version"):
        raise ArchiveError(f"the archive is damaged ({MANIFEST} and {HEADER} disagree on the format)")
    _check_description(manifest, MANIFEST)
    for key in ("collection", "embedding_model", "text_config", "extended"):
        if manifest.get(key) != header.get(key):
            raise ArchiveError(f"the archive is damaged ({MANIFEST} and {HEADER} disagree on {key})")
    if deferred is not None:
        raise deferred
    return Manifest(manifest, expected_part - 1, members)
