"""OpenVINO / Caffe SSD `DetectionOutput`: [1, 1, N, 7] rows of (image, label, conf, x1, y1, x2, y2)."""

from __future__ import annotations

import numpy as np

from zerocopy.detections import Detections
from zerocopy.frames import Geometry
from zerocopy.postprocess.base import Postprocessor


class DetectionOutput(Postprocessor):
    kind = "detection-output"

    def _rows(self, outputs: dict[str, np.ndarray]) -> np.ndarray:
        return outputs[self.output_names[0]].reshape(-1, 7)

    def split(self, outputs: dict[str, np.ndarray], n: int) -> list[dict[str, np.ndarray]]:
        rows = self._rows(outputs)
        name = self.output_names[0]
        return [{name: rows[rows[:, 0] == i][None, None]} for i in range(n)]

    def __call__(self, outputs: dict[str, np.ndarray], geometry: Geometry) -> Detections:
        threshold = self.threshold
        rows = self._rows(outputs)
        end = np.nonzero(rows[:, 0] < 0)[0]  # image_id == -1 ends the list
        if len(end):
            rows = rows[: end[0]]
        rows = rows[rows[:, 2] >= threshold]
        return Detections(geometry.to_source(rows[:, 3:7]), rows[:, 2].astype(np.float32),
                          rows[:, 1].astype(np.int32))
