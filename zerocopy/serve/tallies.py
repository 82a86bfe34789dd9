"""What one camera's zones, lines and motion gate say, kept from its events and frames for `/api/cameras` and
`/metrics`: the objects in view and in each zone (the last `count` of each), the crossings of each line by
direction and label, whether motion is seen now and how many inferences the gate saved. Bounded: one entry per
label, zone and line the camera has."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

from zerocopy.analytics.records import LineCrossing, Occupancy
from zerocopy.snapshots.stage import SnapshotSaved
from zerocopy.stages.motion import AllMotion


class Tallies:
    """Not thread-safe: the camera updates and reads it under its own lock."""

    def __init__(self) -> None:
        self.objects: dict[str, int] = {}  # label → in view now
        self.zones: dict[str, dict[str, int]] = {}  # zone → label → in it now
        self.crossings: dict[tuple[str, str, str], int] = {}  # (line, direction, label) → since the start
        self.motion_active = False
        self.motion_frames = 0  # frames with the gate's motion record (measured, or carried from the last)
        self.skipped = 0  # inferences the motion gate saved
        self.whole_scene = 0  # times the whole picture moved at once (an IR switch, rain on the lens)
        self._whole = False
        self._at: float | None = None  # monotonic time of the last measured frame
        self._scene = AllMotion()

    def events(self, events: Iterable[Any]) -> int:
        """Takes a frame's events; returns how many go to the camera's events topic (the objects' events: `new`,
        `update`, `loiter`, `end`; and crossings)."""
        objects = 0
        for e in events:
            if isinstance(e, SnapshotSaved):  # a file written (published retained, with the extras)
                continue
            if isinstance(e, Occupancy):
                where = self.objects if e.zone is None else self.zones.setdefault(e.zone, {})
                where[e.label] = e.count
            elif isinstance(e, LineCrossing):
                key = (e.line, e.direction, e.label)
                self.crossings[key] = self.crossings.get(key, 0) + 1
                objects += 1  # (published on the events topic, as the objects' events are)
            else:  # an `ObjectEvent`
                objects += 1
        return objects

    def frame(self, frame: Any) -> None:
        """A frame's motion record (`PreparedFrame.motion`: measured on it, or carried from the last measured)."""
        motion = frame.motion
        if motion is None:
            return
        self.motion_frames += 1
        now = time.monotonic()
        dt = min(1.0, now - self._at) if self._at is not None else 0.0
        self._at = now
        self._scene.add(motion.moving or motion.whole_scene, dt)
        self.motion_active = bool(motion.moving)
        whole = bool(motion.whole_scene)
        self.whole_scene += whole and not self._whole  # an episode counts once, when it begins
        self._whole = whole
        self.skipped += frame.skipped_by == "motion"

    @property
    def all_motion(self) -> bool:
        """The scene has been all motion for a while (rain, wind in trees, a flickering light): the gate then
        infers at --detect-fps, and this says so."""
        return self._scene.all_motion

    def lines(self) -> dict[str, dict[str, dict[str, int]]]:
        out: dict[str, dict[str, dict[str, int]]] = {}
        for (line, direction, label), n in sorted(self.crossings.items()):
            out.setdefault(line, {"in": {}, "out": {}})[direction][label] = n
        return out

    def to_json(self) -> dict[str, Any]:
        return {"objects": dict(self.objects), "zones": {z: dict(c) for z, c in self.zones.items()},
                "lines": self.lines(),
                "motion": {"measured": self.motion_frames > 0, "active": self.motion_active,
                           "all_motion": self.all_motion, "inferences_skipped": self.skipped,
                           "whole_scene": self.whole_scene}}


def analytics_metrics(statuses: Iterable[Any]) -> Iterator[Any]:
    """The Prometheus families of the cameras' zones, lines and motion gate (`CameraStatus.analytics`)."""
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily  # (the serve extra)

    zone = GaugeMetricFamily("zerocopy_zone_objects", "objects in a zone now", labels=["camera", "zone", "label"])
    view = GaugeMetricFamily("zerocopy_objects", "tracked objects in view now", labels=["camera", "label"])
    crossed = CounterMetricFamily("zerocopy_line_crossings", "objects that crossed a line since the start",
                                  labels=["camera", "line", "direction", "label"])
    active = GaugeMetricFamily("zerocopy_motion_active", "1 while the motion gate sees motion", labels=["camera"])
    skipped = CounterMetricFamily("zerocopy_inferences_skipped", "frames the motion gate left uninferred (nothing "
                                  "moved) since the start", labels=["camera"])
    everywhere = GaugeMetricFamily("zerocopy_motion_all", "1 while the scene has been all motion for a minute "
                                   "(rain, wind in trees: the gate then infers at detect_fps)", labels=["camera"])
    whole = CounterMetricFamily("zerocopy_motion_whole_scene", "times the whole picture moved at once (an IR "
                                "switch, rain, a shaken camera) since the start", labels=["camera"])
    for s in statuses:
        a = s.analytics
        for label, n in a.get("objects", {}).items():
            view.add_metric([s.name, label], n)
        for z, counts in a.get("zones", {}).items():
            for label, n in counts.items():
                zone.add_metric([s.name, z, label], n)
        for line, ways in a.get("lines", {}).items():
            for direction, counts in ways.items():
                for label, n in counts.items():
                    crossed.add_metric([s.name, line, direction, label], n)
        motion = a.get("motion") or {}
        if motion.get("measured"):
            active.add_metric([s.name], 1.0 if motion.get("active") else 0.0)
            everywhere.add_metric([s.name], 1.0 if motion.get("all_motion") else 0.0)
            skipped.add_metric([s.name], motion.get("inferences_skipped", 0))
            whole.add_metric([s.name], motion.get("whole_scene", 0))
    yield from (view, zone, crossed, active, everywhere, skipped, whole)
