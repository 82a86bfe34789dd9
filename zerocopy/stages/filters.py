"""`--filter`: each label's box filters (Frigate's `objects.filters`), a stage after the region models and before
what is reported is tracked: a box is dropped when scored below `min_score`, when its area is outside `min_area`–
`max_area` (a fraction of the frame's area when below 1, else source-frame pixels), when its width ÷ height is outside
`min_ratio`–`max_ratio`, or when its bottom-centre is inside one of its `mask` polygons. Each input has its own
filters (`InputSettings.filters`), else the run's. Its report counts the boxes each filter dropped, per label.
(`threshold`, the filter that holds back an object's `new` event, is the tracker's: `track.object_events`.)"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from zerocopy.analytics.filter_specs import BOUNDS, FilterSpec, by_label
from zerocopy.analytics.geometry import bottom_centres, inside, place
from zerocopy.analytics.objects import check_labels
from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame
from zerocopy.stages.base import InputInfo, StageBase

REASONS = ("min_area", "max_area", "min_score", "min_ratio", "max_ratio", "mask")  # Frigate's order of the checks


@dataclass(kw_only=True)
class _InputFilters:
    """One input's filters by label index, their masks placed on its frame once its first frame is seen."""

    specs: dict[int, FilterSpec]
    masks: dict[int, list[np.ndarray]] = field(default_factory=dict)
    size: tuple[int, int] | None = None


class ObjectFilters(StageBase):
    """The box filters of each input (its own, else the run's); `names`: the model's labels, which the filters'
    labels must be (case-insensitively)."""

    name = "filters"

    def __init__(self, filters: Sequence[FilterSpec], names: Sequence[str] | None):
        self.names = list(names or [])
        self.run_filters = tuple(filters)
        check_labels("filter", [s.label for s in self.run_filters], self.names)
        self._inputs: dict[int, _InputFilters] = {}
        self.dropped: dict[str, dict[str, int]] = {}  # label → filter → boxes it dropped
        self.used = False

    def _label(self, index: int) -> str:
        return self.names[index] if 0 <= index < len(self.names) else str(index)

    def begin(self, input: InputInfo) -> None:
        own = input.settings.filters
        specs = [s for s in (own if own is not None else self.run_filters) if s.drops]
        self._inputs.pop(input.index, None)
        if not specs:
            return
        if own is not None:  # (the run's were checked when the stage was made)
            check_labels("filter", [s.label for s in specs], self.names)
        wanted = by_label(specs)
        if self.names:
            by_index = {i: wanted[n.lower()] for i, n in enumerate(self.names) if n.lower() in wanted}
        else:  # a model without label names: its labels are their numbers
            by_index = {int(label): s for label, s in wanted.items() if label.isdigit()}
        self._inputs[input.index] = _InputFilters(specs=by_index)
        self.used = True

    def end(self, input: int) -> list:
        self._inputs.pop(input, None)
        return []

    def __call__(self, frame: PreparedFrame, detections: Detections | None, input: int) -> \
            tuple[Detections | None, list]:
        st = self._inputs.get(input)
        if st is None or detections is None or not len(detections):
            return detections, []
        if st.size != (frame.width, frame.height):
            st.size = (frame.width, frame.height)
            st.masks = {i: [place(p, *st.size).xy for p in s.mask] for i, s in st.specs.items()}
        keep = np.ones(len(detections), bool)
        labels = np.asarray(detections.labels)
        for index, spec in st.specs.items():
            rows = np.flatnonzero(labels == index)
            if len(rows):
                keep[rows] = self._kept(spec, detections[rows], st.masks[index], st.size, self._label(index))
        return (detections if keep.all() else detections[keep]), []

    def _kept(self, spec: FilterSpec, boxes: Detections, masks: list[np.ndarray], size: tuple[int, int],
              label: str) -> np.ndarray:
        """Which of one label's boxes pass its filters; each dropped box counted under the first filter it failed."""
        xyxy = np.asarray(boxes.xyxy, np.float64)
        w, h = np.maximum(xyxy[:, 2] - xyxy[:, 0], 0), np.maximum(xyxy[:, 3] - xyxy[:, 1], 0)
        area, frame_area = w * h, float(size[0] * size[1])
        ratio = np.divide(w, h, out=np.full_like(w, np.inf), where=h > 0)
        value = dict(zip(BOUNDS, (area, area, ratio, ratio), strict=True))
        failed = {}
        for key, bound in spec.bounds().items():
            if key.endswith("area") and bound < 1:
                bound *= frame_area
            failed[key] = value[key] < bound if key.startswith("min") else value[key] > bound
        if spec.min_score is not None:
            failed["min_score"] = np.asarray(boxes.scores) < spec.min_score
        if masks:
            points = bottom_centres(xyxy)
            failed["mask"] = np.any([inside(m, points) for m in masks], axis=0)
        out = np.ones(len(boxes), bool)
        counts = self.dropped.setdefault(label, {})
        for key in REASONS:
            if key in failed:
                now = out & failed[key]
                if now.any():
                    counts[key] = counts.get(key, 0) + int(now.sum())
                out &= ~failed[key]
        return out

    def report(self) -> ObjectFilters | None:
        """Itself (`summary()`, `reset()`), once an input had filters that drop boxes."""
        return self if self.used else None

    def summary(self) -> dict:
        """The boxes dropped, in all and per label and filter."""
        return {"dropped": sum(n for c in self.dropped.values() for n in c.values()),
                "per_label": {label: dict(sorted(c.items())) for label, c in sorted(self.dropped.items()) if c}}

    def reset(self) -> None:
        self.dropped = {}
