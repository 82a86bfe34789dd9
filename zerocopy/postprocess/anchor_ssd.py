"""MediaPipe's anchor SSD (BlazeFace, BlazePose detector, palm detector): box offsets relative to fixed
anchors. Each anchor's row is a box (x, y, w, h) followed by keypoints (x, y) — 6 for faces, 4 for
poses, 7 for palms: 16, 12 or 18 values — with one score logit beside it."""

from __future__ import annotations

from itertools import groupby

import numpy as np

from zerocopy.detections import Detections
from zerocopy.frames import Geometry
from zerocopy.postprocess.base import Postprocessor
from zerocopy.postprocess.nms import nms

# Anchor layouts of the MediaPipe detectors, keyed by (input size, anchor count), so that a user's
# own copy of one of these models decodes without a catalogue entry.
KNOWN_LAYOUTS = {
    (128, 896): {"strides": (8, 16, 16, 16), "anchors_per_stride": 2},
    (192, 2304): {"strides": (4,), "anchors_per_stride": 1},
    (192, 2016): {"strides": (8, 16, 16, 16), "anchors_per_stride": 2},  # palm_detection_full/lite
    (224, 2254): {"strides": (8, 16, 32, 32, 32), "anchors_per_stride": 2},
    (256, 896): {"strides": (16, 32, 32, 32), "anchors_per_stride": 2},  # face_detection_back
    (256, 2944): {"strides": (8, 16, 32, 32, 32), "anchors_per_stride": 2},
}


def anchor_groups(input_w: int, input_h: int, strides: tuple[int, ...], anchors_per_stride: int):
    """Per run of equal strides: (anchor centres (n, 2) normalised, count). MediaPipe merges such runs."""
    groups = []
    for stride, run in groupby(strides):
        per_cell = len(list(run)) * anchors_per_stride
        fw, fh = -(-input_w // stride), -(-input_h // stride)
        xs = (np.arange(fw, dtype=np.float32) + 0.5) / fw
        ys = (np.arange(fh, dtype=np.float32) + 0.5) / fh
        cx, cy = np.meshgrid(xs, ys)
        centres = np.stack([cx.ravel(), cy.ravel()], axis=1)
        groups.append(np.repeat(centres, per_cell, axis=0))
    return groups


def _logit(p: float) -> float:
    if p <= 0.0:
        return -np.inf
    if p >= 1.0:
        return np.inf
    return float(np.log(p / (1.0 - p))) - 1e-6  # a hair low: the exact test follows


class AnchorSSD(Postprocessor):
    kind = "anchor-ssd"

    def __init__(self, input_w: int, input_h: int, output_names: list[str], threshold: float, *,
                 strides: tuple[int, ...], anchors_per_stride: int,
                 box_from_keypoints: tuple[int, int] | None = None, nms_iou: float = 0.3):
        super().__init__(input_w, input_h, output_names, threshold)
        groups = anchor_groups(input_w, input_h, tuple(strides), anchors_per_stride)
        self.segments = [len(g) for g in groups]
        self.anchors = np.concatenate(groups)
        self.box_from_keypoints = box_from_keypoints
        self.nms_iou = nms_iou

    def _boxes_scores(self, outputs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        arrays = [outputs[n].reshape(-1, outputs[n].shape[-1]) for n in self.output_names]
        raw = next(a for a in arrays if a.shape[1] >= 4)
        logits = next(a for a in arrays if a.shape[1] == 1)
        return raw, logits[:, 0]

    def split(self, outputs: dict[str, np.ndarray], n: int) -> list[dict[str, np.ndarray]]:
        # The TFLite graphs reshape each anchor group to [1, -1, C] and then concatenate the groups,
        # so a batch of n arrives as [group0 × n | group1 × n | …], each part batch-major.
        per_frame: list[dict[str, np.ndarray]] = [{} for _ in range(n)]
        for name, arr in outputs.items():
            flat = arr.reshape(-1, arr.shape[-1])
            parts, start = [], 0
            for seg in self.segments:
                parts.append(flat[start : start + seg * n].reshape(n, seg, -1))
                start += seg * n
            for i in range(n):
                per_frame[i][name] = np.concatenate([p[i] for p in parts])[None]
        return per_frame

    def __call__(self, outputs: dict[str, np.ndarray], geometry: Geometry) -> Detections:
        threshold = self.threshold
        raw, logits = self._boxes_scores(outputs)
        if len(raw) != len(self.anchors):
            raise ValueError(f"expected {len(self.anchors)} anchors, the model gave {len(raw)}")
        # compare logits against the threshold's logit: the sigmoid is then taken of the few candidates only
        idx = np.nonzero(logits >= _logit(threshold))[0]
        if len(idx) == 0:
            return Detections.empty()
        scores = np.zeros(len(logits), np.float64)
        scores[idx] = 1.0 / (1.0 + np.exp(-np.minimum(np.maximum(logits[idx].astype(np.float64), -100.0), 100.0)))
        idx = idx[scores[idx] >= threshold]  # exact at the boundary
        if len(idx) == 0:
            return Detections.empty()
        r = raw[idx].astype(np.float32)
        a = self.anchors[idx]
        size = np.array([self.input_w, self.input_h], np.float32)
        if self.box_from_keypoints is not None:
            k0, k1 = self.box_from_keypoints
            p0 = r[:, 4 + 2 * k0 : 6 + 2 * k0] / size + a
            p1 = r[:, 4 + 2 * k1 : 6 + 2 * k1] / size + a
            radius = np.linalg.norm((p1 - p0) * size, axis=1, keepdims=True) / size
            boxes = np.concatenate([p0 - radius, p0 + radius], axis=1)
        else:
            centre = r[:, 0:2] / size + a
            half = r[:, 2:4] / size / 2.0
            boxes = np.concatenate([centre - half, centre + half], axis=1)
        s = scores[idx].astype(np.float32)
        keep, merged = nms(boxes, s, self.nms_iou, weighted=True)
        return Detections(geometry.to_source(merged), s[keep], np.zeros(len(keep), np.int32))
