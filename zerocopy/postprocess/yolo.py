"""YOLOv8-style head: [1, 4 + C, N], boxes as (cx, cy, w, h) in input pixels, one score per class."""

from __future__ import annotations

import numpy as np

from zerocopy.detections import Detections
from zerocopy.frames import Geometry
from zerocopy.postprocess.base import Postprocessor
from zerocopy.postprocess.nms import nms


class Yolo(Postprocessor):
    kind = "yolo"

    def __init__(self, input_w: int, input_h: int, output_names: list[str], threshold: float,
                 nms_iou: float = 0.45):
        super().__init__(input_w, input_h, output_names, threshold)
        self.nms_iou = nms_iou

    def __call__(self, outputs: dict[str, np.ndarray], geometry: Geometry) -> Detections:
        threshold = self.threshold
        pred = outputs[self.output_names[0]][0].T  # (N, 4 + C)
        cls_scores = pred[:, 4:]
        labels = cls_scores.argmax(1).astype(np.int32)
        scores = cls_scores[np.arange(len(pred)), labels].astype(np.float32)
        keep = scores >= threshold
        pred, labels, scores = pred[keep], labels[keep], scores[keep]
        size = np.array([self.input_w, self.input_h], np.float32)
        centre, half = pred[:, 0:2] / size, pred[:, 2:4] / size / 2.0
        boxes = np.concatenate([centre - half, centre + half], axis=1)
        kept, boxes = nms(boxes, scores, self.nms_iou, labels=labels)
        return Detections(geometry.to_source(boxes), scores[kept], labels[kept])
