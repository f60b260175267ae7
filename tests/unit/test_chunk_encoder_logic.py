"""Pure parts of the int8 chunk encoder: the setting, and the quantisation of an ONNX graph (a tiny
one built here: int8 weights, outputs close to the fp32 graph's)."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from graphrag.config import Settings
from graphrag.ingest.chunk_encoder import quantize_graph


def test_chunk_encoder_setting() -> None:
    assert Settings().chunk_encoder == "torch"
    assert Settings(chunk_encoder="onnx-int8").chunk_encoder == "onnx-int8"
    with pytest.raises(ValidationError):
        Settings(chunk_encoder="onnx-int4")


def _matmul_graph(weights: np.ndarray) -> bytes:
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="dense")], "dense",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", weights.shape[0]])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", weights.shape[1]])],
        [numpy_helper.from_array(weights, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return bytes(model.SerializeToString())


@pytest.mark.parametrize("per_channel", [False, True])
def test_quantized_graph_holds_int8_weights_and_close_outputs(per_channel: bool) -> None:
    import onnx
    import onnxruntime as ort

    rng = np.random.default_rng(7)
    weights = rng.normal(size=(64, 32)).astype(np.float32)
    fp32 = _matmul_graph(weights)
    int8 = quantize_graph(fp32, per_channel=per_channel)
    kinds = {t.data_type for t in onnx.load_from_string(int8).graph.initializer}
    assert onnx.TensorProto.INT8 in kinds
    x = rng.normal(size=(8, 64)).astype(np.float32)
    want = x @ weights
    got = ort.InferenceSession(int8, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    cos = (got * want).sum(axis=1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)
    assert float(cos.min()) > 0.97  # 8-bit weights and activations of random data
    assert not np.array_equal(got, want)
