"""`Detections`: the one result type every stage and sink speaks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Detections:
    """Boxes in source-frame pixels (x1, y1, x2, y2), with scores and integer labels."""

    xyxy: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.float32))
    scores: np.ndarray = field(default_factory=lambda: np.zeros((0,), np.float32))
    labels: np.ndarray = field(default_factory=lambda: np.zeros((0,), np.int32))

    def __post_init__(self) -> None:
        if not (len(self.xyxy) == len(self.scores) == len(self.labels)):
            raise ValueError("xyxy, scores and labels must have the same length")

    def __len__(self) -> int:
        return len(self.scores)

    @classmethod
    def empty(cls) -> Detections:
        return cls()

    def to_records(self, names: Sequence[str] | None = None) -> list[dict]:
        """JSON-ready dicts: box rounded to 0.1 px, score to 4 digits, label name when known."""
        out = []
        for box, score, label in zip(self.xyxy, self.scores, self.labels, strict=True):
            rec = {
                "box": [round(float(v), 1) for v in box],
                "score": round(float(score), 4),
                "label": int(label),
            }
            if names is not None and 0 <= label < len(names):
                rec["name"] = names[label]
            out.append(rec)
        return out


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairwise IoU of two (N, 4) and (M, 4) xyxy arrays → (N, M)."""
    a = np.asarray(a, np.float32).reshape(-1, 4)
    b = np.asarray(b, np.float32).reshape(-1, 4)
    wh = np.maximum(np.minimum(a[:, None, 2:], b[None, :, 2:]) - np.maximum(a[:, None, :2], b[None, :, :2]), 0)
    inter = wh[..., 0] * wh[..., 1]
    size_a = np.maximum(a[:, 2:] - a[:, :2], 0)
    size_b = np.maximum(b[:, 2:] - b[:, :2], 0)
    area_a, area_b = size_a[:, 0] * size_a[:, 1], size_b[:, 0] * size_b[:, 1]
    union = area_a[:, None] + area_b[None, :] - inter
    return np.where(union > 0, inter / np.maximum(union, 1e-9), 0.0).astype(np.float32)
