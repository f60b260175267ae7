"""Where a local model runs (GRAPHRAG_EMBEDDING_DEVICE): the choice of device, and what a GPU changes
in the precision and runtime choices. Pure logic: the GPUs there are are given, not asked for."""

from __future__ import annotations

import pytest

from graphrag.config import Settings
from graphrag.errors import ConfigurationError
from graphrag.ingest.embed import resolve_device, resolve_precision, resolve_runtime

ZEN4 = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni\n"


def test_auto_is_the_first_gpu_else_the_cpu() -> None:
    assert resolve_device("auto", gpus=0) == "cpu"
    assert resolve_device("auto", gpus=2) == "cuda:0"
    assert resolve_device("cpu", gpus=2) == "cpu"  # asked for: the GPU stays idle
    assert resolve_device("cuda", gpus=1) == "cuda:0"
    assert resolve_device(" CUDA:1 ", gpus=2) == "cuda:1"


@pytest.mark.parametrize(("device", "gpus", "message"), [
    ("cuda", 0, "GRAPHRAG_EMBEDDING_DEVICE=cuda: PyTorch sees no CUDA GPU (use cpu or auto)"),
    ("cuda:1", 1, "GRAPHRAG_EMBEDDING_DEVICE=cuda:1: PyTorch sees 1 CUDA GPU (use cpu or auto)"),
    ("cuda:2", 2, "PyTorch sees 2 CUDA GPUs"),
    ("gpu", 1, "GRAPHRAG_EMBEDDING_DEVICE must be auto, cpu, cuda or cuda:N, not 'gpu'"),
    ("cuda:", 1, "must be auto, cpu, cuda or cuda:N"),
])
def test_a_device_that_is_not_there_is_a_one_line_error(device: str, gpus: int, message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        resolve_device(device, gpus=gpus)
    assert message in caught.value.message and "\n" not in caught.value.message


def test_on_a_gpu_auto_precision_is_float32_and_the_runtime_pytorch() -> None:
    assert resolve_precision("auto", ZEN4, device="cuda:0") == "float32"
    assert resolve_precision("auto", ZEN4, device="cpu") == "bfloat16"
    assert resolve_precision("bfloat16", ZEN4, device="cuda:0") == "bfloat16"  # asked for: honoured
    assert resolve_runtime("auto", "cuda:0") == "torch"
    assert resolve_runtime("torch", "cuda:1") == "torch"
    with pytest.raises(ConfigurationError, match="GRAPHRAG_EMBEDDING_RUNTIME=openvino runs on the CPU, not on cuda:0"):
        resolve_runtime("openvino", "cuda:0")
    assert resolve_runtime("openvino", "cpu") == "openvino"


def test_device_setting_is_checked_when_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRAPHRAG_EMBEDDING_DEVICE", raising=False)
    assert Settings().embedding_device == "auto"
    for good in ("cpu", "cuda", "cuda:3"):
        monkeypatch.setenv("GRAPHRAG_EMBEDDING_DEVICE", good)
        assert Settings().embedding_device == good
    monkeypatch.setenv("GRAPHRAG_EMBEDDING_DEVICE", "tpu")
    with pytest.raises(ValueError, match="embedding_device"):
        Settings()
