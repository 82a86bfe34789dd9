"""zerocopy.postprocess.yolo on a constant model."""

import numpy as np
from tinymodels import constant_model, run_decoder


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
