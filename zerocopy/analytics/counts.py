"""How many tracked objects of each label each input has in view, as `Occupancy` records when a count changes
(published retained on `PREFIX/CAMERA/LABEL`, Frigate's topic; an occupancy sensor reads it, not the last event).

An object is in view from its `new` (confirmed: found in `min_hits` inferred frames) to its `end` (unseen for
`max_lost` seconds, or its input ended), predicted between sightings: a frame where the detector missed it, or one
the motion gate or `--detect-fps` left out, changes no count. One pass of one object is one rise and one fall."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping
from typing import TypeVar

from zerocopy.analytics.records import Occupancy
from zerocopy.stages.base import InputInfo, StageBase
from zerocopy.track import ObjectEvent

K = TypeVar("K")


def changed(before: Mapping[K, int], now: Mapping[K, int]) -> list[K]:
    """The keys whose count differs between two tallies (a key missing from one counts 0 there), sorted."""
    return sorted(k for k in set(now) | set(before) if now.get(k, 0) != before.get(k, 0))  # type: ignore[type-var]


def in_order(events: list) -> list:
    """A frame's events with its counts last, ordered so that a zone's count never exceeds its camera's at any
    point of the sequence: what fell first (the zones', then the cameras'), then what rose (the cameras', then the
    zones')."""
    counts = [e for e in events if isinstance(e, Occupancy)]
    if not counts:
        return events

    def key(o: Occupancy) -> tuple[bool, bool]:
        fell = o.count < o.before
        return (not fell, (o.zone is None) == fell)

    return [e for e in events if not isinstance(e, Occupancy)] + sorted(counts, key=key)


class InView(StageBase):
    """Per input, the tracked objects of each label between their `new` and their `end` (from tracking's events,
    seen in `amend`, on inferred frames and those left out alike); every count drops to 0 when the input ends. It
    comes after the zones (`in_order`)."""

    name = "in_view"

    def __init__(self) -> None:
        self._cameras: dict[int, str] = {}
        self._open: dict[int, dict[int, str]] = {}  # per input: tracker id → label, of the objects in view
        self._counts: dict[int, Counter[str]] = {}  # per input: what was last said

    def begin(self, input: InputInfo) -> None:
        self._cameras[input.index], self._open[input.index], self._counts[input.index] = input.camera, {}, Counter()

    def amend(self, events: list, input: int) -> list:
        objects = self._open.get(input)
        if objects is None:
            return events
        wall = None
        for e in events:
            if isinstance(e, ObjectEvent):
                wall = e.frame_time
                if e.type == "new":
                    objects[e.tracker_id] = e.label
                elif e.type == "end":
                    objects.pop(e.tracker_id, None)
        return in_order(events if wall is None else events + self._changes(input, wall))

    def _changes(self, input: int, wall: float) -> list[Occupancy]:
        now = Counter(self._open[input].values())
        labels = changed(self._counts[input], now)
        before, self._counts[input] = self._counts[input], now
        return [Occupancy(camera=self._cameras[input], zone=None, label=label, count=now[label], before=before[label],
                          frame_time=wall) for label in labels]

    def end(self, input: int) -> list:
        if input not in self._counts:
            return []
        self._open[input].clear()  # (tracking's `end`s came through `amend` already)
        out = self._changes(input, time.time())
        del self._counts[input], self._cameras[input], self._open[input]
        return out
