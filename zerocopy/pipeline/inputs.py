"""The one input loop, whether inputs run one after the other or all at once: each input is read by a feeder
thread (`parallel.py`); the calling thread submits whatever frame is ready into the one request queue and
delivers results in submission order, so each input's frames stay in their order while inputs interleave.

The only difference between the two is the `window`: how many inputs are under way at once. One after the other
is a window of one (the next input starts once the last one's end is said); all at once, a window of every input.
One loop, not two, because what an input's frames go through is the same either way (the first frame's trial
before commit, batching, the frames `--detect-fps` leaves out keeping their place, a failed request, the end said
once its frames are out, a stop draining what is in flight), and with one input under way at a time its events
come in the order one after the other always gave: `InputBegin`, its `FrameDone`s, its `InputEnd`, then the next.

An input starts as soon as it is open: one that does not answer delays none of the others. An input that ends
or fails does not stop the others; a failed request ends the inputs of its frames with the error and the rest
go on with a fresh request queue. With a `Reopen` policy, every input is under way at once and each one that
ends is opened again by its feeder (`parallel.Feeder`)."""

from __future__ import annotations

import queue
import time
from collections import deque
from collections.abc import Iterator

from zerocopy.errors import InferenceError, InputError
from zerocopy.frames import PreparedFrame
from zerocopy.infer.queue import Result
from zerocopy.paths.base import FrameStream
from zerocopy.pipeline.events import Event, InputEnd, InputOutcome
from zerocopy.pipeline.loop import RunLoop
from zerocopy.pipeline.parallel import ERROR, FRAME, GONE, OPEN, REFUSED, Feeder, Reopen, Said
from zerocopy.redaction import redact, redact_text


def input_events(p: RunLoop, sources: list[str], max_frames: int | None, *, window: int,
                 reopen: Reopen | None = None) -> Iterator[Event]:
    """`InputBegin`, `FrameDone`… and `InputEnd` per input, at most `window` inputs under way at once. A stop starts
    no further input: one that had not started is not in `p.outcomes`."""
    merge = _Merge(p, sources, max_frames, window, reopen)
    try:
        yield from merge.events()
    finally:
        p.abandon.set()  # opens still waiting on a source give up
        feeders = list(merge.feeders.values())
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

    def __init__(self, p: RunLoop, sources: list[str], max_frames: int | None, window: int,
                 reopen: Reopen | None):
        self.p, self.sources, self.max_frames, self.window, self.reopen = p, sources, max_frames, window, reopen
        p.outcomes = []  # each started input's, in the run's order; what is shown of it: events, report, errors
        self.outcomes = p.outcomes
        self.merged: queue.Queue = queue.Queue()
        self.waiting = deque(range(len(sources)))  # the inputs not started yet
        self.feeders: dict[int, Feeder] = {}
        self.live: set[int] = set()  # started, and their feeder not gone yet
        self.owner: dict[int, int] = {}  # id(frame) → input, while its request is in flight
        self.outstanding: dict[int, int] = {}
        self.finished: set[int] = set()
        self.reported: set[int] = set()
        self.lead: int | None = None  # the input whose first frame was the trial
        self.opening: dict[int, int] = {}  # the number of each input's current opening (its feeder's)
        self.ended: dict[int, FrameStream | None] = {}  # the stream of each input's last ended opening
        self.spare: FrameStream | None = None  # the last stream let go

    def _admit(self) -> None:
        """Start the next inputs while fewer than `window` are under way (an input is, until its feeder is gone
        and its end said); a stop starts none."""
        while self.waiting and not self.p.stop_event.is_set():
            if len(self.live | (set(self.feeders) - self.reported)) >= self.window:
                return
            i = self.waiting.popleft()
            self.outcomes.append(InputOutcome(source=redact(self.sources[i])))
            self.outstanding[i], self.opening[i] = 0, 0
            self.live.add(i)
            self.feeders[i] = Feeder(i, self.sources[i], self.p, self.merged, self.max_frames, self.reopen)

    def events(self) -> Iterator[Event]:
        pending: list[PreparedFrame] = []
        batch = self.p.model.batch
        while True:
            self._admit()
            if not (self.live or pending or (self.waiting and not self.p.stop_event.is_set())):
                break
            try:
                busy = pending or (self.p.scheduler is not None and self.p.scheduler.in_flight)
                said: Said = self.merged.get(timeout=0.002 if busy else 0.05)
            except queue.Empty:
                if pending:  # nothing more right now: do not hold a partial batch back
                    yield from self._submit(pending)
                    pending = []
                yield from self._collect()
                continue
            i, kind, frame = said.input, said.kind, said.frame
            if kind == OPEN:
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
            elif kind == GONE:
                self.live.discard(i)
                self._release(i)
            elif kind == FRAME:
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
                if kind == REFUSED and not self.p.committed:
                    raise e  # the path cannot take this input (e.g. its first frame on the GPU)
                if kind in (ERROR, REFUSED):
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
            self.outcomes[i].started = time.perf_counter()  # its rate counts from here: compiling is not its own
            first = [self.p.done(r, self.outcomes[i], i) for r in ready]  # region models too, before commit
        except InferenceError as e:
            self.outcomes[i].error = redact_text(f"{self.outcomes[i].source}: {e}")
            self.feeders[i].end_opening(self.opening[i])
            self.p.delivered.release(i)  # its frames before may never be seen: its feeder waits on none
            self.p.scheduler.discard()  # a queue that saw a failure is replaced
            self.p.drop_scheduler()
            return
        self.p.committed, self.lead = True, i
        yield from first

    def _collect(self, wait: bool = False) -> Iterator[Event]:
        if self.p.scheduler is not None:
            try:
                yield from self._deliver(self.p.scheduler.results(wait=wait))
            except InferenceError as e:  # (its frames' inputs end with it: their results are lost)
                yield from self._recover(e)
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
                self.p.delivered.release(i)
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
                self._release(i)

    def _release(self, i: int) -> None:
        """Let go of an input that is over (its end said, its feeder gone, not to be opened again): its stream and
        its feeder, so that a run of thousands of inputs one after the other holds only those under way. The last
        stream let go is kept, for a failed request's new queue (`_recover`)."""
        if i in self.reported and i not in self.live and self.reopen is None and i in self.feeders:
            feeder = self.feeders.pop(i)
            feeder.join()
            self.spare = self.ended.pop(i, None) or self.spare

    def _submit(self, frames: list[PreparedFrame]) -> Iterator[Event]:
        try:
            self.p.scheduler.submit(frames)
        except InferenceError:
            yield from self._recover()
            self.p.scheduler.submit(frames)

    def _recover(self, failed: InferenceError | None = None) -> Iterator[Event]:
        """A failed request (`failed`, when `results` raised it: its frames; else the queue says which when it is
        drained): its frames' inputs end with the error; the others go on, on a new queue."""
        old = self.p.scheduler
        if failed is not None:
            self._lost(failed)
        while True:
            try:
                yield from self._deliver(old.results(wait=True))
                break
            except InferenceError as e:
                self._lost(e)
        old.discard()  # fully drained: `owner` now holds only frames not yet submitted
        self.p.drop_scheduler()
        # an open input's stream, else (all between reopenings) the last ended one's: its context and bridge serve
        streams = [f.stream for f in self.feeders.values()] + list(self.ended.values()) + [self.spare]
        self.p.activate(next(s for s in streams if s is not None))

    def _lost(self, e: InferenceError) -> None:
        """The frames of a failed request (`e.frames`): their inputs end with its error."""
        for frame in e.frames:
            i = self.owner.pop(id(frame), None)
            if i is not None:
                self.outstanding[i] -= 1
                self.outcomes[i].error = self.outcomes[i].error or f"{self.outcomes[i].source}: {e}"
                self.feeders[i].end_opening(self.opening[i])
                self.p.delivered.release(i)
