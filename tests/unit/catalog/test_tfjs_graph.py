"""scripts/tfjs_graph.py: a TF.js graph model written back as a frozen TensorFlow graph that OpenVINO reads."""

import base64

import numpy as np
import openvino as ov
from conftest import load_script

TFJS = load_script("tfjs_graph")


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def tfjs_model() -> tuple[dict, bytes, np.ndarray, np.ndarray]:
    """A TF.js graph model as its converter writes one: a 1×1 convolution fused with its BiasAdd and a Relu (the op
    TF.js keeps), its kernel quantized to float16, and an int64 constant TF.js stores as int32."""
    rng = np.random.default_rng(3)
    kernel, bias = rng.normal(size=(1, 1, 2, 3)).astype(np.float16), np.array([0.5, -1.0, 0.25], np.float32)
    shape = {"dim": [{"size": "1"}, {"size": "4"}, {"size": "4"}, {"size": "2"}]}
    t = {"T": {"type": "DT_FLOAT"}}
    nodes = [
        {"name": "image", "op": "Placeholder", "attr": {"dtype": {"type": "DT_FLOAT"}, "shape": {"shape": shape}}},
        {"name": "w", "op": "Const", "attr": {"dtype": {"type": "DT_FLOAT"}, "value": {"tensor": {
            "dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": str(n)} for n in kernel.shape]}}}}},
        {"name": "b", "op": "Const", "attr": {"dtype": {"type": "DT_FLOAT"}, "value": {"tensor": {
            "dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": "3"}]}}}}},
        {"name": "axes", "op": "Const", "attr": {"dtype": {"type": "DT_INT64"}, "value": {"tensor": {
            "dtype": "DT_INT64", "tensorShape": {"dim": [{"size": "2"}]}}}}},
        {"name": "conv", "op": "_FusedConv2D", "input": ["image", "w", "b"], "attr": {
            **t, "strides": {"list": {"i": ["1", "1", "1", "1"]}}, "padding": {"s": b64("SAME")},
            "data_format": {"s": b64("NHWC")}, "dilations": {"list": {"i": ["1", "1", "1", "1"]}},
            "fused_ops": {"list": {"s": [b64("BiasAdd"), b64("Relu")]}}, "num_args": {"i": "1"},
            "epsilon": {"f": 0}, "_grappler_note": {"b": True}}},
        {"name": "mean", "op": "Mean", "input": ["conv", "axes"], "attr": {
            **t, "Tidx": {"type": "DT_INT64"}, "keep_dims": {"b": False}}},
    ]
    manifest = [{"paths": ["shard1"], "weights": [
        {"name": "w", "shape": [1, 1, 2, 3], "dtype": "float32", "quantization": {"dtype": "float16"}},
        {"name": "b", "shape": [3], "dtype": "float32"},
        {"name": "axes", "shape": [2], "dtype": "int32"}]}]
    shard = kernel.tobytes() + bias.tobytes() + np.array([1, 2], np.int32).tobytes()
    return {"modelTopology": {"node": nodes}, "weightsManifest": manifest}, shard, kernel, bias


def test_openvino_reads_a_tfjs_graph_model_made_a_frozen_graph_and_computes_what_it_says(tmp_path):
    model, shard, kernel, bias = tfjs_model()
    pb = tmp_path / "model.pb"
    pb.write_bytes(TFJS.frozen_graph(model, {"shard1": shard}.__getitem__))
    compiled = ov.Core().compile_model(ov.Core().read_model(str(pb)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    image = np.random.default_rng(4).normal(size=(1, 4, 4, 2)).astype(np.float32)
    want = np.maximum(image @ kernel.astype(np.float32)[0, 0] + bias, 0).mean(axis=(1, 2))
    np.testing.assert_allclose(compiled(image)[0], want, rtol=1e-5, atol=1e-6)
