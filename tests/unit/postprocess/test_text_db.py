"""zerocopy.postprocess.text_db: PP-OCR's DB postprocessing on hand-made probability maps."""

import sys

import numpy as np
import pytest
from tinymodels import constant_model, run_decoder

from zerocopy.errors import ModelError
from zerocopy.postprocess import make_postprocessor
from zerocopy.postprocess.text_db import TextDB, dilate_2x2, rect_sides


def grown(x0, y0, x1, y1, ratio=1.6):
    """PP-OCR's box for a region over pixels x0..x1, y0..y1 (inclusive, after its 2×2 dilation): the
    rectangle between pixel centres grown by area × ratio / perimeter, in pixel-edge coordinates."""
    w, h = x1 - x0, y1 - y0
    d = w * h * ratio / (2 * (w + h))
    return np.array([x0 + 0.5 - d, y0 + 0.5 - d, x1 + 0.5 + d, y1 + 0.5 + d], np.float32)


def test_each_line_becomes_a_box_grown_as_pp_ocr_grows_it():
    prob = np.zeros((100, 200), np.float32)
    prob[20:30, 30:130] = 0.9  # a line 100 × 10 map pixels
    prob[60:66, 20:60] = 0.8  # a smaller one, 40 × 6
    boxes, scores = TextDB(200, 100, ["map"], 0.5).boxes(prob)
    order = np.argsort(boxes[:, 1])
    # dilation adds a column on the right and a row below: 101 × 11 and 41 × 7 pixels
    np.testing.assert_allclose(boxes[order], [grown(30, 20, 130, 30), grown(20, 60, 60, 66)], atol=1e-4)
    # the score is the mean over the region's own pixels, the dilated border (probability 0) included
    np.testing.assert_allclose(scores[order], [0.9 * 1000 / 1111, 0.8 * 240 / 287], rtol=1e-5)


def test_faint_and_thin_regions_are_dropped():
    prob = np.zeros((100, 200), np.float32)
    prob[20:30, 30:130] = 0.4  # above the 0.3 binarisation, but its mean is under the box threshold
    prob[70, 10:190] = 0.95  # one pixel high: two once dilated, under PP-OCR's 3-pixel minimum side
    boxes, _ = TextDB(200, 100, ["map"], 0.5).boxes(prob)
    assert len(boxes) == 0
    boxes, scores = TextDB(200, 100, ["map"], 0.3).boxes(prob)
    assert len(boxes) == 1 and scores[0] == pytest.approx(0.4 * 1000 / 1111, rel=1e-5)


def test_dilation_is_opencvs_two_by_two():
    mask = np.zeros((5, 5), bool)
    mask[2, 2] = True
    expected = np.zeros((5, 5), bool)
    expected[2:4, 2:4] = True  # cv2.dilate(mask, np.ones((2, 2))) sets the right and lower neighbours
    np.testing.assert_array_equal(dilate_2x2(mask), expected)


def test_a_slanted_line_keeps_its_thickness():
    yy, xx = np.mgrid[0:200, 0:200]
    band = np.abs((yy - 100) - 0.5 * (xx - 100)) * np.cos(np.arctan(0.5)) <= 4  # 9 px thick, 26.6° slant
    long, short = rect_sides(band)
    assert short == pytest.approx(8, abs=1.2)  # between pixel centres, as PP-OCR's minAreaRect measures
    assert long == pytest.approx(200 / np.cos(np.arctan(0.5)), rel=0.05)


def test_boxes_map_back_to_frame_pixels_through_the_letterbox(tmp_path, core):
    prob = np.zeros((1, 1, 64, 64), np.float32)
    prob[0, 0, 20:26, 10:50] = 0.9
    dets, g = run_decoder(tmp_path, core, constant_model(64, {"prob": prob}, layout="NCHW"), "text-db",
                          "letterbox", 1280, 720, threshold=0.6)
    assert len(dets) == 1 and dets.labels.tolist() == [0]
    box = grown(10, 20, 50, 26)
    scale = 1280 / g.content_w
    expected = [box[0] * scale, (box[1] - g.y0) * scale, box[2] * scale, (box[3] - g.y0) * scale]
    np.testing.assert_allclose(dets.xyxy[0], expected, atol=0.05)


def test_without_scipy_the_model_is_refused_in_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)  # what `import scipy` meets when it is not installed
    with pytest.raises(ModelError, match=r"needs scipy: pip install 'zerocopy\[text\]'$"):
        make_postprocessor("text-db", 64, 64, {"map": (1, 1, 64, 64)}, None, 0.6)
