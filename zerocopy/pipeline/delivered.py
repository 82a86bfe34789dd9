"""Which of each input's frames the stages have seen (`Delivered`), so that a file's motion gate decides as of the
frames before the one it judges, the same in every run.

The motion gate (`motion.gate`) asks the stages whether a tracked object moves or waits for its `end`
(`StageChain.busy`). A feeder prepares frames ahead of the results: what the stages know when it asks depends on how
far inference got, so two runs over one file could infer different frames (and a static object's last sighting,
an `end`'s time, would differ). On a file the gate first waits (`settle(index)`) until the stages have seen the last
frame it sent to inference; a live input does not wait (its frames come as they happen: latency comes first)."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

SETTLE_S = 10.0  # the longest a feeder waits for one frame's result (then it goes on as if it had come)


class Delivered:
    """The index of the last frame of each input the stages have seen (`mark`, the calling thread), and a wait for
    one (`settler(input, stop)`, a feeder's)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._last: dict[int, float] = {}

    def reset(self, input: int) -> None:
        """The input opens (again): its frames are counted from 0."""
        with self._cond:
            self._last[input] = -1
            self._cond.notify_all()

    def mark(self, input: int, index: int) -> None:
        with self._cond:
            if index > self._last.get(input, -1):
                self._last[input] = index
                self._cond.notify_all()

    def release(self, input: int) -> None:
        """The input's frames will not all be seen (it failed): no wait on them until it opens again."""
        with self._cond:
            self._last[input] = math.inf
            self._cond.notify_all()

    def settler(self, input: int, stop: threading.Event) -> Callable[[int], None]:
        """`settle(index)`: return once the stages have seen frame `index` of `input` (or `stop` is set, or
        `SETTLE_S` passed: then the frame counts as seen, so that it is not waited on again)."""

        def settle(index: int) -> None:
            deadline = time.monotonic() + SETTLE_S
            with self._cond:
                while self._last.get(input, -1) < index and not stop.is_set():
                    left = deadline - time.monotonic()
                    if left <= 0:
                        self._last[input] = index
                        return
                    self._cond.wait(min(0.05, left))

        return settle
