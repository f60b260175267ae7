"""Text files in the encoding they were written in (pure logic)."""

from __future__ import annotations

import pytest

from graphrag.ingest.encoding import NotText, decode_text

RUSSIAN = "Однажды, в студёную зимнюю пору, я из лесу вышел; был сильный мороз."
JAPANESE = "日本語のテキストです。これは文字コードを判定するためのテストです。"
PORTUGUESE = "Contratação de sucesso: não contabilize. Español: prácticas y negocios."


@pytest.mark.parametrize(("data", "text", "encoding"), [
    ("Plain UTF-8: naïve café".encode(), "Plain UTF-8: naïve café", "utf-8"),
    ("\ufeffWith a mark".encode(), "With a mark", "utf-8"),
    ("These “smart quotes” are Windows’".encode("cp1252"), "These “smart quotes” are Windows’", "cp1252"),
    (PORTUGUESE.encode("cp1252"), PORTUGUESE, "cp1252"),  # not Windows-1250, which reads "năo"
    (b"caf\xe9 au lait", "café au lait", "cp1252"),  # too short to detect: Windows-1252
    (RUSSIAN.encode("cp1251"), RUSSIAN, "cp1251"),
    (JAPANESE.encode("shift_jis"), JAPANESE, "cp932"),
    (RUSSIAN.encode("utf-16"), RUSSIAN, "utf_16"),  # NUL bytes, but a byte-order mark
])
def test_legacy_encodings_are_read(data: bytes, text: str, encoding: str) -> None:
    assert decode_text(data) == (text, encoding)


@pytest.mark.parametrize(("data", "message"), [
    (b"text\x00more", "binary content \\(NUL bytes\\)"),
    (bytes(range(128, 256)) * 4, "not valid UTF-8 text \\(byte 0\\), and not in an encoding"),
])
def test_what_is_not_text_is_refused(data: bytes, message: str) -> None:
    with pytest.raises(NotText, match=message):
        decode_text(data)
