"""Non-maximum suppression over xyxy boxes (numpy; the box counts here are small)."""

from __future__ import annotations

import numpy as np

from zerocopy.detections import box_iou


def nms(boxes: np.ndarray, scores: np.ndarray, iou: float, labels: np.ndarray | None = None,
        weighted: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Greedy NMS, per class when `labels` is given.

    Returns (indices kept, boxes). With `weighted` (MediaPipe's blending), each kept box becomes
    the score-weighted mean of the boxes it suppressed, which steadies boxes from dense anchors.
    """
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    if len(boxes) == 0:
        return np.zeros((0,), np.int64), boxes
    order = np.argsort(-scores, kind="stable")
    if labels is not None:
        same = labels[:, None] == labels[None, :]
    ious = box_iou(boxes, boxes)
    if labels is not None:
        ious = np.where(same, ious, 0.0)
    alive = np.ones(len(boxes), bool)
    keep: list[int] = []
    out: list[np.ndarray] = []
    for i in order:
        if not alive[i]:
            continue
        group = alive & (ious[i] > iou)
        group[i] = True
        alive &= ~group
        keep.append(int(i))
        if weighted:
            w = scores[group][:, None]
            out.append((boxes[group] * w).sum(0) / max(float(w.sum()), 1e-9))
        else:
            out.append(boxes[i])
    return np.asarray(keep, np.int64), np.asarray(out, np.float32).reshape(-1, 4)
