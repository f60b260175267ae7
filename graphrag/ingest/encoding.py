"""Text files in the encoding they were written in.

Most files are UTF-8 and are read as such. Older text files, and files saved by Windows tools, are
often in a legacy encoding: Windows-1252 ("These smart quotes" in ``\\x93...\\x94``), Latin-1, the
Cyrillic code pages, Shift JIS, or UTF-16 with a byte-order mark. Those were refused before ("not valid
UTF-8 text"), so their text was lost. :func:`decode_text` reads them:

1. UTF-8 (with or without a byte-order mark) as it is, and UTF-16 without its byte-order mark (NUL
   bytes on one side of every code unit that has one);
2. otherwise, the encoding ``charset-normalizer`` finds most plausible, when it also recognises a
   language in the text or the file has a byte-order mark; among encodings it finds equally good,
   Windows-1252 first (a Western file's "espa\\xf1ol" is "español" in both Windows-1252 and Windows-1250,
   but "não" only in the first);
3. otherwise Windows-1252, the most common legacy encoding, when it decodes every byte (short files
   give the detector too little to go on: "caf\\xe9 au lait");
4. otherwise what the detector found, if anything (a short Shift JIS file).

What decodes to text full of control characters is binary, not text, and is refused.
"""

from __future__ import annotations

import re

__all__ = ["NotText", "decode_text", "has_bom"]

_BOMS = (b"\xff\xfe", b"\xfe\xff")  # UTF-16 and UTF-32 (its little-endian mark starts the same)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")  # not tab, newline, form feed, return
_MAX_CONTROL_SHARE = 0.01
_MAX_CHAOS = 0.1  # charset-normalizer's measure of mess in the decoded text (0 is clean)
_DETECT_BYTES = 1_000_000  # the detector reads this much (it samples; the whole file is then decoded)


def has_bom(data: bytes) -> bool:
    """Whether ``data`` opens with a UTF-16 or UTF-32 byte-order mark (its NUL bytes are text)."""
    return data.startswith(_BOMS)


class NotText(ValueError):
    """Bytes that are not text in any encoding we read (the message says why)."""


def decode_text(data: bytes, legacy: bool = True) -> tuple[str, str]:
    """The text of ``data`` and its encoding (``"utf-8"`` for most files); :class:`NotText` when it is
    binary or in no encoding that decodes it to text (UTF-8 alone where ``legacy`` is False)."""
    if b"\x00" in data and not has_bom(data):
        utf16 = _utf16_without_bom(data)
        if utf16 is None:
            raise NotText("binary content (NUL bytes) in a text file")
        return utf16
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError as exc:
        utf8_error = exc.start
    if not legacy:
        raise NotText(f"not valid UTF-8 text (byte {utf8_error})")
    detected = _detected(data)
    if detected is not None and detected[2]:
        decoded: tuple[str, str] | None = detected[:2]
    else:
        decoded = _windows_1252(data) or (detected[:2] if detected is not None else None)
    if decoded is None:
        raise NotText(f"not valid UTF-8 text (byte {utf8_error}), and not in an encoding that could be told")
    text, encoding = decoded
    if len(_CONTROL.findall(text)) > _MAX_CONTROL_SHARE * max(len(text), 1):
        raise NotText(f"not valid UTF-8 text (byte {utf8_error}), and binary in any other encoding")
    return text, encoding


def _utf16_without_bom(data: bytes) -> tuple[str, str] | None:
    """UTF-16 written without its byte-order mark (some Windows tools and exports): every NUL byte on
    one side of its code unit (the high byte of ASCII), in a fifth of the units at least, and text
    once decoded. None: binary after all."""
    if len(data) % 2:
        return None
    units = len(data) // 2
    for encoding, zeros, others in (("utf-16-le", data[1::2], data[0::2]), ("utf-16-be", data[0::2], data[1::2])):
        if b"\x00" in others or zeros.count(0) < units / 5:
            continue
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            return None
        if len(_CONTROL.findall(text)) <= _MAX_CONTROL_SHARE * max(len(text), 1):
            return text, encoding
    return None


def _detected(data: bytes) -> tuple[str, str, bool] | None:
    """The most plausible decoding by charset-normalizer (text, encoding, and whether it can be
    trusted over Windows-1252: a language recognised in it, or a byte-order mark)."""
    import charset_normalizer

    matches = list(charset_normalizer.from_bytes(data[:_DETECT_BYTES]))
    if not matches:
        return None
    best = min(matches, key=lambda m: (m.chaos, -m.coherence))
    if best.chaos > _MAX_CHAOS:
        return None
    tied = [m for m in matches if m.chaos == best.chaos and m.coherence == best.coherence]
    chosen = next((m for m in tied if m.encoding == "cp1252"), best)
    try:
        return data.decode(chosen.encoding), chosen.encoding, bool(chosen.bom or chosen.coherence > 0)
    except (UnicodeDecodeError, LookupError):  # the sample decoded, the rest of the file does not
        return None


def _windows_1252(data: bytes) -> tuple[str, str] | None:
    try:
        return data.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:  # 0x81, 0x8d, 0x8f, 0x90 and 0x9d are not characters in it
        return None
