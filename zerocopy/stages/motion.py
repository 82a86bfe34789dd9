"""The motion stage (`--motion`): what the motion gate saw and did, per input, for the run report and `/metrics`,
and the gate's `busy`: whether a tracked object of an input is moving, or due to end.

It sees every frame (`on_skipped`), inferred or not, and reads `frame.motion` (the detector's `motion.Motion`; None
when the input runs without `--motion`). Counted per camera: frames, frames with motion, inferences the gate
skipped (`skipped_by == "motion"`), calibrations, whole-scene episodes and their seconds, and the seconds the
scene was *all motion* (motion on at least `ALL_MOTION_SHARE` of the last `ALL_MOTION_S` seconds: rain, wind in
trees, a flickering light: the gate then infers at `--detect-fps`, and this says so rather than staying quiet).

What `CAMERA/motion` says follows Frigate's rule, in media time: `ON` (not retained) when the gate sees motion and the
topic said `OFF` (or nothing yet), `OFF` (not retained) only once `--motion-off-delay` seconds (Frigate's
`motion.mqtt_off_delay`, 30 by default) passed without motion, or when the input ends. The figures
(`MotionState.measure`: `zerocopy_motion_active`, …) follow the gate's own reading, frame by frame.

`busy(input, t)` is what the gate asks before skipping a frame: True while a tracked object moved (its box's centre
moved more than `MOVED_SHARE` of the box's size since the position it was last seen moving from) in the last
`MOVING_S` seconds. `ends_due(input)`: from when an object unseen for more than `max_lost` seconds waits for the
inferred frame that makes its `end` (the gate infers the first keyframe from then on; it would otherwise leave it
open until the next keepalive). Both read numbers a frame leaves behind, so a feeder thread may call them while the
main thread runs the stage.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import ClassVar

import numpy as np

from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame
from zerocopy.stages.base import InputInfo, StageBase
from zerocopy.stages.figures import Family, Figures
from zerocopy.stages.records import RecordBase
from zerocopy.track.times import media_time, went_back

MOVED_SHARE = 0.1  # a tracked box's centre moving this share of its larger side: the object moves
MOVING_S = 1.0  # an object counts as moving for this long after it last moved that much
ALL_MOTION_S = 60.0  # the window (a time constant) over which a scene is judged all motion
ALL_MOTION_SHARE = 0.9  # motion on this share of that window: the scene is all motion
REFRESH_S = 1.0  # while its counts move and its state does not, a camera's `MotionState` is said this often (media)

ACTIVE = Family(kind="gauge", name="zerocopy_motion_active", help="1 while the motion gate sees motion")
ALL_MOTION = Family(kind="gauge", name="zerocopy_motion_all", help="1 while the scene has been all motion for a "
                    "minute (rain, wind in trees: the gate then infers at detect_fps)")
SKIPPED = Family(kind="counter", name="zerocopy_inferences_skipped", help="frames the motion gate left uninferred "
                 "(nothing moved) since the start")
WHOLE_SCENE = Family(kind="counter", name="zerocopy_motion_whole_scene", help="times the whole picture moved at "
                     "once (an IR switch, rain, a shaken camera) since the start")


@dataclass(frozen=True, kw_only=True)
class MotionState(RecordBase):
    """What the motion gate of `camera` sees now and has saved so far (a record, `stages.records`): said when motion
    starts or stops, a whole-scene episode begins or ends, the scene turns all motion or stops being so, or `on`
    changes, at most every `REFRESH_S` of media time while only its counts move, and once when its input ends.
    Published on `CAMERA/motion` (not retained) as Frigate's `ON`/`OFF` when `on` changed (`news`); its counts are
    the stage's own (`MotionCounts`, over the camera's openings)."""

    type: ClassVar[str] = "motion"
    retained: ClassVar[bool] = False

    camera: str
    active: bool  # the gate sees motion on this frame (the figures)
    on: bool  # what `CAMERA/motion` says: Frigate's rule, off only `motion_off_delay` after the last motion
    all_motion: bool
    whole_scene: bool
    inferences_skipped: int
    whole_scene_episodes: int
    frame_time: float
    news: bool = False  # `on` changed with it

    @property
    def topic(self) -> str | None:
        return f"{self.camera}/motion" if self.news else None

    def to_record(self) -> dict:
        return {"type": self.type, "camera": self.camera, "active": self.active, "on": self.on,
                "all_motion": self.all_motion,
                "whole_scene": self.whole_scene, "inferences_skipped": self.inferences_skipped,
                "whole_scene_episodes": self.whole_scene_episodes, "frame_time": round(self.frame_time, 3)}

    def to_mqtt(self, before: object = None) -> str:
        return "ON" if self.on else "OFF"

    def measure(self, figures: Figures) -> None:
        figures.set(ACTIVE, (), float(self.active))
        figures.set(ALL_MOTION, (), float(self.all_motion))
        figures.set(SKIPPED, (), self.inferences_skipped)
        figures.set(WHOLE_SCENE, (), self.whole_scene_episodes)


@dataclass(kw_only=True)
class MotionCounts:
    """One camera's sums (over its openings)."""

    frames: int = 0
    with_motion: int = 0
    inferences_skipped: int = 0  # frames due at --detect-fps that the gate left out
    calibrations: int = 0
    whole_scene_episodes: int = 0
    whole_scene_s: float = 0.0
    all_motion_s: float = 0.0
    skipped_ms: float = 0.0  # the preprocessing time of the frames not inferred: the motion stage's own cost
    not_inferred: int = 0

    def summary(self) -> dict:
        return {"frames": self.frames, "with_motion": self.with_motion, "inferences_skipped": self.inferences_skipped,
                "calibrations": self.calibrations,
                "whole_scene": {"episodes": self.whole_scene_episodes, "seconds": round(self.whole_scene_s, 1)},
                "all_motion_s": round(self.all_motion_s, 1),
                "ms_per_frame": round(self.skipped_ms / self.not_inferred, 3) if self.not_inferred else None}

    def __add__(self, other: MotionCounts) -> MotionCounts:
        mine, theirs = asdict(self), asdict(other)
        return MotionCounts(**{name: value + theirs[name] for name, value in mine.items()})


@dataclass(kw_only=True)
class AllMotion:
    """Whether a scene has been all motion (`ALL_MOTION_SHARE` of about the last `ALL_MOTION_S`), from its frames'
    motion and the time between them; shared by this stage (the run report) and serve (`/metrics`)."""

    recent: float = 0.0  # time with motion, exponentially averaged over ALL_MOTION_S (from 0: see `share`)
    watched: float = 0.0  # seconds of it seen

    def add(self, moving: bool, dt: float) -> None:
        """A frame with (or without) motion, `dt` seconds after the one before (clamped by the caller)."""
        if dt > 0:
            self.recent += (float(moving) - self.recent) * (1.0 - math.exp(-dt / ALL_MOTION_S))
            self.watched += dt

    @property
    def share(self) -> float:
        """The share of the recent time with motion: the average's weight so far divided out, so that it is right
        from the start."""
        weight = 1.0 - math.exp(-self.watched / ALL_MOTION_S)
        return self.recent / weight if weight > 0 else 0.0

    @property
    def all_motion(self) -> bool:
        return self.watched >= ALL_MOTION_S and self.share >= ALL_MOTION_SHARE


@dataclass(kw_only=True)
class _Live:
    """An open input's state: the last frame's time and flags, and its tracked objects."""

    counts: MotionCounts
    rate: float
    off_delay: float  # seconds without motion before `CAMERA/motion` says OFF
    t: float | None = None
    calibrating: bool = False
    whole: bool = False
    scene: AllMotion = field(default_factory=AllMotion)
    busy_until: float = -math.inf  # an object moved: busy until then
    end_due: float = math.inf  # an unseen object's `end` needs an inferred frame from then on
    anchors: dict[int, tuple[float, float]] = field(default_factory=dict)  # id → where it was last seen moving from
    moved: dict[int, float] = field(default_factory=dict)  # id → the media time it last moved
    last_seen: dict[int, float] = field(default_factory=dict)  # id → the media time it was last inferred at
    said: MotionState | None = None  # the last state said of it
    said_t: float = -math.inf  # and the media time it was said at
    on: bool = False  # what its `CAMERA/motion` says
    motion_t: float = -math.inf  # the media time the gate last saw motion


class MotionStage(StageBase):
    """See the module. `max_lost`: the run's (`RunConfig.max_lost`): after it, an unseen object ends; `off_delay`:
    the run's `motion_off_delay` (an input may have its own)."""

    name = "motion"
    on_skipped = True

    def __init__(self, max_lost: float = 2.0, off_delay: float = 30.0):
        self.max_lost, self.off_delay = max_lost, off_delay
        self._live: dict[int, _Live] = {}
        self._cameras: dict[int, str] = {}
        self._counts: dict[str, MotionCounts] = {}

    def begin(self, input: InputInfo) -> None:
        counts = self._counts.setdefault(input.camera, MotionCounts())
        self._cameras[input.index] = input.camera
        own = input.settings.motion_off_delay
        delay = self.off_delay if own is None else own
        self._live[input.index] = _Live(counts=counts, rate=input.rate, off_delay=delay)

    def __call__(self, frame: PreparedFrame, detections: Detections | None, input: int) -> \
            tuple[Detections | None, list]:
        live = self._live.get(input)
        if live is None or frame.motion is None:
            return detections, []
        t = media_time(frame, live.rate)
        if live.t is not None and went_back(t, live.t, live.rate):  # a restarted time base: the objects are new
            live.anchors.clear()
            live.moved.clear()
            live.last_seen.clear()
            live.busy_until, live.end_due = -math.inf, math.inf
            live.said_t = -math.inf  # (its counts are said again from the new time base on)
            live.motion_t = t if live.on else -math.inf  # (an ON's delay counts from the new time base)
        dt = min(1.0, max(0.0, t - live.t)) if live.t is not None else 0.0
        live.t = t
        self._count(live, frame, dt)
        if frame.inferred and detections is not None and detections.tracker_id is not None:
            self._objects(live, detections, t)
        return detections, self._state(input, live, bool(frame.motion.moving), t)

    def _state(self, input: int, live: _Live, moving: bool, t: float | None) -> list:
        """A `MotionState` if the camera's changed, or its counts moved `REFRESH_S` after the last said (t None:
        its input ended: always, with its topic OFF)."""
        c, last = live.counts, live.said
        news = self._topic(live, moving, t)
        all_motion = live.scene.all_motion
        if t is not None and not news and last is not None and \
                (moving, all_motion, live.whole) == (last.active, last.all_motion, last.whole_scene):
            counts_moved = (c.inferences_skipped, c.whole_scene_episodes) != \
                (last.inferences_skipped, last.whole_scene_episodes)
            if not counts_moved or t - live.said_t < REFRESH_S:
                return []  # (decided before a record is made: most frames say nothing)
        now = MotionState(camera=self._cameras[input], active=moving, on=live.on, all_motion=all_motion,
                          whole_scene=live.whole, inferences_skipped=c.inferences_skipped,
                          whole_scene_episodes=c.whole_scene_episodes, frame_time=time.time(), news=news)
        live.said, live.said_t = now, t if t is not None else live.said_t
        return [now]

    @staticmethod
    def _topic(live: _Live, moving: bool, t: float | None) -> bool:
        """Frigate's rule for `CAMERA/motion` (its `on`), at media time `t` (None: its input ended, OFF at once):
        whether what it says changed."""
        was = live.on
        if t is None:
            live.on = False
        elif moving:
            live.on, live.motion_t = True, t
        elif t - live.motion_t >= live.off_delay:
            live.on = False
        return live.on != was

    def _count(self, live: _Live, frame: PreparedFrame, dt: float) -> None:
        m, c = frame.motion, live.counts
        c.frames += 1
        c.with_motion += bool(m.moving)
        c.inferences_skipped += frame.skipped_by == "motion"
        if not frame.inferred:
            c.not_inferred += 1
            c.skipped_ms += frame.preprocess_ms
        c.calibrations += bool(m.calibrating and not live.calibrating)
        c.whole_scene_episodes += bool(m.whole_scene and not live.whole)
        c.whole_scene_s += dt if m.whole_scene else 0.0
        live.calibrating, live.whole = m.calibrating, m.whole_scene
        if dt > 0:
            live.scene.add(m.moving or m.whole_scene, dt)
            c.all_motion_s += dt if live.scene.all_motion else 0.0

    def _objects(self, live: _Live, detections: Detections, t: float) -> None:
        """An inferred frame's tracked boxes: which objects moved, which are gone."""
        ids = np.asarray(detections.tracker_id)
        boxes = np.asarray(detections.xyxy, np.float64)
        here = set()
        for i in np.flatnonzero(ids >= 0).tolist():
            key = int(ids[i])
            x1, y1, x2, y2 = boxes[i]
            centre = ((x1 + x2) / 2, (y1 + y2) / 2)
            anchor = live.anchors.get(key)
            if anchor is None or math.dist(anchor, centre) > MOVED_SHARE * max(x2 - x1, y2 - y1, 1.0):
                live.anchors[key], live.moved[key] = centre, t  # (a new object counts as moving)
            live.last_seen[key] = t
            here.add(key)
        for key in [k for k, seen in live.last_seen.items() if k not in here and t - seen > self.max_lost]:
            del live.last_seen[key]  # this inferred frame made its `end`
            live.anchors.pop(key, None)
            live.moved.pop(key, None)
        # only the objects on this frame move: one gone is not (its `end` is what is waited for)
        live.busy_until = max((live.moved[k] + MOVING_S for k in here), default=-math.inf)
        gone = [seen for k, seen in live.last_seen.items() if k not in here]
        live.end_due = min(gone) + self.max_lost if gone else math.inf

    def busy(self, input: int, t: float | None = None) -> bool:
        """Whether the gate of `input` should infer its frame at media time `t` (None: the last one seen): a
        tracked object of it moves."""
        live = self._live.get(input)
        if live is None or live.t is None:
            return False
        return (live.t if t is None else t) < live.busy_until

    def ends_due(self, input: int) -> float:
        """The media time from which an unseen object of `input` waits for an inferred frame to make its `end`."""
        live = self._live.get(input)
        return math.inf if live is None else math.nextafter(live.end_due, math.inf)  # (ends once past max_lost)

    def all_motion(self, input: int) -> bool:
        """Whether `input`'s scene is all motion now (see the module; a gauge)."""
        live = self._live.get(input)
        return live is not None and live.scene.all_motion

    def end(self, input: int) -> list:
        """Its input ended: its camera's last state (its final counts; OFF on its topic if it said ON), once it
        said one."""
        live = self._live.pop(input, None)
        if live is None or live.said is None:
            return []
        return self._state(input, live, False, None)

    def report(self) -> MotionStage | None:
        """Itself, once an input ran with `--motion` (a run without it has no `motion` section)."""
        return self if any(c.frames for c in self._counts.values()) else None

    def reset(self) -> None:
        """Count afresh (the bench after its warm-up); the open inputs' states go on."""
        for camera, counts in self._counts.items():
            fresh = MotionCounts()
            self._counts[camera] = fresh
            for live in self._live.values():
                if live.counts is counts:
                    live.counts = fresh

    def summary(self) -> dict:
        """The sums over every camera, and per camera (with whether its scene is all motion now)."""
        total = sum(self._counts.values(), MotionCounts())
        now = {self._cameras[i]: self.all_motion(i) for i in self._live}
        return {**total.summary(), "cameras": {camera: {**counts.summary(), "all_motion": now.get(camera, False)}
                                               for camera, counts in self._counts.items()}}
