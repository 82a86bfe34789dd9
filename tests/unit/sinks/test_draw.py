"""What the annotated video shows: anonymised regions, second-model attributes in the label."""

import numpy as np
import pytest
from PIL import Image

from zerocopy.detections import Attribute, Detections
from zerocopy.sinks.draw import ANONYMISE_GROW, anonymise, label_text

BOXES = Detections(np.array([[100, 100, 160, 180], [300, 50, 340, 90]], np.float32), np.array([0.9, 0.7], np.float32),
                   np.array([0, 1]))


def noisy() -> Image.Image:
    return Image.fromarray(np.random.default_rng(0).integers(0, 256, (240, 400, 3), np.uint8))


@pytest.mark.parametrize("style", ["pixelate", "blur", "fill"])
def test_anonymise_wipes_the_detail_of_the_chosen_labels_only(style):
    before = np.asarray(noisy()).astype(int)
    after = np.asarray(anonymise(noisy(), BOXES, labels=[0], style=style)).astype(int)
    region = after[100:180, 100:160]
    # detail is gone: neighbouring pixels (nearly) agree, where the noise had them differ by ~85 on average
    assert np.abs(np.diff(region, axis=1)).mean() < 20, style
    grow = int((ANONYMISE_GROW - 1) / 2 * 60)
    assert (after[:, : 100 - grow - 1] == before[:, : 100 - grow - 1]).all()  # left of the grown box: untouched
    assert (after[50:90, 300:340] == before[50:90, 300:340]).all()  # the other label's box: untouched


def test_anonymise_refuses_an_unknown_style():
    with pytest.raises(ValueError, match="pixelate"):
        anonymise(noisy(), BOXES, style="swirl")


def test_the_label_says_what_second_models_said():
    d = BOXES.with_extras([[Attribute("handedness", "Left", 0.984)], []], [None, None])
    assert label_text(d, 0, ["hand", "face"]) == "hand 0.90 · Left 0.98"
    assert label_text(d, 1, ["hand", "face"]) == "face 0.70"


@pytest.mark.parametrize("style", ["pixelate", "blur", "fill"])
def test_anonymise_map_hides_the_shape_the_map_covers_and_nothing_far_from_it(style):
    from zerocopy.sinks.draw import anonymise_map

    values = np.zeros((240, 400), np.float32)
    values[60:200, 150:250] = 0.9  # a person's mask
    before = np.asarray(noisy()).astype(int)
    after = np.asarray(anonymise_map(noisy(), values, style)).astype(int)
    assert np.abs(np.diff(after[70:190, 160:240], axis=1)).mean() < 30, style  # detail gone inside
    assert (after[:, :140] == before[:, :140]).all() and (after[:50] == before[:50]).all()  # untouched outside
    untouched = np.asarray(anonymise_map(noisy(), np.zeros((240, 400)), style)).astype(int)
    assert (untouched == before).all()
