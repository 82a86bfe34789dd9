"""Every input at once into one model: a feeder thread per input opens it and prepares its frames, the
calling thread submits whatever is ready into the one request queue and delivers results in
submission order (so each input's frames stay in their order while inputs interleave). An input
starts as soon as it is open: one that does not answer delays none of the others. An input that ends
or fails does not stop the others; a failed request ends the inputs of its frames with the error and
the rest go on with a fresh request queue. With a `Reopen` policy (a service's cameras), an input that ends
for any reason but a stop is opened again after a back-off, by its own feeder: the run, its compiled model
and the other inputs go on meanwhile, and each opening is an `InputBegin` … `InputEnd` of the same input."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

from zerocopy.decode.live import OpenAbandoned
from zerocopy.errors import InferenceError, InputError
from zerocopy.frames import PreparedFrame
from zerocopy.infer.queue import Result
from zerocopy.paths.base import FrameStream
from zerocopy.pipeline.events import Event, InputEnd, InputOutcome
from zerocopy.pipeline.loop import RunLoop
from zerocopy.redaction import redact, redact_text

# what a feeder says: an opening began, a frame, the opening ended (on its own, with an error, refused by the
# path), the feeder is gone (no opening will follow)
_OPEN, _FRAME, _END, _ERROR, _REFUSED, _GONE = range(6)


@dataclass(frozen=True, kw_only=True)
class _Said:
    """What a feeder says to the merge, through the merged queue (`kind`: one of the above)."""

    input: int  # the feeder's input
    kind: int
    frame: PreparedFrame | None = None  # _FRAME's
    stream: FrameStream | None = None  # _OPEN's; an ending's: the opening's (its damage report), None if not opened
    opening: int = 0  # _OPEN's: the opening's number
    error: BaseException | None = None  # _ERROR's, _REFUSED's


@dataclass(frozen=True)
class Reopen:
    """An input that ended (a network file's end, an error, a failed request) is opened again after `first`
    seconds, doubling up to `longest`; back to `first` after an opening that gave frames. Only a stop ends it."""

    first: float = 1.0
    longest: float = 30.0


def parallel_events(p: RunLoop, sources: list[str], max_frames: int | None,
                    reopen: Reopen | None = None) -> Iterator[Event]:
    p.outcomes = [InputOutcome(source=redact(src)) for src in sources]  # shown: events, report, errors
    merged: queue.Queue = queue.Queue()
    feeders = [_Feeder(i, src, p, merged, max_frames, reopen) for i, src in enumerate(sources)]
    try:
        yield from _Merge(p, feeders, merged).events()
    finally:
        p.abandon.set()  # opens still waiting on a source give up
        for f in feeders:
            f.halt()
        for f in feeders:
            f.join()
        for f in feeders:
            if f.stream is not None:
                p.outcomes[f.index].damage = f.stream.damage_report()
                p.forget(f.stream)
        if p.scheduler is not None:
            p.scheduler.wait_all()
            p.scheduler.discard()


class _Merge:
    """Frames from every feeder into the one scheduler as they come; results back out in order. The
    first frame of any input is the path's trial (compile, bind, infer) before anything else goes in."""

    def __init__(self, p: RunLoop, feeders: list[_Feeder], merged: queue.Queue):
        self.p, self.outcomes, self.merged = p, p.outcomes, merged
        self.feeders = {f.index: f for f in feeders}
        self.owner: dict[int, int] = {}  # id(frame) → input, while its request is in flight
        self.outstanding = dict.fromkeys(self.feeders, 0)
        self.finished: set[int] = set()
        self.reported: set[int] = set()
        self.lead: int | None = None  # the input whose first frame was the trial
        self.opening = dict.fromkeys(self.feeders, 0)  # the number of each input's current opening (its feeder's)
        self.ended: dict[int, FrameStream | None] = {}  # the stream of each input's last ended opening

    def events(self) -> Iterator[Event]:
        live = set(self.feeders)
        pending: list[PreparedFrame] = []
        batch = self.p.model.batch
        while live or pending:
            try:
                busy = pending or (self.p.scheduler is not None and self.p.scheduler.in_flight)
                said: _Said = self.merged.get(timeout=0.002 if busy else 0.05)
            except queue.Empty:
                if pending:  # nothing more right now: do not hold a partial batch back
                    yield from self._submit(pending)
                    pending = []
                yield from self._collect()
                continue
            i, kind, frame = said.input, said.kind, said.frame
            if kind == _OPEN:
                if i in self.finished:  # opened again: its last opening's frames out and its end said first
                    if pending:
                        yield from self._submit(pending)
                        pending = []
                    yield from self._collect(wait=True)
                    self.finished.discard(i)
                    self.reported.discard(i)
                    self.outcomes[i] = InputOutcome(source=self.outcomes[i].source)
                self.opening[i] = said.opening  # (after the last opening's failures were said: they end that one)
                self.outcomes[i].started = time.perf_counter()
                yield self.p.begin(i, self.outcomes[i].source, said.stream)
            elif kind == _GONE:
                live.discard(i)
            elif kind == _FRAME:
                self.feeders[i].taken_one()
                if self.outcomes[i].error:  # its first frame failed the trial: the rest of it is dropped
                    continue
                if self.lead is None and not self.p.committed:
                    yield from self._trial(i, frame)
                    continue
                self.owner[id(frame)] = i
                self.outstanding[i] += 1
                if not frame.inferred:  # --detect-fps left it out: after its input's frames before it
                    if any(self.owner.get(id(f)) == i for f in pending):
                        yield from self._submit(pending)
                        pending = []
                    self.p.scheduler.pass_through(frame)
                    continue
                pending.append(frame)
                if len(pending) == batch:
                    yield from self._submit(pending)
                    pending = []
            else:
                self.ended[i] = said.stream  # (its damage report)
                self.finished.add(i)
                e = said.error
                if kind == _REFUSED and not self.p.committed:
                    raise e  # the path cannot take this input (e.g. its first frame on the GPU)
                if kind in (_ERROR, _REFUSED):
                    error = str(e) if isinstance(e, InputError) else f"{self.outcomes[i].source}: {e}"
                    self.outcomes[i].error = redact_text(error)
            yield from self._collect()
        yield from self._collect(wait=True)
        self.finished |= set(self.feeders)
        yield from self._ends()

    def _trial(self, i: int, frame: PreparedFrame) -> Iterator[Event]:
        """The path's trial on this frame. Where a failure is the input's (inference on the CPU: the
        pipeline raises it rather than refusing the path), that input ends with it and the next frame,
        of another input, is tried: inputs begin in the order they answer, so a bad one may come first."""
        stream = self.feeders[i].stream
        assert stream is not None
        try:
            ready = self.p.trial(self.p.activate(stream), frame)
            first = [self.p.done(r, self.outcomes[i], i) for r in ready]  # region models too, before commit
        except InferenceError as e:
            self.outcomes[i].error = redact_text(f"{self.outcomes[i].source}: {e}")
            self.feeders[i].end_opening(self.opening[i])
            self.p.scheduler.discard()  # a queue that saw a failure is replaced
            self.p.drop_scheduler()
            return
        self.p.committed, self.lead = True, i
        yield from first

    def _collect(self, wait: bool = False) -> Iterator[Event]:
        if self.p.scheduler is not None:
            try:
                yield from self._deliver(self.p.scheduler.results(wait=wait))
            except InferenceError:
                yield from self._recover()
        yield from self._ends()

    def _deliver(self, results: Iterator[Result]) -> Iterator[Event]:
        for r in results:
            i = self.owner.pop(id(r.frame))
            self.outstanding[i] -= 1
            if self.outcomes[i].error:  # it failed already (its region models): the rest of it is dropped
                continue
            try:
                done = self.p.done(r, self.outcomes[i], i)
            except InferenceError as e:  # its region models failed on this frame: that input ends with it
                self.outcomes[i].error = redact_text(f"{self.outcomes[i].source}: {e}")
                self.feeders[i].end_opening(self.opening[i])
                continue
            yield done

    def _ends(self) -> Iterator[Event]:
        for i in sorted(self.finished - self.reported):
            if self.outstanding[i] == 0:
                self.reported.add(i)
                stream = self.ended.get(i)
                if stream is not None:
                    self.outcomes[i].damage = stream.damage_report()
                self.outcomes[i].interrupted = self.feeders[i].cut and not self.outcomes[i].error
                self.p.note_no_frame(self.outcomes[i])
                yield InputEnd(source=self.outcomes[i].source, outcome=self.outcomes[i], began=stream is not None,
                               input=i, events=self.p.end_input(i))

    def _submit(self, frames: list[PreparedFrame]) -> Iterator[Event]:
        try:
            self.p.scheduler.submit(frames)
        except InferenceError:
            yield from self._recover()
            self.p.scheduler.submit(frames)

    def _recover(self) -> Iterator[Event]:
        """A failed request: its frames' inputs end with the error; the others go on, on a new queue."""
        old = self.p.scheduler
        while True:
            try:
                yield from self._deliver(old.results(wait=True))
                break
            except InferenceError as e:
                for frame in e.frames:
                    i = self.owner.pop(id(frame), None)
                    if i is not None:
                        self.outstanding[i] -= 1
                        self.outcomes[i].error = self.outcomes[i].error or f"{self.outcomes[i].source}: {e}"
                        self.feeders[i].end_opening(self.opening[i])
        old.discard()  # fully drained: `owner` now holds only frames not yet submitted
        self.p.drop_scheduler()
        # an open input's stream, else (all between reopenings) the last ended one's: its context and bridge serve
        streams = [f.stream for f in self.feeders.values()] + list(self.ended.values())
        self.p.activate(next(s for s in streams if s is not None))


class _Feeder:
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
            self._merged.put(_Said(input=self.index, kind=_GONE))

    def _wait(self, seconds: float) -> bool:
        """Wait `seconds`; True when stopped or halted meanwhile."""
        deadline = time.monotonic() + seconds
        while not self._stopping():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._halt.wait(min(left, 0.05))
        return True

    def _one_opening(self) -> _Said:
        """Open the input, hand its frames over until it ends; how it ended (`_END`, `_ERROR`, `_REFUSED`)."""
        kind, error = _END, None
        self.stream, self.cut, self._taken = None, False, 0
        try:
            try:
                self.stream = self.p.open(self.source, self.index)
            except InputError as e:
                return _Said(input=self.index, kind=_ERROR, error=e)
            except OpenAbandoned:  # stopped while it was being opened: interrupted, not a failure
                self.cut = True
                return _Said(input=self.index, kind=_END)
            except BaseException as e:  # the path's refusal of this input (or a bug): the consumer decides
                return _Said(input=self.index, kind=_REFUSED, error=e)
            self._merged.put(_Said(input=self.index, kind=_OPEN, stream=self.stream, opening=self.openings))
            for frame in self.stream:
                if self._ending() or (self._max is not None and self._taken >= self._max):
                    self.cut = self._stopping()
                    break
                while not self._room.acquire(timeout=0.05):
                    if self._ending():
                        self.cut = self._stopping()
                        return _Said(input=self.index, kind=_END, stream=self.stream)
                self._taken += 1
                self._merged.put(_Said(input=self.index, kind=_FRAME, frame=frame))
            else:
                self.cut = self._stopping()  # a stop interrupts the stream's reading: it ends early
        except BaseException as e:  # handed to the consumer as this opening's error
            kind, error = _ERROR, e
        finally:
            if self.stream is not None:
                self.stream.close()
                self.p.forget(self.stream)
        return _Said(input=self.index, kind=kind, error=error, stream=self.stream)

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
