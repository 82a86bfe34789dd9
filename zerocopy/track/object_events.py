"""Object events: `new` once an object has been found in `min_hits` inferred frames (and, with a label's filter
`threshold`, once the median of its last scores reaches it), `update` when its box or score changed materially (at
most every `update_interval` seconds), `end` at the first inferred frame after it has gone unseen for more than
`max_lost` seconds (with that frame's time), or when its input ends or the run stops (with its last frame's).

Times: `start_time`, `end_time` and `frame_time` are Unix times (when the frame came out of its decoder),
`first_pts`/`last_pts` the object's first and last sighting in the input's own media time. Intervals
(`max_lost`, `update_interval`) count in media time, so a file gives the same events however fast it
is read. Memory is bounded by the objects alive: ended objects leave only their label's count and dwell.
"""

from __future__ import annotations

import math
import secrets
import statistics
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from zerocopy.detections import Detections, box_iou
from zerocopy.stages.records import RecordBase

MOVED_IOU = 0.8  # a box whose IoU with the last published one is below this has moved: worth an update
SCORE_CHANGE = 0.1  # likewise a score that changed by this much
SCORE_HISTORY = 10  # an object's last scores whose median a label's `threshold` asks of it (Frigate keeps 10)

_ID_CHARS = string.ascii_lowercase + string.digits


@dataclass(frozen=True, kw_only=True)
class ObjectEvent(RecordBase):
    """What one tracked object did: `type` is `new`, `update` or `end` (and, with zones, `loiter`). `id` is
    unique across runs and machines (Frigate's form: start time and six random characters); `tracker_id` is the
    object's id in its input's `Detections.tracker_id`. `box` is (x1, y1, x2, y2) in source-frame pixels;
    `frames` counts the inferred frames it was found in. A record (`stages.records`): an event, on the events topic."""

    logged: ClassVar[bool] = True

    type: str
    id: str
    tracker_id: int
    node: str
    camera: str
    source: str
    label: str
    score: float
    top_score: float
    box: tuple[float, float, float, float]
    start_time: float
    end_time: float | None
    frame_time: float
    first_pts: float
    last_pts: float
    frames: int
    current_zones: tuple[str, ...] = ()  # the zones it is in now (`--zone`), in the order they were given
    entered_zones: tuple[str, ...] = ()  # every zone it has entered, in the order it entered them
    zone: str | None = None  # a `loiter` event's zone
    has_snapshot: bool = False  # a snapshot of it is written, or being written (serve's snapshots)
    has_clip: bool = False  # a clip of it will be written (serve's recording)
    # what a stage after tracking adds of its own (`{"dwell": {…}}`): in the record, and in MQTT's payload and `after`
    extra: dict[str, Any] = field(default_factory=dict, hash=False)  # (not hashed: an event stays hashable)

    def to_record(self) -> dict:
        """The event as one JSON Lines record (`--events`)."""
        return {
            "type": self.type, "id": self.id, "tracker_id": self.tracker_id, "node": self.node,
            "camera": self.camera, "source": self.source, "label": self.label, "score": round(self.score, 4),
            "top_score": round(self.top_score, 4), "box": [round(v, 1) for v in self.box],
            "start_time": round(self.start_time, 3),
            "end_time": None if self.end_time is None else round(self.end_time, 3),
            "frame_time": round(self.frame_time, 3), "first_pts": round(self.first_pts, 3),
            "last_pts": round(self.last_pts, 3), "frames": self.frames,
            "current_zones": list(self.current_zones), "entered_zones": list(self.entered_zones),
            **({"zone": self.zone} if self.zone is not None else {}),
            **({"has_snapshot": True} if self.has_snapshot else {}), **({"has_clip": True} if self.has_clip else {}),
            **self.extra,
        }

    def _frigate(self) -> dict:
        """The object as Frigate's `before`/`after` describe one (its fields that zerocopy has)."""
        x1, y1, x2, y2 = (int(round(v)) for v in self.box)
        w, h = max(x2 - x1, 0), max(y2 - y1, 0)
        return {
            "id": self.id, "camera": self.camera, "frame_time": round(self.frame_time, 3),
            "label": self.label.lower(), "sub_label": None, "top_score": round(self.top_score, 4),
            "false_positive": False, "start_time": round(self.start_time, 3),
            "end_time": None if self.end_time is None else round(self.end_time, 3),
            "score": round(self.score, 4), "box": [x1, y1, x2, y2], "area": w * h,
            "ratio": round(w / h, 3) if h else 0.0, "active": self.type != "end", "stationary": False,
            "current_zones": list(self.current_zones), "entered_zones": list(self.entered_zones),
            "has_snapshot": self.has_snapshot, "has_clip": self.has_clip, **self.extra,
        }

    def to_mqtt(self, before: ObjectEvent | None = None) -> dict:
        """The MQTT payload: the fields of `to_record()` at the top (labels lowercased, as Frigate's are),
        and Frigate's envelope: `before` (the object at its previous event; at `new`, as now) and `after`."""
        after = self._frigate()
        return {**self.to_record(), "label": self.label.lower(), "box": after["box"],
                "before": (before or self)._frigate(), "after": after}


@dataclass(kw_only=True)
class _Object:
    tracker_id: int
    label: str
    first_pts: float
    first_wall: float
    box: np.ndarray
    score: float
    last_pts: float = 0.0
    last_wall: float = 0.0
    hits: int = 0
    top_score: float = 0.0
    event_id: str | None = None  # set once `new` went out
    sent_pts: float = 0.0  # when the last event went out, and what it said
    sent_box: np.ndarray = field(default_factory=lambda: np.zeros(4))
    sent_score: float = 0.0
    scores: list[float] = field(default_factory=list)  # its last SCORE_HISTORY scores

    def see(self, box: np.ndarray, score: float, pts: float, wall: float) -> None:
        self.box, self.score, self.last_pts, self.last_wall = box, score, pts, wall
        self.scores = [*self.scores[1 - SCORE_HISTORY:], score]
        self.hits += 1
        self.top_score = max(self.top_score, score)

    def changed(self) -> bool:
        iou = float(box_iou(self.box[None], self.sent_box[None])[0, 0])
        return iou < MOVED_IOU or abs(self.score - self.sent_score) >= SCORE_CHANGE


class ObjectEvents:
    """The events of one input's tracked objects (fed each inferred frame's boxes and their ids). `thresholds`:
    per label (lowercased), the median of an object's last scores that its `new` waits for (Frigate's `threshold`,
    which tells a true object from a false positive), besides its `min_hits` sightings."""

    def __init__(self, names: Sequence[str] | None, source: str, camera: str, node: str, min_hits: int = 3,
                 max_lost: float = 2.0, update_interval: float = 5.0, thresholds: Mapping[str, float] | None = None):
        self.names, self.source, self.camera, self.node = names, source, camera, node
        self.thresholds = {label.lower(): t for label, t in (thresholds or {}).items()}
        self.min_hits, self.max_lost, self.update_interval = min_hits, max_lost, update_interval
        self._objects: dict[int, _Object] = {}
        self.totals: dict[str, list[float]] = {}  # label → [objects that had a `new`, their summed dwell]
        self._previous = -math.inf  # the media time of the previous inferred frame

    def _label(self, label: int) -> str:
        return self.names[label] if self.names is not None and 0 <= label < len(self.names) else str(label)

    def _event(self, kind: str, obj: _Object, wall: float) -> ObjectEvent:
        assert obj.event_id is not None
        x1, y1, x2, y2 = (float(v) for v in obj.box)
        return ObjectEvent(type=kind, id=obj.event_id, tracker_id=obj.tracker_id, node=self.node, camera=self.camera,
                           source=self.source, label=obj.label, score=float(obj.score), top_score=float(obj.top_score),
                           box=(x1, y1, x2, y2), start_time=obj.first_wall,
                           end_time=obj.last_wall if kind == "end" else None, frame_time=wall, first_pts=obj.first_pts,
                           last_pts=obj.last_pts, frames=obj.hits)

    def _sent(self, obj: _Object, pts: float) -> None:
        obj.sent_pts, obj.sent_box, obj.sent_score = pts, obj.box.copy(), obj.score

    def _gone(self, obj: _Object, pts: float) -> bool:
        """Whether `obj` has been unseen for longer than `max_lost` at `pts`, and so has ended. Unseen means
        looked for and not found: an object the previous inferred frame saw has not gone, however long ago that
        frame was (the motion gate infers a still scene every `--motion-keepalive` seconds: a parked car stays)."""
        return pts - obj.last_pts > self.max_lost and obj.last_pts < self._previous

    def update(self, tracked: Detections, pts: float, wall: float,
               born: dict[int, float] | None = None) -> list[ObjectEvent]:
        """The events of an inferred frame at `pts` (media seconds; `wall` its Unix time) whose boxes carry
        their ids (`tracked.tracker_id`, -1 for a box no track holds). `born`: for ids new at this frame,
        when their object was first seen (an earlier inferred frame, where it had no id yet)."""
        out: list[ObjectEvent] = []
        ids = tracked.tracker_id if tracked.tracker_id is not None else np.full(len(tracked), -1)
        for i in np.flatnonzero(np.asarray(ids) >= 0):
            tid, box, score = int(ids[i]), np.asarray(tracked.xyxy[i], np.float64), float(tracked.scores[i])
            obj = self._objects.get(tid)
            # `_gone` is checked twice: here, before `see` refreshes `last_pts`, for an id seen again after
            # too long (it starts a new object); and after the loop, for the objects this frame did not see
            if obj is not None and self._gone(obj, pts):
                out += self._end(self._objects.pop(tid), wall)
                obj = None
            if obj is None:
                first = (born or {}).get(tid, pts)
                obj = self._objects[tid] = _Object(tracker_id=tid, label=self._label(int(tracked.labels[i])),
                                                   first_pts=first, first_wall=wall - (pts - first), box=box,
                                                   score=score)
                obj.hits = int(first < pts)  # its first sighting, in an earlier frame
            obj.see(box, score, pts, wall)
            if obj.event_id is None and obj.hits >= self.min_hits and self._true(obj):
                obj.event_id = f"{obj.first_wall:.6f}-{''.join(secrets.choice(_ID_CHARS) for _ in range(6))}"
                out.append(self._event("new", obj, wall))
                self._sent(obj, pts)
            elif obj.event_id is not None and pts - obj.sent_pts >= self.update_interval and obj.changed():
                out.append(self._event("update", obj, wall))
                self._sent(obj, pts)
        for tid in [t for t, o in self._objects.items() if self._gone(o, pts)]:
            out += self._end(self._objects.pop(tid), wall)
        self._previous = pts
        return out

    def _true(self, obj: _Object) -> bool:
        """Whether the median of the object's last scores reaches its label's threshold (none: it does)."""
        threshold = self.thresholds.get(obj.label.lower())
        return threshold is None or statistics.median(obj.scores) >= threshold

    def _end(self, obj: _Object, wall: float) -> list[ObjectEvent]:
        if obj.event_id is None:  # never confirmed: no `new`, so no `end`
            return []
        total = self.totals.setdefault(obj.label, [0, 0.0])
        total[0] += 1
        total[1] += max(0.0, obj.last_pts - obj.first_pts)
        return [self._event("end", obj, wall)]

    def finish(self, wall: float) -> list[ObjectEvent]:
        """The input ended or the run stopped: an `end` for every object that had its `new`."""
        out = [e for obj in self._objects.values() for e in self._end(obj, wall)]
        self._objects.clear()
        return out

    def confirmed(self, ids: np.ndarray) -> np.ndarray:
        """`ids` with -1 in place of each object that has not had its `new` yet (fewer than `min_hits`)."""
        ok = [tid >= 0 and (o := self._objects.get(int(tid))) is not None and o.event_id is not None for tid in ids]
        return np.where(np.asarray(ok, bool), np.asarray(ids, np.int64), -1)

    def open_objects(self) -> list[tuple[str, float]]:
        """(label, dwell so far) of each object that had its `new` and has not ended."""
        return [(o.label, o.last_pts - o.first_pts) for o in self._objects.values() if o.event_id is not None]
