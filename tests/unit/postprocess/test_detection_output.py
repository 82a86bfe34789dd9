"""zerocopy.postprocess.detection_output on a constant model."""

import numpy as np
from tinymodels import constant_model, run_decoder


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
