"""How far detections agree: two runs' (the check that a faster path did not change the results),
and a run's against the true boxes of a made clip (`score_detections`)."""

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


def compare_maps(reference: Sequence[dict], other: Sequence[dict]) -> dict:
    """Compare the `map` summaries (an image-to-image model's output: share from 0.5 up, mean) of JSON-Lines
    records frame by frame: the largest difference of each over the frames both have a map for."""
    pairs = [(a["map"], b["map"]) for a, b in zip(reference, other, strict=False) if "map" in a and "map" in b]
    return {"frames": len(pairs),
            "max_share_diff": round(max((abs(a["share"] - b["share"]) for a, b in pairs), default=0.0), 5),
            "max_mean_diff": round(max((abs(a["mean"] - b["mean"]) for a, b in pairs), default=0.0), 5)}


def agreement(reference: Sequence[dict], other: Sequence[dict]) -> dict:
    """How far a run agrees with a reference run: their detections (`compare_runs`) and, where the records
    hold an image-to-image model's maps, those (`compare_maps`, as "maps"; then the detections only if the
    reference has any: a map model alone gives none, and 100 % of none says nothing)."""
    if not any("map" in r for r in reference):
        return compare_runs(reference, other)
    out = compare_runs(reference, other) if any(r["detections"] for r in reference) else {}
    return {**out, "maps": compare_maps(reference, other)}


def score_detections(truth: Sequence[np.ndarray], found: Sequence, iou: float = 0.4) -> dict:
    """Score detections against the true face boxes, frame by frame.

    `found`: per frame, an (n, 4) array of boxes or a JSON Lines record (`{"detections": [...]}`).
    Each true face is matched to at most one detection (the best by IoU, greedily, IoU ≥ `iou`).
    An unmatched detection centred inside a matched face's box is that face's second box (a
    duplicate); every other unmatched detection (elsewhere, or a badly placed box on a face that was
    missed) is a false detection.

    Returns recall (matched faces / faces), false detections per frame (and per face-free frame),
    the share of faces with a second box, and counts.
    """
    faces = matched = false = false_free = duplicates = frames = free = 0
    for boxes, dets in zip(truth, found, strict=True):
        if isinstance(dets, dict):
            dets = [d["box"] for d in dets["detections"]]
        det = np.asarray(dets, np.float32).reshape(-1, 4)
        boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
        frames += 1
        free += len(boxes) == 0
        faces += len(boxes)
        used = np.zeros(len(det), bool)
        hit = np.zeros(len(boxes), bool)
        if len(boxes) and len(det):
            m = box_iou(boxes, det)
            for _ in range(min(len(boxes), len(det))):
                t, d = np.unravel_index(np.argmax(m), m.shape)
                if m[t, d] < iou:
                    break
                used[d] = hit[t] = True
                m[t, :] = -1.0
                m[:, d] = -1.0
        matched += int(hit.sum())
        rest = det[~used]
        centres = (rest[:, :2] + rest[:, 2:]) / 2
        inside = ((centres[:, None, 0] >= boxes[None, :, 0]) & (centres[:, None, 0] <= boxes[None, :, 2])
                  & (centres[:, None, 1] >= boxes[None, :, 1]) & (centres[:, None, 1] <= boxes[None, :, 3]))
        second = inside & hit[None, :]
        duplicates += int(second.any(axis=0).sum())
        extra = int((~second.any(axis=1)).sum())
        false += extra
        if len(boxes) == 0:
            false_free += extra
    return {
        "frames": frames,
        "faces": faces,
        "recall": matched / faces if faces else 1.0,
        "false_per_frame": false / frames if frames else 0.0,
        "false_per_free_frame": false_free / free if free else 0.0,
        "duplicate_share": duplicates / faces if faces else 0.0,
        "matched": matched,
        "false": false,
        "duplicates": duplicates,
    }
