"""Which frames are inferred with `--motion`: among those `--detect-fps` would take, the ones where something
may have happened.

A frame is inferred when `DetectRate` says it is due (every frame without `--detect-fps`) and at least one of:
motion was seen since the last inferred frame (this one included; below: which frames it is measured on); the
background is calibrating or the whole scene just changed (the detector cannot tell, so the model looks); `busy(t)`
says a tracked object of the input is moving; or it is the input's first frame. What is due at a time rather than
because of what moves — `keepalive` seconds of media time since the last inferred frame, or an unseen object's `end`
(`ends_due()`: it waits for an inferred frame) — is inferred on the first keyframe from then on, due or not (the
decode gate decodes keyframes anyway, so a quiet stream needs no catch-up for it; a keyframe is also the sharpest
picture), or on the first due frame `KEYFRAME_WAIT_S` later where no keyframe came; at once on a stream whose last
keyframe interval was longer than that (a file's default 10 s) or not seen yet, or whose frames do not say which are
keyframes. On a file (`settle`) the stages are asked once they have seen the last frame
inferred (`pipeline.delivered`), so every run infers the same frames. A frame not inferred says why: `"detect_fps"`
(not due) or `"motion"` (due, and the gate found no reason).

Motion is measured (the path's luma picture made, the detector run) on every frame that is due, and between them at
least every `MEASURE_EVERY_S` of media time; the frames in between carry the last measurement. What moved between
two measurements and is still there differs from the background at the next one; what came and went in less than
that is nothing a detector could find on the next due frame anyway. So at `--detect-fps 5` on a 30 fps camera the
stage runs on one frame in six (Frigate runs its motion detector at its detect fps too); with `--draw-motion`
(boxes drawn on every frame) on every frame.

After a gap in the timestamps (more than `GAP_S` ahead, or back: a reconnection, a loop, a seek; the decoder
carries timestamps on across a reconnection) or a live input that sent nothing for that long, the detector
calibrates again.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np

from zerocopy.analytics.geometry import Points
from zerocopy.config import RunConfig
from zerocopy.decode.base import GUESSED_RATE
from zerocopy.motion.detector import Motion, MotionDetector
from zerocopy.track.times import HALF_FRAME, frame_time, new_time_base

GAP_S = 3.0  # a jump of the timestamps (or of arrival) longer than this starts the background again
MEASURE_EVERY_S = 0.2  # between the frames that are due, motion is measured at least this often (media time)
KEYFRAME_WAIT_S = 5.0  # a keepalive or an end waits this long for a keyframe (cameras send one every 1-4 s)


class Luma(NamedTuple):
    """A decoded frame's small luma picture, and the frame's own size (where masks are placed)."""

    picture: np.ndarray  # uint8, full range (0 black … 255 white)
    width: int
    height: int


class Gated(NamedTuple):
    """The gate's verdict on one frame."""

    infer: bool
    motion: Motion
    skipped_by: str | None  # None (inferred), "detect_fps" (not due) or "motion" (due, nothing happening)


class Sampler(Protocol):
    """Which frames may be inferred (`paths.rate.DetectRate`)."""

    def take(self, index: int, pts: float | None) -> bool: ...


def never(t: float) -> bool:
    return False


def no_end() -> float:
    return math.inf


@dataclass(frozen=True, kw_only=True)
class MotionSpec:
    """An input's motion settings, with the path's way of making a frame's luma picture (`luma(frame)`),
    `busy(t)`: whether a tracked object of the input is moving at media time `t` (None: never), `ends_due()`: the
    media time from which an unseen object's `end` waits for an inferred frame (None: never), `settle(index)`: wait
    until the stages have seen frame `index` (a file's: `pipeline.delivered`; None: a live input, which does not
    wait), and whether the records carry the boxes
    of what moved (`boxes`: `--draw-motion`, drawn on every frame, so measured on every frame; `regions`: the
    detector run around them, on the frames motion is measured on anyway)."""

    luma: Callable[[Any], Luma]
    threshold: int = 25
    masks: tuple[Points, ...] = ()
    keepalive: float = 10.0
    busy: Callable[[float], bool] | None = None
    ends_due: Callable[[], float] | None = None
    settle: Callable[[int], None] | None = None
    boxes: bool = False
    regions: bool = False
    decode_gate: bool = False  # the decoder may leave frames undecoded while the gate wants none (`decode.gate`)

    @classmethod
    def of(cls, config: RunConfig, luma: Callable[[Any], Luma], busy: Callable[[float], bool] | None = None,
           every_picture: bool = False, settle: Callable[[int], None] | None = None,
           ends_due: Callable[[], float] | None = None) -> MotionSpec | None:
        """From an input's settings (`RunConfig`: `motion`, `motion_threshold`, `motion_mask`,
        `motion_keepalive`, `draw_motion`, `decode_gate`); None without `motion`. With `every_picture` (every frame's
        picture is wanted: drawn into --output) every frame is decoded."""
        if not config.motion:
            return None
        return cls(luma=luma, threshold=config.motion_threshold, keepalive=config.motion_keepalive, busy=busy,
                   settle=settle, ends_due=ends_due,
                   masks=tuple(m.points for m in config.motion_mask), boxes=config.draw_motion,
                   regions=config.regions and not config.tiles,
                   decode_gate=config.decode_gate == "auto" and not (every_picture or config.draw_motion))


class MotionGate:
    """One input's gate (see the module): `__call__(index, pts, picture, arrived)` → `Gated`, `picture` the decoded
    frame the spec's `luma` makes the luma picture of (only when motion is measured on it)."""

    def __init__(self, spec: MotionSpec, rate: float, due: Sampler | None = None):
        self.detector = MotionDetector(spec.threshold, spec.masks, boxes=spec.boxes or spec.regions)
        self.luma = spec.luma
        self.every_frame = spec.boxes  # boxes are drawn on every frame: measured on every frame
        self.due = due  # `paths.rate.DetectRate` with --detect-fps: which frames may be inferred at all
        self.rate = rate if rate and rate > 0 else GUESSED_RATE
        self._every = MEASURE_EVERY_S - HALF_FRAME / self.rate  # half a frame's slack: 6 frames at 30 fps are 0.2 s
        self.keepalive = spec.keepalive
        self._busy = spec.busy or never
        self._ends_due = spec.ends_due or no_end
        self.settle = spec.settle
        self._seen = False  # motion since the last inferred frame
        self._inferred: float | None = None  # the media time of the last inferred frame
        self._inferred_index = -1  # and its index
        self._key: float | None = None  # the media time of the last keyframe
        self._key_wait = 0.0  # how long a keepalive waits for a keyframe: KEYFRAME_WAIT_S if they come that often
        self._before = -1  # the index of the last frame inferred before the one judged last (what `busy` waits for)
        self._last: tuple[float, float | None] | None = None  # the last frame's media time and arrival
        self._measured: float | None = None  # the media time motion was last measured at
        self._motion: Motion | None = None  # what that measurement saw
        self.recalibrations = 0
        self.measured = 0  # frames motion was measured on

    def _gap(self, t: float, arrived: float | None) -> bool:
        if self._last is None:
            return False
        last_t, last_arrived = self._last
        waited = arrived - last_arrived if arrived is not None and last_arrived is not None else None
        return new_time_base(t, last_t, back_s=HALF_FRAME / self.rate, gap_s=GAP_S, waited=waited)

    def _measure(self, picture: Any, t: float) -> Motion:
        luma = self.luma(picture)
        self._motion = self.detector(luma.picture, t, (luma.width, luma.height))
        self._measured = t
        self.measured += 1
        self._seen = self._seen or self._motion.moving
        return self._motion

    def _went_on(self, t: float, arrived: float | None) -> None:
        """The next frame is at media time `t` (after a gap: the background again)."""
        if self._gap(t, arrived):
            self.detector.reset()
            self.recalibrations += 1
            self._inferred = self._measured = None
        self._last = (t, arrived)

    def passed(self, index: int, pts: float | None, arrived: float | None = None) -> Gated:
        """A frame the decoder left undecoded (`decode.gate`: nothing wanted it): not inferred, as the gate would
        have said on it ("motion" if due, else "detect_fps"), `--detect-fps`'s schedule kept, the last measurement
        carried."""
        self._went_on(frame_time(index, pts, self.rate), arrived)
        self._before = self._inferred_index
        due = self.due is None or self.due.take(index, pts)
        return Gated(False, self._motion or Motion(), "motion" if due else "detect_fps")

    def wants_frames(self) -> tuple[bool, float]:
        """Whether the frames after the last one judged should be decoded (the last measurement saw motion, or
        calibrated, or the whole scene changing; motion waits for its inference; `busy()`; a keepalive or an end that
        found no keyframe in `KEYFRAME_WAIT_S`), and the media time from which they will be whatever motion shows."""
        m = self._motion
        if m is None or m.moving or m.calibrating or m.whole_scene or self._seen or self._inferred is None \
                or self._last is None:
            return True, math.inf  # (asked nothing of the stages: a file's feeder waits on no result here)
        wanted_from = self._timed_from() + self._key_wait
        t = self._last[0]
        return t >= wanted_from or self.busy(t), wanted_from

    def _settled(self) -> None:
        """On a file, once the stages saw the last frame inferred before the one being judged (that one is not
        sent yet): what they say is then the same in every run."""
        if self.settle is not None and self._before >= 0:
            self.settle(self._before)

    def busy(self, t: float) -> bool:
        """`busy(t)` of the spec (`_settled` first)."""
        self._settled()
        return self._busy(t)

    def _timed_from(self) -> float:
        """The media time from which a frame is inferred without motion: the keepalive's, or an unseen object's
        `end`'s (`_settled` first)."""
        keepalive = self._inferred + self.keepalive if self._inferred is not None else -math.inf
        self._settled()
        return min(keepalive, self._ends_due())

    def _timed(self, t: float, key: bool | None) -> bool:
        """Whether the frame at media time `t` is inferred for the keepalive or an end (see the module)."""
        since = t - self._timed_from()
        return since >= 0 and (key is not False or since >= self._key_wait)

    def __call__(self, index: int, pts: float | None, picture: Any, arrived: float | None = None) -> Gated:
        t = frame_time(index, pts, self.rate)
        self._went_on(t, arrived)
        self._before = self._inferred_index
        due = self.due is None or self.due.take(index, pts)
        key = getattr(picture, "key_frame", None)  # PyAV's frames say; None: unknown (not a PyAV frame)
        if key:
            if self._key is not None:
                self._key_wait = KEYFRAME_WAIT_S if 0 < t - self._key <= KEYFRAME_WAIT_S else 0.0
            self._key = t
        if due or self.every_frame or self._measured is None or t - self._measured > self._every:
            motion = self._measure(picture, t)
        else:
            motion = self._motion
        if not due and not (key and self._inferred is not None and self._timed(t, key)):
            return Gated(False, motion, "detect_fps")
        if (self._seen or motion.calibrating or motion.whole_scene or self._inferred is None
                or self._timed(t, key) or self.busy(t)):
            self._seen, self._inferred, self._inferred_index = False, t, index
            return Gated(True, motion, None)
        return Gated(False, motion, "motion")
