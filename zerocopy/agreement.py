"""How far two runs' detections agree: the check that a faster path did not change the results."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from zerocopy.detections import box_iou


def _boxes(line: dict) -> np.ndarray:
    return np.asarray([d["box"] for d in line["detections"]], np.float32).reshape(-1, 4)


def compare_runs(reference: Sequence[dict], other: Sequence[dict], iou: float = 0.5) -> dict:
    """Compare JSON-Lines records frame by frame.

    matched_share: reference detections with a same-frame match (IoU ≥ `iou`), over all reference
    detections; extra: detections of `other` beyond the reference's count; mean_iou and
    max_score_diff over the matches.
    """
    matched = total = extra = 0
    ious: list[float] = []
    diffs: list[float] = []
    for a, b in zip(reference, other, strict=False):
        ba, bb = _boxes(a), _boxes(b)
        total += len(ba)
        extra += max(0, len(bb) - len(ba))
        if len(ba) and len(bb):
            m = box_iou(ba, bb)
            for i, j in enumerate(m.argmax(1)):
                if m[i, j] >= iou:
                    matched += 1
                    ious.append(float(m[i, j]))
                    diffs.append(abs(a["detections"][i]["score"] - b["detections"][j]["score"]))
    return {
        "frames": min(len(reference), len(other)),
        "reference_detections": total,
        "matched_share": round(matched / total, 4) if total else 1.0,
        "extra": extra,
        "mean_iou": round(float(np.mean(ious)), 4) if ious else None,
        "max_score_diff": round(float(max(diffs)), 4) if diffs else None,
    }
