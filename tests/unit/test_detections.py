"""zerocopy.detections: box IoU and the detection records."""


import numpy as np
import pytest

from zerocopy.detections import Detections, box_iou


def test_box_iou_known_values():
    a = np.array([[0, 0, 10, 10]])
    b = np.array([[0, 0, 10, 10], [5, 0, 15, 10], [20, 20, 30, 30]])
    np.testing.assert_allclose(box_iou(a, b), [[1.0, 50 / 150, 0.0]], atol=1e-6)


def test_detections_records_and_length_check():
    d = Detections(np.array([[1.04, 2, 3, 4]], np.float32), np.array([0.91234], np.float32), np.array([0]))
    assert d.to_records(["face"]) == [{"box": [1.0, 2.0, 3.0, 4.0], "score": 0.9123, "label": 0, "name": "face"}]
    with pytest.raises(ValueError):
        Detections(np.zeros((2, 4)), np.zeros(1), np.zeros(1))


def test_box_iou_on_known_boxes():
    from zerocopy.detections import box_iou

    a = np.array([[0, 0, 10, 10], [5, 5, 15, 15], [20, 20, 20, 30]], np.float32)
    iou = box_iou(a, a)
    np.testing.assert_allclose(iou[0], [1.0, 25 / 175, 0.0], rtol=1e-6)
    assert iou[2, 2] == 0.0  # an empty box overlaps nothing, not even itself
    assert box_iou(a, np.zeros((0, 4))).shape == (3, 0)


def test_second_model_results_travel_with_their_boxes():
    from zerocopy.detections import Attribute

    d = Detections(np.array([[0, 0, 10, 10], [20, 20, 40, 40]], np.float32), np.array([0.9, 0.8], np.float32),
                   np.array([0, 0]))
    assert d.attributes == () and d.keypoints == ()
    e = d.with_extras([[Attribute("face-mesh", "presence", 0.99)], []], [np.array([[5.04, 5.0]]), None])
    recs = e.to_records(["face"])
    assert recs[0]["attributes"] == [{"model": "face-mesh", "name": "presence", "score": 0.99}]
    assert recs[0]["keypoints"] == [[5.0, 5.0]] and "attributes" not in recs[1] and "keypoints" not in recs[1]
    second = e[np.array([False, True])]
    assert len(second) == 1 and second.attributes == ((),) and second.keypoints == (None,)
    assert len(d[[1]]) == 1 and d[[1]].attributes == ()
    with pytest.raises(ValueError, match="attributes"):
        Detections(d.xyxy, d.scores, d.labels, attributes=((),))
