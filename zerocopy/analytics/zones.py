"""`--zone`: which tracked objects are in which zones (Frigate's rule: the box's bottom-centre inside the polygon
for `min_frames` inferred frames in a row), carried by every object event (`current_zones`, `entered_zones`);
entering and leaving make `update` events, staying `loiter_s` a `loiter` event once; per zone and label, how many
objects are in it (`Occupancy`, and the stage's report)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zerocopy.analytics.counts import changed
from zerocopy.analytics.geometry import bottom_centres, inside
from zerocopy.analytics.objects import InputState, ObjectStage
from zerocopy.analytics.records import Occupancy
from zerocopy.analytics.specs import ZoneSpec
from zerocopy.detections import Detections
from zerocopy.stages.base import InputInfo
from zerocopy.track import ObjectEvent


@dataclass(kw_only=True)
class _InZone:
    run: int = 0  # inferred frames in a row inside
    since: float | None = None  # media time it counted as in (None: it is not)
    loitered: bool = False


@dataclass(kw_only=True)
class _Object:
    label: str
    box: tuple[float, float, float, float]
    score: float
    zones: dict[str, _InZone] = field(default_factory=dict)
    current: list[str] = field(default_factory=list)
    entered: list[str] = field(default_factory=list)
    changed: bool = False  # its zones changed since its last event
    loiter: list[str] = field(default_factory=list)  # zones it has just stayed `loiter_s` in


class Zones(ObjectStage):
    """The zones of each input (its own, else the run's), as `RunConfig.zones` and `InputSettings.zones` hold them:
    read once, into their specs."""

    name = "zones"
    kind = "zone"

    def __init__(self, zones: Sequence[ZoneSpec], names: Sequence[str] | None):
        super().__init__(names, zones)
        self.run_zones = tuple(zones)
        self._objects: dict[int, dict[int, _Object]] = {}
        self._counts: dict[int, dict[tuple[str, str], int]] = {}  # per input: (zone, label) → objects in it now
        self._entries: dict[tuple[str, str, str], int] = {}  # (camera, zone, label) → objects that entered

    def specs_of(self, input: InputInfo) -> list:
        own = input.settings.zones
        return list(own if own is not None else self.run_zones)

    def begin(self, input: InputInfo) -> None:
        super().begin(input)
        self._objects[input.index] = {}
        self._counts[input.index] = {}

    def see(self, st: InputState, tracked: Detections) -> None:
        objects = self._objects[st.info.index]
        points = bottom_centres(tracked.xyxy)
        within = np.stack([inside(shape, points) for shape in st.shapes], axis=1)  # boxes × zones
        for i, tid in enumerate(np.asarray(tracked.tracker_id).tolist()):
            label = self.label(int(tracked.labels[i]))
            box = tuple(float(v) for v in tracked.xyxy[i])
            obj = objects.setdefault(tid, _Object(label=label, box=box, score=0.0))
            obj.box, obj.score = box, float(tracked.scores[i])
            for z, spec in enumerate(st.specs):
                self._step(obj, spec, bool(within[i, z]) and spec.counts(label), st.t)

    @staticmethod
    def _step(obj: _Object, spec: Any, now_inside: bool, t: float) -> None:
        """One inferred frame of one object against one zone."""
        z = obj.zones.setdefault(spec.name, _InZone())
        if now_inside:
            z.run += 1
            if z.since is None and z.run >= spec.min_frames:
                z.since = t
                obj.current.append(spec.name)
                if spec.name not in obj.entered:
                    obj.entered.append(spec.name)
                obj.changed = True
            if z.since is not None and spec.loiter_s and not z.loitered and t - z.since >= spec.loiter_s:
                z.loitered = True
                obj.loiter.append(spec.name)
        else:
            z.run = 0
            if z.since is not None:
                z.since, z.loitered = None, False
                obj.current.remove(spec.name)
                obj.changed = True

    def annotate(self, st: InputState, event: ObjectEvent) -> ObjectEvent:
        obj = self._objects[st.info.index].get(event.tracker_id)
        if obj is None:
            return event
        obj.changed = False  # this event says it
        return dataclasses.replace(event, current_zones=tuple(obj.current), entered_zones=tuple(obj.entered))

    def made(self, st: InputState) -> list:
        out: list[Any] = []
        for tid, obj in self._objects[st.info.index].items():
            last = st.last.get(tid)
            if last is None:
                continue
            if obj.changed:
                out.append(self._event(st, last, obj, "update"))
                obj.changed = False
            for zone in obj.loiter:
                out.append(self._event(st, last, obj, "loiter", zone))
            obj.loiter.clear()
            st.last[tid] = out[-1] if out and out[-1].tracker_id == tid else last
        return out + self._occupancy(st)

    @staticmethod
    def _event(st: InputState, last: ObjectEvent, obj: _Object, kind: str, zone: str | None = None) -> ObjectEvent:
        return dataclasses.replace(last, type=kind, box=obj.box, score=obj.score,
                                   top_score=max(last.top_score, obj.score), frame_time=st.wall,
                                   last_pts=max(last.last_pts, st.t), current_zones=tuple(obj.current),
                                   entered_zones=tuple(obj.entered), zone=zone)

    def _occupancy(self, st: InputState) -> list[Occupancy]:
        """A count for each (zone, label) whose number of objects in it changed."""
        now: dict[tuple[str, str], int] = {}
        for obj in self._objects[st.info.index].values():
            for zone in obj.current:
                now[(zone, obj.label)] = now.get((zone, obj.label), 0) + 1
        before = self._counts[st.info.index]
        moved = changed(before, now)
        for zone, label in moved:
            gained = now.get((zone, label), 0) - before.get((zone, label), 0)
            if gained > 0:
                key = (st.info.camera, zone, label)
                self._entries[key] = self._entries.get(key, 0) + gained
        self._counts[st.info.index] = now
        return [Occupancy(camera=st.info.camera, zone=zone, label=label, count=now.get((zone, label), 0),
                          before=before.get((zone, label), 0), frame_time=st.wall) for zone, label in moved]

    def forget(self, st: InputState, tracker_id: int) -> None:
        self._objects[st.info.index].pop(tracker_id, None)

    def end(self, input: int) -> list:
        self._objects.pop(input, None)
        self._counts.pop(input, None)
        return super().end(input)

    def summary(self) -> dict[str, Any]:
        """Per camera, zone and label: the objects that entered it."""
        out: dict[str, Any] = {}
        for (camera, zone, label), n in sorted(self._entries.items()):
            out.setdefault(camera, {}).setdefault(zone, {})[label] = n
        return {"entered": out}

    def reset(self) -> None:
        self._entries.clear()
