"""Every input at once into one model: a feeder thread per input prepares its frames, the calling
thread submits whatever is ready into the one request queue and delivers results in submission
order (so each input's frames stay in their order while inputs interleave). An input that ends or
fails does not stop the others; a failed request ends the inputs of its frames with the error and
the rest go on with a fresh request queue."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from zerocopy.decode.live import OpenAbandoned
from zerocopy.errors import InferenceError, InputError
from zerocopy.frames import PreparedFrame
from zerocopy.infer.queue import Result
from zerocopy.paths.base import FrameStream
from zerocopy.pipeline.events import Event, InputBegin, InputEnd, InputOutcome
from zerocopy.sources import redact, redact_text

if TYPE_CHECKING:
    from zerocopy.pipeline.core import Pipeline

_FRAME, _END, _ERROR = range(3)


def parallel_events(p: Pipeline, sources: list[str], max_frames: int | None) -> Iterator[Event]:
    outcomes = p.outcomes = [InputOutcome(redact(src)) for src in sources]  # shown: events, report, errors
    streams: dict[int, FrameStream] = {}
    feeders: list[_Feeder] = []
    try:
        streams.update(_open_all(p, sources))
        for i in sorted(set(range(len(sources))) - set(streams)):
            yield InputEnd(outcomes[i].source, outcomes[i], False, i)
        if not streams or p.stop_event.is_set():
            return
        lead = min(streams)
        scheduler = p.activate(streams[lead])
        frames = {i: iter(st) for i, st in streams.items()}
        # The trial runs on the first input that gives a frame: one that gives none must not let
        # the path commit untried (the inputs before it are then over; their feeders end at once).
        first = None
        for i in sorted(streams):
            try:
                first = next(frames[i], None)
            except InputError as e:  # that input is over (its feeder ends at once); the others go on
                outcomes[i].error = redact_text(str(e))
                continue
            if first is not None:
                lead = i
                break
        ready = p.trial(scheduler, first) if first is not None else []
        p.committed = p.committed or first is not None
        for i, st in streams.items():
            outcomes[i].started = outcomes[i].started or time.perf_counter()
            yield InputBegin(outcomes[i].source, st.rate, st.expected_frames, i)
        for r in ready:
            yield p.done(r, outcomes[lead], lead)
        merged: queue.Queue = queue.Queue()
        feeders = [_Feeder(i, streams[i], frames[i], merged, p.stop_event, max_frames, p.feeder_depth,
                           taken=1 if (i == lead and first is not None) else 0) for i in streams]
        yield from _Merge(p, feeders, merged).events()
    finally:
        for f in feeders:
            f.halt()
        for f in feeders:
            f.join()
        for i, st in streams.items():
            if not any(f.index == i for f in feeders):
                st.close()  # never handed to a feeder (a refusal before commit)
            outcomes[i].damage = st.damage_report()
            p.forget(st)
        if p.scheduler is not None:
            p.scheduler.wait_all()
            p.scheduler.discard()


def _open_all(p: Pipeline, sources: list[str]) -> dict[int, FrameStream]:
    """Every input opened at once, so that a source that does not answer delays none of the others
    (and a stop abandons every open still waiting). An input that cannot be opened ends with its
    error; a refusal of the path closes what did open and is raised."""
    streams: dict[int, FrameStream] = {}
    refusal: BaseException | None = None
    with ThreadPoolExecutor(max_workers=min(len(sources), 16), thread_name_prefix="zerocopy-open") as pool:
        for i, future in enumerate([pool.submit(p.open, source) for source in sources]):
            try:
                streams[i] = future.result()
            except InputError as e:
                p.outcomes[i].error = redact_text(str(e))
            except OpenAbandoned:  # stopped while it was being opened: interrupted, not a failure
                pass
            except BaseException as e:  # noqa: BLE001 - the path's refusal (or a bug): raised below
                refusal = refusal or e
    if refusal is not None:
        for stream in streams.values():
            stream.close()
            p.forget(stream)
        raise refusal
    return streams


class _Merge:
    """Frames from every feeder into the one scheduler as they come; results back out in order."""

    def __init__(self, p: Pipeline, feeders: list[_Feeder], merged: queue.Queue):
        self.p, self.outcomes, self.merged = p, p.outcomes, merged
        self.feeders = {f.index: f for f in feeders}
        self.owner: dict[int, int] = {}  # id(frame) → input, while its request is in flight
        self.outstanding = dict.fromkeys(self.feeders, 0)
        self.finished: set[int] = set()
        self.reported: set[int] = set()

    def events(self) -> Iterator[Event]:
        live = set(self.feeders)
        pending: list[PreparedFrame] = []
        batch = self.p.model.batch
        while live or pending:
            try:
                busy = pending or self.p.scheduler.in_flight  # results may be waiting to come out
                i, kind, value = self.merged.get(timeout=0.002 if busy else 0.05)
            except queue.Empty:
                if pending:  # nothing more right now: do not hold a partial batch back
                    yield from self._submit(pending)
                    pending = []
                yield from self._collect()
                continue
            if kind == _FRAME:
                self.feeders[i].taken_one()
                self.owner[id(value)] = i
                self.outstanding[i] += 1
                pending.append(value)
                if len(pending) == batch:
                    yield from self._submit(pending)
                    pending = []
            else:
                live.discard(i)
                self.finished.add(i)
                if kind == _ERROR:
                    error = str(value) if isinstance(value, InputError) else f"{self.outcomes[i].source}: {value}"
                    self.outcomes[i].error = redact_text(error)
            yield from self._collect()
        yield from self._collect(wait=True)
        self.finished |= set(self.feeders)
        yield from self._ends()

    def _collect(self, wait: bool = False) -> Iterator[Event]:
        try:
            yield from self._deliver(self.p.scheduler.results(wait=wait))
        except InferenceError:
            yield from self._recover()
        yield from self._ends()

    def _deliver(self, results: Iterator[Result]) -> Iterator[Event]:
        for r in results:
            i = self.owner.pop(id(r.frame))
            self.outstanding[i] -= 1
            yield self.p.done(r, self.outcomes[i], i)

    def _ends(self) -> Iterator[Event]:
        for i in sorted(self.finished - self.reported):
            if self.outstanding[i] == 0:
                self.reported.add(i)
                self.outcomes[i].damage = self.feeders[i].stream.damage_report()
                self.p.note_no_frame(self.outcomes[i])
                yield InputEnd(self.outcomes[i].source, self.outcomes[i], True, i)

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
        old.discard()  # fully drained: `owner` now holds only frames not yet submitted
        self.p.scheduler = None
        self.p.activate(next(iter(self.feeders.values())).stream)


class _Feeder:
    """Prepares one input's frames on a thread of its own, at most `depth` ahead of the scheduler, and
    hands them to the merged queue; then (also on a stop or an error) closes the input and says so.
    The input's stream is driven and closed by this thread only."""

    def __init__(self, index: int, stream: FrameStream, frames, merged: queue.Queue, stop: threading.Event,
                 max_frames: int | None, depth: int, taken: int = 0):
        self.index, self.stream, self._frames, self._merged = index, stream, frames, merged
        self._stop, self._max, self._taken = stop, max_frames, taken
        self._room = threading.Semaphore(depth)
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"zerocopy-input-{index}", daemon=True)
        self._thread.start()

    def _stopping(self) -> bool:
        return self._halt.is_set() or self._stop.is_set()

    def _run(self) -> None:
        kind, value = _END, None
        try:
            for frame in self._frames:
                if self._stopping() or (self._max is not None and self._taken >= self._max):
                    break
                while not self._room.acquire(timeout=0.05):
                    if self._halt.is_set():
                        return
                self._taken += 1
                self._merged.put((self.index, _FRAME, frame))
        except BaseException as e:  # handed to the consumer as this input's error
            kind, value = _ERROR, e
        finally:
            try:
                self.stream.close()
            finally:
                self._merged.put((self.index, kind, value))

    def taken_one(self) -> None:
        """The consumer took a frame: room for one more."""
        self._room.release()

    def halt(self) -> None:
        self._halt.set()

    def join(self) -> None:
        self._thread.join()
