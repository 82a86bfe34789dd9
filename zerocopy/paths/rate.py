"""Which frames are inferred at `--detect-fps`: N frames per second of each input's own media time."""

from __future__ import annotations

from zerocopy.decode.base import GUESSED_RATE
from zerocopy.track.times import HALF_FRAME, frame_time


class DetectRate:
    """Takes the first frame, then one frame every 1/`fps` seconds of media time (the frame's `pts`, or
    its index over the stream's `rate` when it has none).

    The schedule advances by whole periods, so 5 per second of a 30 fps input is exactly every 6th frame
    and a 25 fps input alternates 5- and 5-frame steps without drifting; a frame within half a frame
    interval of its due time counts as due (timestamps are rounded). After a gap in the timestamps (a
    reconnection, a seek) the schedule starts again from the frame after it.
    """

    def __init__(self, fps: float, rate: float):
        self.period = 1.0 / fps
        self.slack = HALF_FRAME / rate if rate and rate > 0 else 0.0
        self.rate = rate if rate and rate > 0 else GUESSED_RATE
        self._due: float | None = None

    def take(self, index: int, pts: float | None) -> bool:
        """Whether frame `index` (at `pts` seconds) is inferred."""
        t = frame_time(index, pts, self.rate)
        if self._due is not None and t < self._due - self.slack and t >= self._due - 2 * self.period:
            return False
        if self._due is None or t > self._due + self.period or t < self._due - 2 * self.period:
            self._due = t  # the first frame, or after a gap or a jump back: start again here
        self._due += self.period
        return True
