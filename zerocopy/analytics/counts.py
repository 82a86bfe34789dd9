"""How many tracked objects of each label each input has in view, as `Occupancy` records when a count changes
(published retained on `PREFIX/CAMERA/LABEL`, Frigate's topic; an occupancy sensor reads it, not the last event)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from zerocopy.analytics.records import Occupancy
from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame
from zerocopy.pipeline.tracking import wall_time
from zerocopy.stages.base import InputInfo, StageBase

K = TypeVar("K")


def changed(before: Mapping[K, int], now: Mapping[K, int]) -> list[K]:
    """The keys whose count differs between two tallies (a key missing from one counts 0 there), sorted."""
    return sorted(k for k in set(now) | set(before) if now.get(k, 0) != before.get(k, 0))  # type: ignore[type-var]


class InView(StageBase):
    """Per input, the confirmed tracked objects of each label in the last inferred frame (frames left out keep
    the counts); every count drops to 0 when the input ends."""

    name = "in_view"

    def __init__(self, names: Sequence[str] | None):
        self.names = list(names or [])
        self._cameras: dict[int, str] = {}
        self._counts: dict[int, Counter[str]] = {}

    def begin(self, input: InputInfo) -> None:
        self._cameras[input.index], self._counts[input.index] = input.camera, Counter()

    def _label(self, index: int) -> str:
        return self.names[index] if 0 <= index < len(self.names) else str(index)

    def __call__(self, frame: PreparedFrame, detections: Detections | None, input: int) -> tuple[Any, list]:
        if detections is None or input not in self._counts:
            return detections, []
        ids = detections.tracker_id
        confirmed = np.asarray(ids) >= 0 if ids is not None else np.zeros(len(detections), bool)
        now = Counter(self._label(int(label)) for label in np.asarray(detections.labels)[confirmed])
        return detections, self._changes(input, now, wall_time(frame))

    def _changes(self, input: int, now: Counter[str], wall: float) -> list[Occupancy]:
        labels = changed(self._counts[input], now)
        self._counts[input] = now
        return [Occupancy(camera=self._cameras[input], zone=None, label=label, count=now[label], frame_time=wall)
                for label in labels]

    def end(self, input: int) -> list:
        if input not in self._counts:
            return []
        out = self._changes(input, Counter(), time.time())
        del self._counts[input], self._cameras[input]
        return out
