"""zerocopy.postprocess.regions.HandLandmarks on hand-built outputs: which output is which, points back in frame
pixels, presence as it comes, the likelier hand with its probability."""

import numpy as np
import pytest

from zerocopy.errors import ModelError
from zerocopy.postprocess.regions import make_roi_decoder
from zerocopy.resize.crops import Crop, RoiPlacement

# the hand landmark model's outputs, in its order: points, presence, handedness, world points
SHAPES = {"Identity": (1, 63), "Identity_1": (1, 1), "Identity_2": (1, 1), "Identity_3": (1, 63)}


def _decoder():
    return make_roi_decoder("hand-landmarks", "handedness", 224, 224, SHAPES, ("Right", "Left"))


def _outputs(presence: float, first: float) -> dict[str, np.ndarray]:
    pts = np.zeros((21, 3), np.float32)
    pts[:, 0], pts[:, 1], pts[:, 2] = np.arange(21) * 10.0, 112.0, 5.0
    return {"Identity": pts.reshape(1, 63), "Identity_1": np.array([[presence]], np.float32),
            "Identity_2": np.array([[first]], np.float32),
            "Identity_3": np.full((1, 63), 99.0, np.float32)}  # world points: never read as image points


def test_points_presence_and_handedness():
    place = RoiPlacement.fit(Crop(100, 40, 112, 56), 224, 224, "letterbox")  # 2× into 224 wide, bars above/below
    r = _decoder()(_outputs(0.93, 0.8), place)
    assert r.presence == pytest.approx(0.93)
    assert [(a.model, a.name) for a in r.attributes] == [("handedness", "presence"), ("handedness", "Right")]
    assert r.attributes[1].score == pytest.approx(0.8)
    g = place.geometry
    assert (g.x0, g.content_w) == (0, 224)
    np.testing.assert_allclose(r.keypoints[:, 0], 100 + np.arange(21) * 10.0 / 2)
    np.testing.assert_allclose(r.keypoints[:, 1], 40 + (112.0 - g.y0) * 56 / g.content_h)
    left = _decoder()(_outputs(0.93, 0.3), place).attributes[1]
    assert (left.name, left.score) == ("Left", pytest.approx(0.7))


def test_a_model_with_other_outputs_is_refused_in_one_line():
    with pytest.raises(ModelError, match="hand landmark model has 63 points, a presence and a handedness"):
        make_roi_decoder("hand-landmarks", "x", 224, 224, {"a": (1, 1404), "b": (1, 1)}, ("Right", "Left"))
    with pytest.raises(ModelError, match="two labels"):
        make_roi_decoder("hand-landmarks", "x", 224, 224, SHAPES, ())
