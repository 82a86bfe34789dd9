"""`--line`: tracked objects crossing a line, and which way (`LineCrossing` events; counts per line, direction and
label in the stage's report).

An object's point is its box's bottom-centre, where it stands. Its side of the line is taken only once the point
is clearly off it: more than `HYSTERESIS` of the box's height (at least `MIN_BAND_PX`) away, so a box jittering on
the line changes no side. A crossing is a change of side whose path (from the last point clearly on the old side
to the first clearly on the new) meets the segment itself, not the line through it beyond its ends.

Sides are followed from an object's first sighting (the box no track held yet, in the inferred frame before its
track's first), before it is confirmed (`min_hits`): a crossing made then is said once the object is confirmed (with
the time it crossed), and forgotten if it never is."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zerocopy.analytics.geometry import along, bottom_centres, side
from zerocopy.analytics.objects import InputState, ObjectStage
from zerocopy.analytics.records import LineCrossing
from zerocopy.analytics.specs import LineSpec
from zerocopy.detections import Detections
from zerocopy.stages.base import InputInfo
from zerocopy.track.times import went_back

HYSTERESIS = 0.1  # of the box's height: the band around the line where no side is taken
MIN_BAND_PX = 2.0
ENDS_SLACK = 0.02  # of the segment's length: a path that meets it this close past an end still counts
FORGET_S = 30.0  # an object never confirmed and unseen this long (media time): its sides and crossings forgotten
NEAR = 2.0  # of the box's height: how far an object's first box (without an id) may be from its second


def _sides(segment: np.ndarray, points: np.ndarray, heights: np.ndarray) -> np.ndarray:
    """Per point, +1 or -1: the side of the line it is clearly on (further than the band around it, a share of its
    box's height); 0: on the line."""
    distance = side(segment, points)
    band = np.maximum(HYSTERESIS * heights, MIN_BAND_PX)
    return np.where(distance > band, 1, np.where(distance < -band, -1, 0))


@dataclass(kw_only=True)
class _Side:
    side: int  # +1 right of the line (looking from its first point to its second), -1 left
    at: np.ndarray  # the last point clearly on that side


@dataclass(frozen=True, kw_only=True)
class _Crossed:
    tracker_id: int
    line: str
    direction: str
    label: str
    box: tuple[float, float, float, float]
    wall: float  # the Unix and media times of the frame where it was first seen across
    pts: float


class Lines(ObjectStage):
    """The lines of each input (its own, else the run's). `sighted(input)`: the input's last inferred frame's boxes
    with every track's id, confirmed or not (`InputTracks.sighted`); None: the confirmed objects only."""

    name = "lines"
    kind = "line"

    def __init__(self, lines: Sequence[LineSpec], names: Sequence[str] | None,
                 sighted: Callable[[int], Detections | None] | None = None):
        super().__init__(names, lines)
        self.run_lines = tuple(lines)
        self.sighted = sighted
        self._sides: dict[int, dict[tuple[int, str], _Side]] = {}  # per input: (object, line) → its side
        self._pending: dict[int, list[_Crossed]] = {}  # per input: crossings not said yet (of unconfirmed objects)
        self._seen: dict[int, dict[int, float]] = {}  # per input: object → media time it was last sighted
        self._ended: dict[int, list[LineCrossing]] = {}  # per input: crossings of objects that ended this frame
        # per input: the boxes no track holds (an object's first sighting) of its last inferred frame, and of the one
        # before it (where `see` looks for the first sighting of an object new in this one)
        self._unheld: dict[int, Detections] = {}
        self._before: dict[int, Detections] = {}
        self._t: dict[int, float] = {}  # per input: the media time of its last inferred frame
        self._counts: dict[tuple[str, str, str, str], int] = {}  # (camera, line, direction, label) → crossings

    def specs_of(self, input: InputInfo) -> list:
        own = input.settings.lines
        return list(own if own is not None else self.run_lines)

    def begin(self, input: InputInfo) -> None:
        super().begin(input)
        self._sides[input.index], self._pending[input.index], self._seen[input.index] = {}, [], {}

    def tracked(self, detections: Detections, input: int) -> Detections:
        sighted = self.sighted(input) if self.sighted is not None else None
        if sighted is None:
            return detections
        st = self._inputs[input]
        if input in self._t and went_back(st.t, self._t[input], st.info.rate):  # a looped file: tracking restarted too
            self._unheld.pop(input, None)
            for tid in [tid for tid in self._seen[input] if tid not in st.last]:
                self.forget(st, tid)
        self._t[input] = st.t
        held = np.asarray(sighted.tracker_id) >= 0  # (ByteTrack gives a track its id at its second sighting)
        self._before[input] = self._unheld.get(input, Detections.empty())
        self._unheld[input] = sighted[~held]
        return sighted

    def see(self, st: InputState, tracked: Detections) -> None:
        sides, pending, seen = self._sides[st.info.index], self._pending[st.info.index], self._seen[st.info.index]
        ids = np.asarray(tracked.tracker_id).tolist()
        self._seed(st, tracked, [i for i, tid in enumerate(ids) if tid not in seen])
        seen.update(dict.fromkeys(ids, st.t))
        points = bottom_centres(tracked.xyxy)
        heights = np.asarray(tracked.xyxy[:, 3] - tracked.xyxy[:, 1], np.float64)
        for spec, segment in zip(st.specs, st.shapes, strict=True):
            on = _sides(segment, points, heights)
            for i, tid in enumerate(ids):
                label = self.label(int(tracked.labels[i]))
                if not spec.counts(label):
                    continue
                now = int(on[i])
                if now == 0:
                    continue  # on the line, within the band: no side taken
                known = sides.get((tid, spec.name))
                if known is not None and now != known.side:
                    where = along(segment, known.at, points[i])
                    if where is not None and -ENDS_SLACK <= where <= 1 + ENDS_SLACK:
                        pending.append(_Crossed(tracker_id=tid, line=spec.name, label=label,
                                                direction="in" if known.side > 0 else "out",
                                                box=tuple(float(v) for v in tracked.xyxy[i]), wall=st.wall, pts=st.t))
                sides[(tid, spec.name)] = _Side(side=now, at=points[i].copy())
        for tid in [tid for tid, t in seen.items() if st.t - t > FORGET_S and tid not in st.last]:
            self.forget(st, tid)  # never confirmed: its track is long gone

    def _seed(self, st: InputState, tracked: Detections, new: list[int]) -> None:
        """Each object new here (rows `new` of `tracked`) takes its side of each line at its first sighting: the box
        without an id, of its label, nearest to it in the inferred frame before (within `NEAR` of its height)."""
        before = self._before.get(st.info.index, Detections.empty())
        if not new or not len(before):
            return
        then, now = bottom_centres(before.xyxy), bottom_centres(tracked.xyxy)
        heights = np.asarray(before.xyxy[:, 3] - before.xyxy[:, 1], np.float64)
        for i in new:
            same = np.flatnonzero(np.asarray(before.labels) == int(tracked.labels[i]))
            if not len(same):
                continue
            j = same[np.argmin(np.linalg.norm(then[same] - now[i], axis=1))]
            if np.linalg.norm(then[j] - now[i]) > NEAR * heights[j]:
                continue
            tid = int(tracked.tracker_id[i])
            for spec, segment in zip(st.specs, st.shapes, strict=True):
                was = int(_sides(segment, then[j:j + 1], heights[j:j + 1])[0])
                if was:
                    self._sides[st.info.index][(tid, spec.name)] = _Side(side=was, at=then[j].copy())

    def made(self, st: InputState) -> list[Any]:
        pending, self._pending[st.info.index] = self._pending[st.info.index], []
        out = self._ended.pop(st.info.index, [])
        for c in pending:
            last = st.last.get(c.tracker_id)
            if last is None:  # not confirmed yet: said once it is (it has no events to name it before)
                self._pending[st.info.index].append(c)
            else:
                out.append(self._crossing(st, c, last))
        return out

    def _crossing(self, st: InputState, c: _Crossed, last: Any) -> LineCrossing:
        """The record of crossing `c` by the object whose last event is `last`, counted."""
        key = (st.info.camera, c.line, c.direction, c.label)
        self._counts[key] = self._counts.get(key, 0) + 1
        return LineCrossing(id=last.id, tracker_id=c.tracker_id, node=last.node, camera=st.info.camera,
                            source=last.source, line=c.line, direction=c.direction, label=c.label, frame_time=c.wall,
                            pts=c.pts, box=c.box)

    def forget(self, st: InputState, tracker_id: int) -> None:
        """An object ended (its crossings not said yet are kept for `made`, which comes after), or one never
        confirmed is long gone (its crossings go with it)."""
        sides = self._sides[st.info.index]
        for key in [k for k in sides if k[0] == tracker_id]:
            del sides[key]
        last = st.last.get(tracker_id)
        pending, kept = self._pending[st.info.index], []
        for c in pending:
            if c.tracker_id != tracker_id:
                kept.append(c)
            elif last is not None:
                self._ended.setdefault(st.info.index, []).append(self._crossing(st, c, last))
        pending[:] = kept
        self._seen[st.info.index].pop(tracker_id, None)

    def end(self, input: int) -> list:
        self._sides.pop(input, None)
        self._pending.pop(input, None)
        for kept in (self._seen, self._ended, self._unheld, self._before, self._t):
            kept.pop(input, None)
        return super().end(input)

    def counts(self) -> dict[tuple[str, str, str, str], int]:
        """(camera, line, direction, label) → crossings so far."""
        return dict(self._counts)

    def summary(self) -> dict[str, Any]:
        """Per camera, line, direction and label: the crossings."""
        out: dict[str, Any] = {}
        for (camera, line, direction, label), n in sorted(self._counts.items()):
            out.setdefault(camera, {}).setdefault(line, {"in": {}, "out": {}})[direction][label] = n
        return {"crossings": out}

    def reset(self) -> None:
        self._counts.clear()
