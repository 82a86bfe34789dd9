"""A frame's times, and whether its input's time started again: one reading for every stage that counts in media
time (tracking, motion, lines and zones, snapshots), the motion gate, `--detect-fps` and the clip ring.

A *new time base* is a timestamp that went back (a looped file, a restarted stream, a seek) or jumped ahead, or an
input that sent nothing, for longer than its caller's gap (the decoder carries timestamps on across a reconnection,
so a live input's outage shows in its arrival times only). Each caller says how far back is too far and how long a
gap is, because each forgets something else: tracking its objects (`RunConfig.max_lost`), the motion gate its
background (`motion.gate.GAP_S`), the clip ring its segment (`record.ring.BACKWARDS_S`, `MAX_LEAP_S`).
"""

from __future__ import annotations

import time

from zerocopy.frames import PreparedFrame

HALF_FRAME = 0.5  # of a frame's period: timestamps are rounded, so this much off is slack (less back: no restart)


def frame_time(index: int, pts: float | None, rate: float) -> float:
    """A frame's time in its input, in seconds: its timestamp, or its index over the stream's frame rate (never 0:
    a decoder guesses `decode.base.GUESSED_RATE` when its container does not say)."""
    return pts if pts is not None else index / rate


def media_time(frame: PreparedFrame, rate: float) -> float:
    """`frame_time` of a prepared frame."""
    return frame_time(frame.index, frame.pts, rate)


def wall_time(frame: PreparedFrame) -> float:
    """The Unix time at which `frame` came out of its decoder (now, if the decoder did not say)."""
    now = time.time()
    return now - (time.perf_counter() - frame.arrived) if frame.arrived is not None else now


def went_back(t: float, last: float, rate: float) -> bool:
    """Whether media time `t` is before the previous frame's `last` by more than `HALF_FRAME` of a period at
    `rate`: the input's time started again."""
    return t < last - HALF_FRAME / rate


def new_time_base(t: float, last: float, *, back_s: float, gap_s: float, waited: float | None = None) -> bool:
    """Whether `t` is more than `back_s` before `last` or more than `gap_s` after it, or the input's frames came
    `waited` seconds apart (None: unknown) and that is more than `gap_s` (see the module)."""
    return t < last - back_s or t - last > gap_s or (waited is not None and waited > gap_s)
