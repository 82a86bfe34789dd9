"""A Frigate camera's `objects` mapped to serve's camera table: `track` → `classes`, and `filters` (min_score,
threshold, min_area, max_area, min_ratio, max_ratio, mask) with `objects.mask` (every tracked label's) → `filters`,
as Frigate runs them: areas in detect pixels made fractions of the frame (as coordinates are), masks likewise.
docs/frigate.md is the reference."""

from __future__ import annotations

import difflib
from typing import Any

from zerocopy.catalog import CATALOG
from zerocopy.serve.frigate_report import Report, known_labels, masks

# Frigate's defaults for the bounds of a filter: a bound at its default filters nothing, and is left out
BOUND_DEFAULTS = {"min_area": 0, "max_area": 24000000, "min_ratio": 0, "max_ratio": 24000000}
AS_WRITTEN = ("min_score", "threshold", "min_ratio", "max_ratio")  # mapped as they are
FILTER_KEYS = ("min_area", "max_area", "min_ratio", "max_ratio", "threshold", "min_score", "mask")  # Frigate's
WHOLE = 0.999999  # the whole frame as a fraction (a value of 1 would be one pixel)
GEOMETRY = "x1,y1,x2,y2,… (pixels of the detect size, or fractions)"


def map_objects(objects: dict[str, Any], labels: tuple[str, ...] | None, model: str,
                size: tuple[float, float] | None, where: str, table: dict[str, Any], report: Report) -> None:
    """`objects.track` (Frigate's default: person) → `classes`; each tracked label's `filters` and `objects.mask` →
    `filters` (a filter of a label the model lacks said once; of a label not tracked, unused, as in Frigate)."""
    track = known_labels(objects.get("track", ["person"]), labels, model, "objects.track", report)
    if not track:
        report.problem(f"{where}.objects", f"track: the model {model} has none of these labels (its labels: "
                       f"{', '.join(labels or ())}): nothing would be detected; track some of its labels, or name a "
                       "model that has these (zerocopy: {defaults: {model: objects}})")
        return
    table["classes"] = track
    given = {str(k).lower(): v for k, v in (objects.get("filters") or {}).items()}
    for label in sorted(set(given) - set(track)):
        if labels is not None and label not in labels:
            report.said(f"{where}.objects.filters.{label}: {label!r} is not a label of the model {model}: not mapped")
    common = _masks(objects.get("mask"), size, f"{where}.objects", report)
    filters = {}
    for label in track:
        here = f"{where}.objects.filters.{label}"
        if not isinstance(given.get(label, {}), dict):
            report.problem(here, "a filter is a table of min_score, threshold, min_area, max_area, min_ratio, "
                           "max_ratio, mask")
            continue
        spec = _filter(given.get(label, {}), size, here, report)
        if common:
            spec["mask"] = [*spec.get("mask", []), *common]
        if spec:
            filters[label] = spec
    _scores(filters, model, table)
    if filters:
        table["filters"] = filters


def _filter(given: dict[str, Any], size: tuple[float, float] | None, here: str, report: Report) -> dict[str, Any]:
    """One label's Frigate filter as zerocopy's: bounds at Frigate's defaults left out, areas made fractions."""
    spec: dict[str, Any] = {}
    for key, value in given.items():
        if key in BOUND_DEFAULTS and value == BOUND_DEFAULTS[key]:
            continue
        if key in AS_WRITTEN:
            spec[key] = value
        elif key in ("min_area", "max_area"):
            area = _area(key, value, size)
            if area is not None:
                spec[key] = area
        elif key == "mask":
            found = _masks(value, size, here, report)
            if found:
                spec["mask"] = found
        elif key != "raw_mask":  # (what Frigate's own config API writes back: the mask as given)
            near = difflib.get_close_matches(str(key), FILTER_KEYS, n=1)
            report.problem(here, f"unknown key {key!r}" + (f" (did you mean {near[0]}?)" if near else
                                                           f"; Frigate's filter takes {', '.join(FILTER_KEYS)}"))
    return spec


def _area(key: str, value: Any, size: tuple[float, float] | None) -> Any:
    """A Frigate area as Frigate reads it: a float between 0 and 1, a fraction of the frame, kept; an int (or a
    larger float), pixels of the detect size, made a fraction of the frame (one over the whole frame: for max_area
    no bound, None; for min_area nearly the whole frame), or kept as pixels without a detect size (the stream's own).
    A value that is no number is kept, for the setting's own check to say."""
    if not isinstance(value, int | float) or isinstance(value, bool) or (isinstance(value, float) and value < 1):
        return value
    if size is None:
        return value
    fraction = float(f"{value / (size[0] * size[1]):.6g}")
    if fraction >= 1:
        return None if key == "max_area" else WHOLE
    return fraction


def _masks(value: Any, size: tuple[float, float] | None, where: str, report: Report) -> list[str]:
    if not value:
        return []
    try:
        return masks(value, size)
    except (TypeError, ValueError):
        report.problem(where, f"mask: {GEOMETRY}")
        return []


def _scores(filters: dict[str, dict[str, Any]], model: str, table: dict[str, Any]) -> None:
    """A `min_score` below the model's own threshold lowers the camera's `threshold` to it, so that the boxes down
    to it are detected, and every other tracked label keeps the model's own as its `min_score`."""
    own = CATALOG[model].threshold if model in CATALOG else None
    lowest = min((f["min_score"] for f in filters.values() if isinstance(f.get("min_score"), int | float)),
                 default=None)
    if own is None or lowest is None or lowest >= own:
        return
    table["threshold"] = lowest
    for label in table["classes"]:
        filters.setdefault(label, {}).setdefault("min_score", own)
