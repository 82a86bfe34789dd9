"""Each output decoder on a real OpenVINO graph whose outputs are known, wrapped as every path wraps it."""

from pathlib import Path

import av
import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

from zerocopy.errors import ModelError
from zerocopy.infer.model import ModelSpec, WrappedModel, resolve_spec
from zerocopy.postprocess import guess_postprocess
from zerocopy.postprocess.anchor_ssd import anchor_groups
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
    spec = ModelSpec(path, "m", ("a", "b"), decoder, resize, "RGB", 0.0, 1.0, options or {})
    wrapped = WrappedModel(core, spec).compile("CPU")
    frame = av.VideoFrame(src_w, src_h, "yuv420p")
    y, uv, g = PlaneResizer(wrapped.width, wrapped.height, resize)(frame)
    req = wrapped.compiled.create_infer_request()
    req.infer(dict(zip(wrapped.input_names, (y, uv), strict=True)))
    return wrapped.decoder.decode(wrapped.outputs_of(req), g, threshold), g


def test_detection_output_rows_until_the_terminator(tmp_path, core):
    rows = np.array([
        [0, 1, 0.90, 0.1, 0.2, 0.5, 0.6],
        [0, 2, 0.30, 0.0, 0.0, 0.2, 0.2],  # below threshold
        [-1, 0, 0, 0, 0, 0, 0],  # end of list
        [0, 1, 0.99, 0.0, 0.0, 1.0, 1.0],  # garbage after the end
    ], np.float32)[None, None]
    dets, _ = run_decoder(tmp_path, core, constant_model(64, {"out": rows}, "NCHW"), "detection-output",
                          "stretch", 640, 360)
    assert dets.labels.tolist() == [1]
    np.testing.assert_allclose(dets.xyxy, [[64, 72, 320, 216]], atol=0.5)
    np.testing.assert_allclose(dets.scores, [0.9], atol=1e-3)  # CPU may run in bf16


def test_yolo_nms_is_per_class_and_boxes_undo_the_letterbox(tmp_path, core):
    # (cx, cy, w, h) in 64x64 input pixels, then two class scores
    cand = np.array([
        [32, 32, 20, 10, 0.9, 0.0],
        [33, 32, 20, 10, 0.8, 0.0],  # same object, class 0: suppressed
        [32, 32, 20, 10, 0.0, 0.7],  # same place, class 1: kept
        [10, 20, 4, 4, 0.2, 0.1],  # below threshold
    ], np.float32)
    dets, g = run_decoder(tmp_path, core, constant_model(64, {"out": cand.T[None]}), "yolo", "letterbox",
                          640, 360)
    assert (g.y0, g.content_h) == (14, 36)
    order = np.argsort(dets.labels)
    assert dets.labels[order].tolist() == [0, 1]
    expected = [(22 - 0) * 10, (27 - 14) * 10, (42 - 0) * 10, (37 - 14) * 10]
    np.testing.assert_allclose(dets.xyxy[order], [expected, expected], atol=0.5)


def test_anchor_ssd_decodes_offsets_relative_to_anchors(tmp_path, core):
    reg = np.zeros((1, 896, 16), np.float32)
    logits = np.full((1, 896, 1), -10.0, np.float32)
    centres = np.concatenate(anchor_groups(128, 128, (8, 16, 16, 16), 2))
    k = 2 * (8 * 16 + 5)  # first anchor of stride-8 cell x = 5, y = 8
    np.testing.assert_allclose(centres[k], [5.5 / 16, 8.5 / 16])
    reg[0, k, :4] = [4.0, -8.0, 32.0, 40.0]
    logits[0, k] = 5.0
    reg[0, k + 1, :4] = [4.0, -8.0, 32.0, 40.0]  # a twin anchor on the same face, merged by weighted NMS
    logits[0, k + 1] = 3.0
    model = constant_model(128, {"regressors": reg, "classificators": logits})
    dets, g = run_decoder(tmp_path, core, model, "anchor-ssd", "letterbox", 1280, 720,
                          options={"strides": (8, 16, 16, 16), "anchors_per_stride": 2})
    assert len(dets) == 1
    cx, cy = (5.5 / 16 + 4 / 128) * 128, (8.5 / 16 - 8 / 128) * 128
    box_in = np.array([cx - 16, cy - 20, cx + 16, cy + 20])
    scale = 1280 / g.content_w
    expected = [box_in[0] * scale, (box_in[1] - g.y0) * scale, box_in[2] * scale, (box_in[3] - g.y0) * scale]
    np.testing.assert_allclose(dets.xyxy[0], expected, atol=0.5)
    np.testing.assert_allclose(dets.scores[0], 1 / (1 + np.exp(-5.0)), atol=1e-5)


def test_decoder_is_guessed_from_output_shapes():
    assert guess_postprocess({"o": (1, 1, 100, 7)}) == "detection-output"
    assert guess_postprocess({"o": (1, 84, 8400)}) == "yolo"
    assert guess_postprocess({"r": (1, 896, 16), "c": (1, 896, 1)}) == "anchor-ssd"
    with pytest.raises(ModelError, match="--decoder"):
        guess_postprocess({"o": (1, 1000)})


def test_batched_face_model_gives_the_same_detections_as_single_frames(core, face_model_path, clips):
    """The TFLite graph concatenates anchor groups after flattening: the split must undo that."""
    from zerocopy.samples import ClipSpec

    path, _ = clips("batch.mp4", ClipSpec(frames=6))
    frames = [f for f in av.open(str(path)).decode(video=0)][::2]
    spec = resolve_spec("face", core=core)
    single = WrappedModel(core, spec, batch=1).compile("CPU")
    batched = WrappedModel(core, spec, batch=3).compile("CPU")
    rz = PlaneResizer(128, 128, "letterbox")
    prepared = [rz(f) for f in frames]
    r1 = single.compiled.create_infer_request()
    expected = []
    for y, uv, g in prepared:
        r1.infer(dict(zip(single.input_names, (y, uv), strict=True)))
        expected.append(single.decoder.decode(single.outputs_of(r1), g, 0.5))
    r3 = batched.compiled.create_infer_request()
    ys = np.concatenate([p[0] for p in prepared])
    uvs = np.concatenate([p[1] for p in prepared])
    r3.infer(dict(zip(batched.input_names, (ys, uvs), strict=True)))
    parts = batched.decoder.split(batched.outputs_of(r3), 3)
    for part, (_, _, g), want in zip(parts, prepared, expected, strict=True):
        got = batched.decoder.decode(part, g, 0.5)
        assert len(got) == len(want) >= 1
        np.testing.assert_allclose(got.xyxy, want.xyxy, atol=0.5)
        np.testing.assert_allclose(got.scores, want.scores, atol=1e-3)


@pytest.mark.parametrize("kind", ["yolo", "detection-output"])
def test_a_users_own_model_through_the_cli(kind, clips, tmp_path, core):
    """An IR file with no catalogue entry: the decoder is guessed from its output shapes, names come
    from --labels, and boxes land in source pixels."""
    import json

    from conftest import run_cli

    from zerocopy.samples import ClipSpec

    clip, _ = clips("h264.mp4", ClipSpec(frames=20))
    if kind == "yolo":  # 64x64 letterboxed input; one class-1 box centred at (32, 32), 16x8 input pixels
        cand = np.zeros((6, 8), np.float32)  # 4 + 2 classes, 8 candidates
        cand[:, 0] = [32, 32, 16, 8, 0.1, 0.95]
        model, size = constant_model(64, {"out": cand[None]}), (640, 360)
        expected = [(24 - 0) * 10, (28 - 14) * 10, (40 - 0) * 10, (36 - 14) * 10]
    else:  # stretched: normalised box (0.25, 0.5)-(0.75, 1.0)
        rows = np.array([[0, 1, 0.8, 0.25, 0.5, 0.75, 1.0], [-1, 0, 0, 0, 0, 0, 0]], np.float32)[None, None]
        model, size = constant_model(64, {"out": rows}, "NCHW"), (640, 360)
        expected = [160, 180, 480, 360]
    path = tmp_path / f"{kind}.xml"
    ov.save_model(model, path)
    labels = tmp_path / "labels.txt"
    labels.write_text("background\nwidget\n")
    out = tmp_path / "d.jsonl"
    assert run_cli("detect", clip, "--model", path, "--labels", labels, "--json", out, "--quiet") == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(lines) == 20
    for line in lines:
        assert (line["width"], line["height"]) == size
        (det,) = line["detections"]
        assert det["name"] == "widget" and det["label"] == 1
        np.testing.assert_allclose(det["box"], expected, atol=1.0)


def test_the_logit_prefilter_never_drops_a_score_at_or_above_the_threshold():
    from zerocopy.postprocess.anchor_ssd import _logit

    rng = np.random.default_rng(7)
    logits = np.concatenate([rng.normal(0, 4, 20000), [0.0, np.log(3.0), -np.log(3.0)]])
    scores = 1.0 / (1.0 + np.exp(-logits))
    for t in (0.0, 0.25, 0.5, 0.75, 0.999, 1.0):
        passing = scores >= t
        assert not (passing & ~(logits >= _logit(t))).any(), t


def test_box_iou_on_known_boxes():
    from zerocopy.detections import box_iou

    a = np.array([[0, 0, 10, 10], [5, 5, 15, 15], [20, 20, 20, 30]], np.float32)
    iou = box_iou(a, a)
    np.testing.assert_allclose(iou[0], [1.0, 25 / 175, 0.0], rtol=1e-6)
    assert iou[2, 2] == 0.0  # an empty box overlaps nothing, not even itself
    assert box_iou(a, np.zeros((0, 4))).shape == (3, 0)
