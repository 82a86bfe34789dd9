"""TensorFlow Object Detection API SSD with one score per class (MediaPipe's `object_detection_oid_v4`
graph: SSD MobileNetV2 on Open Images): box offsets relative to multi-scale, multi-aspect anchors.

Unlike `anchor_ssd` (BlazeFace-style: unit-size anchors, offsets in input pixels), these anchors have
a size (MediaPipe's `SsdAnchorsCalculator` without `fixed_anchor_size`), the offsets are
(y, x, h, w) divided by (10, 10, 5, 5) with exponential sizes (`TensorsToDetectionsCalculator`), the
scores are per-class logits and class 0 is the background.
"""

from __future__ import annotations

import math

import numpy as np

from zerocopy.detections import Detections
from zerocopy.frames import Geometry
from zerocopy.postprocess.base import Postprocessor
from zerocopy.postprocess.nms import nms


def ssd_anchors(input_w: int, input_h: int, strides: tuple[int, ...], min_scale: float, max_scale: float,
                aspect_ratios: tuple[float, ...], reduce_lowest: bool = True,
                interpolated_aspect: float = 1.0) -> np.ndarray:
    """Anchors (n, 4) as normalised (cx, cy, w, h), in the order the model's outputs use: layer by
    layer, row by row, cell by cell, anchor by anchor."""
    layers = len(strides)

    def scale(i: int) -> float:
        return min_scale + (max_scale - min_scale) * i / (layers - 1) if layers > 1 else (min_scale + max_scale) / 2

    out = []
    for i, stride in enumerate(strides):
        if i == 0 and reduce_lowest:
            shapes = [(1.0, 0.1), (2.0, scale(0)), (0.5, scale(0))]
        else:
            shapes = [(a, scale(i)) for a in aspect_ratios]
            if interpolated_aspect > 0:
                following = 1.0 if i == layers - 1 else scale(i + 1)
                shapes.append((interpolated_aspect, math.sqrt(scale(i) * following)))
        wh = np.array([[s * math.sqrt(a), s / math.sqrt(a)] for a, s in shapes], np.float32)
        fw, fh = -(-input_w // stride), -(-input_h // stride)
        cx, cy = np.meshgrid((np.arange(fw, dtype=np.float32) + 0.5) / fw, (np.arange(fh, dtype=np.float32) + 0.5) / fh)
        centres = np.repeat(np.stack([cx.ravel(), cy.ravel()], axis=1), len(shapes), axis=0)
        out.append(np.concatenate([centres, np.tile(wh, (fw * fh, 1))], axis=1))
    return np.concatenate(out)


class SSDMulticlass(Postprocessor):
    kind = "ssd-multiclass"

    def __init__(self, input_w: int, input_h: int, output_names: list[str], threshold: float, *,
                 strides: tuple[int, ...] = (16, 32, 64, 128, 256, 512), min_scale: float = 0.2,
                 max_scale: float = 0.95, aspect_ratios: tuple[float, ...] = (1.0, 2.0, 0.5, 3.0, 1 / 3),
                 box_scales: tuple[float, float, float, float] = (10.0, 10.0, 5.0, 5.0),
                 background: int | None = 0, nms_iou: float = 0.4):
        super().__init__(input_w, input_h, output_names, threshold)
        self.anchors = ssd_anchors(input_w, input_h, tuple(strides), min_scale, max_scale, tuple(aspect_ratios))
        self.box_scales = np.asarray(box_scales, np.float32)
        self.background = background
        self.nms_iou = nms_iou

    def _boxes_logits(self, outputs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        arrays = [outputs[n].reshape(-1, outputs[n].shape[-1]) for n in self.output_names]
        raw = next(a for a in arrays if a.shape[1] == 4)
        logits = next(a for a in arrays if a is not raw)
        return raw, logits

    def __call__(self, outputs: dict[str, np.ndarray], geometry: Geometry) -> Detections:
        raw, logits = self._boxes_logits(outputs)
        if len(raw) != len(self.anchors):
            raise ValueError(f"expected {len(self.anchors)} anchors, the model gave {len(raw)}")
        logits = logits.astype(np.float32)
        if self.background is not None:
            logits = logits.copy()
            logits[:, self.background] = -np.inf
        labels = logits.argmax(1).astype(np.int32)  # one detection per anchor, its best class
        best = logits[np.arange(len(labels)), labels]
        with np.errstate(over="ignore"):
            scores = (1.0 / (1.0 + np.exp(-best.astype(np.float64)))).astype(np.float32)
        idx = np.nonzero(scores >= self.threshold)[0]
        if len(idx) == 0:
            return Detections.empty()
        r = raw[idx].astype(np.float32) / self.box_scales  # (y, x, h, w)
        a = self.anchors[idx]
        cx = r[:, 1] * a[:, 2] + a[:, 0]
        cy = r[:, 0] * a[:, 3] + a[:, 1]
        w = np.exp(np.minimum(r[:, 3], 10.0)) * a[:, 2]
        h = np.exp(np.minimum(r[:, 2], 10.0)) * a[:, 3]
        boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
        s, lab = scores[idx], labels[idx]
        keep, boxes = nms(boxes, s, self.nms_iou, labels=lab)
        return Detections(geometry.to_source(boxes), s[keep], lab[keep])
