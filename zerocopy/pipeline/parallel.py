"""Each input read on a thread of its own, its feeder: it opens the input, prepares its frames at most
`feeder_depth` ahead and hands them to the input loop (`inputs.py`) through one merged queue, so an input that
does not answer delays none of the others and a stop abandons an open still waiting. Every run reads its inputs
this way, all at once (`--parallel`, a service's cameras) or one at a time. With a `Reopen` policy (a service's
cameras), an input that ends for any reason but a stop is opened again after a back-off, by its own feeder: the
run, its compiled model and the other inputs go on meanwhile, and each opening is an `InputBegin` … `InputEnd` of
the same input."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

from zerocopy.decode.live import OpenAbandoned
from zerocopy.errors import InputError
from zerocopy.frames import PreparedFrame
from zerocopy.paths.base import FrameStream
from zerocopy.pipeline.loop import RunLoop

# what a feeder says: an opening began, a frame, the opening ended (on its own, with an error, refused by the
# path), the feeder is gone (no opening will follow)
OPEN, FRAME, END, ERROR, REFUSED, GONE = range(6)


@dataclass(frozen=True, kw_only=True)
class Said:
    """What a feeder says to the input loop, through the merged queue (`kind`: one of the above)."""

    input: int  # the feeder's input
    kind: int
    frame: PreparedFrame | None = None  # FRAME's
    stream: FrameStream | None = None  # OPEN's; an ending's: the opening's (its damage report), None if not opened
    opening: int = 0  # OPEN's: the opening's number
    error: BaseException | None = None  # ERROR's, REFUSED's


@dataclass(frozen=True)
class Reopen:
    """An input that ended (a network file's end, an error, a failed request) is opened again after `first`
    seconds, doubling up to `longest`; back to `first` after an opening that gave frames. Only a stop ends it."""

    first: float = 1.0
    longest: float = 30.0


class Feeder:
    """Opens one input and prepares its frames on a thread of its own, at most `feeder_depth` ahead of
    the scheduler, handing them to the merged queue; then (also on a stop or an error) closes the
    input and says so; with `reopen`, opens it again after a back-off, until a stop or `halt()`. The
    input's stream is driven and closed by this thread only."""

    def __init__(self, index: int, source: str, p: RunLoop, merged: queue.Queue, max_frames: int | None,
                 reopen: Reopen | None = None):
        self.index, self.source, self.p, self._merged, self._max = index, source, p, merged, max_frames
        self.reopen = reopen
        self.stream: FrameStream | None = None
        self.cut = False  # a stop ended its opening before its end (while it was opened, too)
        self.openings = 0  # its openings so far (the current one's number)
        self._taken = 0
        self._room = threading.Semaphore(p.feeder_depth)
        self._halt = threading.Event()
        self._end_opening = threading.Event()  # the consumer ended the current opening (its frames failed)
        self._openings_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=f"zerocopy-input-{index}", daemon=True)
        self._thread.start()

    def _stopping(self) -> bool:
        return self._halt.is_set() or self.p.stop_event.is_set()

    def _run(self) -> None:
        delays = None
        try:
            while True:
                with self._openings_lock:
                    self.openings += 1
                    self._end_opening.clear()
                self._merged.put(self._one_opening())
                if self.reopen is None or self._stopping():
                    return
                if self._taken or delays is None:  # frames flowed: back to the first delay
                    delays = _backoff(self.reopen)
                if self._wait(next(delays)):
                    return
        finally:
            self._merged.put(Said(input=self.index, kind=GONE))

    def _wait(self, seconds: float) -> bool:
        """Wait `seconds`; True when stopped or halted meanwhile."""
        deadline = time.monotonic() + seconds
        while not self._stopping():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._halt.wait(min(left, 0.05))
        return True

    def _one_opening(self) -> Said:
        """Open the input, hand its frames over until it ends; how it ended (`END`, `ERROR`, `REFUSED`)."""
        kind, error = END, None
        self.stream, self.cut, self._taken = None, False, 0
        try:
            try:
                self.stream = self.p.open(self.source, self.index)
            except InputError as e:
                return Said(input=self.index, kind=ERROR, error=e)
            except OpenAbandoned:  # stopped while it was being opened: interrupted, not a failure
                self.cut = True
                return Said(input=self.index, kind=END)
            except BaseException as e:  # the path's refusal of this input (or a bug): the consumer decides
                return Said(input=self.index, kind=REFUSED, error=e)
            self._merged.put(Said(input=self.index, kind=OPEN, stream=self.stream, opening=self.openings))
            for frame in self._read(iter(self.stream)):
                if self._ending() or (self._max is not None and self._taken >= self._max):
                    self.cut = self._stopping()
                    break
                while not self._room.acquire(timeout=0.05):
                    if self._ending():
                        self.cut = self._stopping()
                        return Said(input=self.index, kind=END, stream=self.stream)
                self._taken += 1
                self._merged.put(Said(input=self.index, kind=FRAME, frame=frame))
            else:
                self.cut = self._stopping()  # a stop interrupts the stream's reading: it ends early
        except BaseException as e:  # handed to the consumer as this opening's error
            kind, error = ERROR, e
        finally:
            if self.stream is not None:
                self.stream.close()
                self.p.forget(self.stream)
        return Said(input=self.index, kind=kind, error=error, stream=self.stream)

    def _read(self, frames: Iterator[PreparedFrame]) -> Iterator[PreparedFrame]:
        """The stream's frames: its first at once (it may be the path's trial), the next ones only once the run is
        committed to its path — frames read while the model compiles would come out together, late (a live or paced
        input's latency). Ends early when the feeder is ending."""
        for frame in frames:
            yield frame
            while not self.p.committed and not self._ending():
                self._halt.wait(0.01)

    def _ending(self) -> bool:
        return self._stopping() or self._end_opening.is_set()

    def taken_one(self) -> None:
        """The consumer took a frame: room for one more."""
        self._room.release()

    def end_opening(self, opening: int) -> None:
        """End its opening number `opening` (its frames failed): with `reopen` it is opened again later."""
        with self._openings_lock:
            if opening != self.openings:
                return
            self._end_opening.set()
            stream = self.stream
        if stream is not None:
            stream.interrupt()

    def halt(self) -> None:
        """End it: its frames stop, and a read waiting on a live source (or its reconnection) ends now."""
        self._halt.set()
        stream = self.stream
        if stream is not None:
            stream.interrupt()

    def join(self) -> None:
        self._thread.join()


def _backoff(policy: Reopen) -> Iterator[float]:
    delay = policy.first
    while True:
        yield delay
        delay = min(delay * 2, policy.longest)
