"""zerocopy.postprocess.ssd_multiclass: MediaPipe's OIDv4 SSD anchors and box coding, per-class scores,
the background class, per-label NMS — on hand-built outputs (no model)."""

import math

import numpy as np
import pytest

from zerocopy.frames import Geometry
from zerocopy.postprocess import make_postprocessor
from zerocopy.postprocess.ssd_multiclass import SSDMulticlass, ssd_anchors

N, C = 1917, 24  # the objects model: 300x300, 6 layers, 24 classes (0 = background)


def _outputs():
    return np.zeros((1, N, 4), np.float32), np.full((1, N, C), -8.0, np.float32)


def _decoder(threshold: float = 0.5) -> SSDMulticlass:
    return SSDMulticlass(300, 300, ["boxes", "scores"], threshold)


def test_anchors_follow_mediapipe_s_layout():
    a = ssd_anchors(300, 300, (16, 32, 64, 128, 256, 512), 0.2, 0.95, (1.0, 2.0, 0.5, 3.0, 1 / 3))
    # 19², 10², 5², 3², 2², 1² cells; 3 anchors on the lowest layer, 6 above
    assert len(a) == 19 * 19 * 3 + (100 + 25 + 9 + 4 + 1) * 6 == N
    np.testing.assert_allclose(a[0], [0.5 / 19, 0.5 / 19, 0.1, 0.1], rtol=1e-6)
    np.testing.assert_allclose(a[1, 2:], [0.2 * math.sqrt(2), 0.2 / math.sqrt(2)], rtol=1e-6)
    np.testing.assert_allclose(a[2, 2:], [0.2 / math.sqrt(2), 0.2 * math.sqrt(2)], rtol=1e-6)
    # the last layer's interpolated anchor: sqrt(0.95 × 1.0), square, centred
    np.testing.assert_allclose(a[-1], [0.5, 0.5, math.sqrt(0.95), math.sqrt(0.95)], rtol=1e-6)


def test_a_box_is_decoded_from_y_x_h_w_offsets_scaled_10_10_5_5():
    boxes, logits = _outputs()
    dec = _decoder()
    k = 19 * 19 * 3 + 6 * (10 * 4 + 7)  # second layer, cell x = 7, y = 4, first anchor (aspect 1, scale 0.35)
    acx, acy, aw, ah = dec.anchors[k]
    np.testing.assert_allclose([acx, acy, aw, ah], [7.5 / 10, 4.5 / 10, 0.35, 0.35], rtol=1e-5)
    boxes[0, k] = [2.0, -3.0, math.log(2.0) * 5, math.log(0.5) * 5]  # dy, dx, dh, dw
    logits[0, k, 4] = 2.0  # "Person"
    geometry = Geometry.fit(600, 300, 300, 300, "stretch")
    d = dec({"boxes": boxes, "scores": logits}, geometry)
    assert len(d) == 1 and d.labels[0] == 4
    assert d.scores[0] == pytest.approx(1 / (1 + math.exp(-2.0)), abs=1e-6)
    cx, cy, w, h = acx - 0.3 * aw, acy + 0.2 * ah, 0.5 * aw, 2.0 * ah
    expected = np.array([(cx - w / 2) * 600, (cy - h / 2) * 300, (cx + w / 2) * 600, (cy + h / 2) * 300])
    np.testing.assert_allclose(d.xyxy[0], np.clip(expected, 0, [600, 300, 600, 300]), atol=1e-3)


def test_the_background_class_never_wins_and_a_low_score_is_dropped():
    boxes, logits = _outputs()
    logits[0, 100, 0] = 9.0  # background, very sure
    logits[0, 100, 8] = 0.5  # "Cat" at 0.62
    logits[0, 200, 13] = -0.5  # "Coffee cup" at 0.38: under the threshold
    d = _decoder()({"boxes": boxes, "scores": logits}, Geometry.fit(300, 300, 300, 300, "stretch"))
    assert d.labels.tolist() == [8]
    assert len(_decoder(0.7)({"boxes": boxes, "scores": logits}, Geometry.fit(300, 300, 300, 300, "stretch"))) == 0


def test_nms_is_per_label():
    boxes, logits = _outputs()
    k = 19 * 19 * 3 + 6 * (10 * 4 + 7)
    logits[0, k, 4] = 3.0  # Person
    logits[0, k + 5, 4] = 2.0  # the same cell's interpolated anchor (concentric, IoU 0.70): suppressed
    logits[0, k + 5, 5] = 2.5  # ... but as a Chair it stays, beside the Person
    d = _decoder()({"boxes": boxes, "scores": logits}, Geometry.fit(300, 300, 300, 300, "stretch"))
    assert sorted(d.labels.tolist()) == [4, 5]


def test_made_by_name_and_the_anchor_count_is_checked():
    dec = make_postprocessor("ssd-multiclass", 300, 300, {"boxes": (1, N, 4), "scores": (1, N, C)}, {}, 0.4)
    assert dec.kind == "ssd-multiclass" and dec.threshold == 0.4
    with pytest.raises(ValueError, match="expected 1917 anchors, the model gave 10"):
        dec({"boxes": np.zeros((1, 10, 4), np.float32), "scores": np.zeros((1, 10, C), np.float32)},
            Geometry.fit(300, 300, 300, 300, "stretch"))
