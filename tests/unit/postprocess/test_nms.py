"""zerocopy.postprocess.nms."""

import numpy as np

from zerocopy.postprocess.nms import nms


def test_nms_keeps_the_best_of_each_cluster_per_class():
    boxes = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [50, 50, 60, 60], [0, 0, 10, 10]], np.float32)
    scores = np.array([0.9, 0.8, 0.7, 0.6], np.float32)
    labels = np.array([0, 0, 0, 1])
    keep, out = nms(boxes, scores, 0.5, labels=labels)
    assert sorted(keep.tolist()) == [0, 2, 3]
    keep_w, out_w = nms(boxes[:2], scores[:2], 0.5, weighted=True)
    assert keep_w.tolist() == [0]
    np.testing.assert_allclose(out_w[0], (boxes[0] * 0.9 + boxes[1] * 0.8) / 1.7, atol=1e-5)
