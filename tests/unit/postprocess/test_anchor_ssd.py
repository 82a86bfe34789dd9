"""zerocopy.postprocess.anchor_ssd: anchors, batches, the logit prefilter."""

import av
import numpy as np
from tinymodels import constant_model, run_decoder

from zerocopy.infer.model import WrappedModel, resolve_spec
from zerocopy.postprocess.anchor_ssd import anchor_groups
from zerocopy.resize.planes import PlaneResizer


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
        expected.append(single.postprocessor(single.outputs_of(r1), g))
    r3 = batched.compiled.create_infer_request()
    ys = np.concatenate([p[0] for p in prepared])
    uvs = np.concatenate([p[1] for p in prepared])
    r3.infer(dict(zip(batched.input_names, (ys, uvs), strict=True)))
    parts = batched.postprocessor.split(batched.outputs_of(r3), 3)
    for part, (_, _, g), want in zip(parts, prepared, expected, strict=True):
        got = batched.postprocessor(part, g)
        assert len(got) == len(want) >= 1
        np.testing.assert_allclose(got.xyxy, want.xyxy, atol=0.5)
        np.testing.assert_allclose(got.scores, want.scores, atol=1e-3)


def test_the_logit_prefilter_never_drops_a_score_at_or_above_the_threshold():
    from zerocopy.postprocess.anchor_ssd import _logit

    rng = np.random.default_rng(7)
    logits = np.concatenate([rng.normal(0, 4, 20000), [0.0, np.log(3.0), -np.log(3.0)]])
    scores = 1.0 / (1.0 + np.exp(-logits))
    for t in (0.0, 0.25, 0.5, 0.75, 0.999, 1.0):
        passing = scores >= t
        assert not (passing & ~(logits >= _logit(t))).any(), t


def test_palm_rows_of_18_values_decode_their_box_and_leave_the_keypoints():
    from zerocopy.frames import Geometry
    from zerocopy.postprocess import make_postprocessor

    raw = np.zeros((1, 2016, 18), np.float32)
    logits = np.full((1, 2016, 1), -10.0, np.float32)
    k = 24 * 24 * 2 + 6 * (12 * 3 + 9)  # stride 16 (after the 24×24×2 stride-8 anchors): cell x = 9, y = 3
    raw[0, k, :4] = [6.0, -4.0, 30.0, 20.0]
    raw[0, k, 4:] = 50.0  # seven keypoints, far off: they must not move the box
    logits[0, k] = 1.0
    # no options: the palm detector's layout is known from its input size and anchor count
    dec = make_postprocessor("anchor-ssd", 192, 192, {"r": (1, 2016, 18), "s": (1, 2016, 1)}, None, 0.5)
    d = dec({"r": raw, "s": logits}, Geometry.fit(192, 192, 192, 192, "letterbox"))
    cx, cy = 9.5 / 12 * 192 + 6, 3.5 / 12 * 192 - 4
    np.testing.assert_allclose(d.xyxy[0], [cx - 15, cy - 10, cx + 15, cy + 10], atol=1e-3)
    assert d.scores[0] == np.float32(1 / (1 + np.exp(-1.0)))
