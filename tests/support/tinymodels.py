"""Small OpenVINO graphs whose outputs are known, wrapped as every path wraps them (the output decoders' tests)."""

from pathlib import Path

import av
import numpy as np
import openvino as ov
import openvino.opset13 as ops

from zerocopy.infer.model import ModelSpec, WrappedModel
from zerocopy.resize.planes import PlaneResizer


def constant_model(size: int, outputs: dict[str, np.ndarray], layout: str = "NHWC") -> ov.Model:
    shape = [1, size, size, 3] if layout == "NHWC" else [1, 3, size, size]
    p = ops.parameter(shape, ov.Type.f32, name="image")
    zero = ops.multiply(ops.reduce_sum(p, np.array([0, 1, 2, 3]), keep_dims=False), np.float32(0.0))
    results = []
    for name, value in outputs.items():
        node = ops.add(ops.constant(value.astype(np.float32)), zero)
        node.output(0).get_tensor().set_names({name})
        results.append(ops.result(node))
    return ov.Model(results, [p], "constant")


def run_decoder(tmp_path, core, model, decoder, resize, src_w, src_h, threshold=0.5, options=None):
    path = Path(tmp_path) / "m.xml"
    ov.save_model(model, path)
    spec = ModelSpec(path=path, name="m", labels=("a", "b"), postprocess=decoder, resize=resize, colour="RGB",
                     mean=0.0, scale=1.0, postprocess_options=options or {})
    wrapped = WrappedModel(core, spec, threshold=threshold).compile("CPU")
    frame = av.VideoFrame(src_w, src_h, "yuv420p")
    y, uv, g = PlaneResizer(wrapped.width, wrapped.height, resize)(frame)
    req = wrapped.compiled.create_infer_request()
    req.infer(dict(zip(wrapped.input_names, (y, uv), strict=True)))
    return wrapped.postprocessor(wrapped.outputs_of(req), g), g


def tiny_model(path: Path, outputs: int) -> Path:
    """A real 32×32 model: its output is `outputs` class scores, or (0) a one-channel map of the image."""
    image = ops.parameter([1, 32, 32, 3], ov.Type.f32, name="image")
    if outputs:
        node = ops.reduce_mean(image, np.array([1, 2]), keep_dims=False)  # [1, 3]
        node = ops.matmul(node, np.ones((3, outputs), np.float32), False, False)
    else:
        node = ops.sigmoid(ops.reduce_mean(image, np.array([3]), keep_dims=True))  # [1, 32, 32, 1]
        node = ops.transpose(node, np.array([0, 3, 1, 2]))  # [1, 1, 32, 32]
    ov.save_model(ov.Model([ops.result(node)], [image], path.stem), path)
    return path
