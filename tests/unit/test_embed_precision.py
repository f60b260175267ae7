"""Which precision chunk embeddings use: bfloat16 products only where the CPU has them natively."""

from __future__ import annotations

import pytest

from graphrag.config import Settings
from graphrag.errors import ConfigurationError
from graphrag.ingest.embed import cpu_has_native_bf16, resolve_precision

ZEN4 = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni\n"
SAPPHIRE = "flags\t\t: fpu avx512f amx_bf16 amx_tile\n"
AVX2_ONLY = "processor\t: 0\nflags\t\t: fpu sse2 avx2 fma\nbugs\t\t: avx512_bf16_is_not_a_flag_line\n"


def test_native_bf16_is_read_from_the_flags_line() -> None:
    assert cpu_has_native_bf16(ZEN4) and cpu_has_native_bf16(SAPPHIRE)
    assert not cpu_has_native_bf16(AVX2_ONLY)
    assert not cpu_has_native_bf16("")  # no flags line (another OS): float32


def test_auto_follows_the_cpu_and_explicit_settings_win() -> None:
    assert resolve_precision("auto", ZEN4) == "bfloat16"
    assert resolve_precision("auto", AVX2_ONLY) == "float32"
    assert resolve_precision("float32", ZEN4) == "float32"
    assert resolve_precision("bfloat16", AVX2_ONLY) == "bfloat16"  # asked for: emulated, but honoured
    with pytest.raises(ConfigurationError, match="GRAPHRAG_EMBEDDING_PRECISION"):
        resolve_precision("fp8", ZEN4)


def test_setting_names_the_choices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHRAG_EMBEDDING_PRECISION", "float32")
    assert Settings().embedding_precision == "float32"
    monkeypatch.setenv("GRAPHRAG_EMBEDDING_PRECISION", "half")
    with pytest.raises(ValueError, match="embedding_precision"):
        Settings()


def test_runtime_setting_names_the_choices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRAPHRAG_EMBEDDING_RUNTIME", raising=False)
    assert Settings().embedding_runtime == "auto"
    monkeypatch.setenv("GRAPHRAG_EMBEDDING_RUNTIME", "torch")
    assert Settings().embedding_runtime == "torch"
    monkeypatch.setenv("GRAPHRAG_EMBEDDING_RUNTIME", "onnx")
    with pytest.raises(ValueError, match="embedding_runtime"):
        Settings()
