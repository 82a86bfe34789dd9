"""`Detections`: the one result type every stage and sink speaks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Attribute:
    """What a second model said of one box (`--classify`): `model` names it, `name` is its class or
    the quantity it measures ("Left", "presence", "180"), `score` its confidence."""

    model: str
    name: str
    score: float

    def to_record(self) -> dict:
        return {"model": self.model, "name": self.name, "score": round(float(self.score), 4)}


@dataclass(frozen=True)
class Detections:
    """Boxes in source-frame pixels (x1, y1, x2, y2), with scores and integer labels.

    With second models (`--classify`), `attributes` holds each box's tuple of `Attribute`s and
    `keypoints` each box's (K, 2) points in source-frame pixels (None for a box no landmark model
    ran on); both are empty tuples when no second model ran. `tracker_id` (with tracking) is each box's
    object id, stable across the input's frames (-1: not confirmed yet); None without tracking.
    """

    xyxy: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.float32))
    scores: np.ndarray = field(default_factory=lambda: np.zeros((0,), np.float32))
    labels: np.ndarray = field(default_factory=lambda: np.zeros((0,), np.int32))
    attributes: tuple[tuple[Attribute, ...], ...] = ()
    keypoints: tuple[np.ndarray | None, ...] = ()
    tracker_id: np.ndarray | None = None

    def __post_init__(self) -> None:
        if not (len(self.xyxy) == len(self.scores) == len(self.labels)):
            raise ValueError("xyxy, scores and labels must have the same length")
        if self.tracker_id is not None and len(self.tracker_id) != len(self.scores):
            raise ValueError("tracker_id must be None or have one id per box")
        for name in ("attributes", "keypoints"):
            extra = getattr(self, name)
            if extra and len(extra) != len(self.scores):
                raise ValueError(f"{name} must be empty or have one entry per box")

    def __len__(self) -> int:
        return len(self.scores)

    def __getitem__(self, keep: np.ndarray | slice | Sequence[int]) -> Detections:
        """The boxes `keep` selects (a boolean mask, indices or a slice), with what is attached to them."""
        idx = np.arange(len(self))[keep]
        return Detections(self.xyxy[idx], self.scores[idx], self.labels[idx],
                          tuple(self.attributes[i] for i in idx) if self.attributes else (),
                          tuple(self.keypoints[i] for i in idx) if self.keypoints else (),
                          None if self.tracker_id is None else self.tracker_id[idx])

    @classmethod
    def empty(cls) -> Detections:
        return cls()

    def with_extras(self, attributes: Sequence[Sequence[Attribute]],
                    keypoints: Sequence[np.ndarray | None]) -> Detections:
        """These boxes with per-box attributes and keypoints attached (one entry per box each)."""
        return Detections(self.xyxy, self.scores, self.labels, tuple(tuple(a) for a in attributes), tuple(keypoints),
                          self.tracker_id)

    def with_ids(self, tracker_id: np.ndarray) -> Detections:
        """These boxes with their tracker ids (one per box, -1 for none)."""
        return Detections(self.xyxy, self.scores, self.labels, self.attributes, self.keypoints,
                          np.asarray(tracker_id, np.int64).reshape(-1))

    def to_records(self, names: Sequence[str] | None = None) -> list[dict]:
        """JSON-ready dicts: box rounded to 0.1 px, score to 4 digits, label name when known, and what
        second models attached (`attributes`; `keypoints` as [x, y] pairs rounded to 0.1 px)."""
        out = []
        for i, (box, score, label) in enumerate(zip(self.xyxy, self.scores, self.labels, strict=True)):
            rec = {
                "box": [round(float(v), 1) for v in box],
                "score": round(float(score), 4),
                "label": int(label),
            }
            if names is not None and 0 <= label < len(names):
                rec["name"] = names[label]
            if self.tracker_id is not None and self.tracker_id[i] >= 0:
                rec["tracker_id"] = int(self.tracker_id[i])
            if self.attributes and self.attributes[i]:
                rec["attributes"] = [a.to_record() for a in self.attributes[i]]
            if self.keypoints and self.keypoints[i] is not None:
                rec["keypoints"] = np.round(self.keypoints[i][:, :2].astype(np.float64), 1).tolist()
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
