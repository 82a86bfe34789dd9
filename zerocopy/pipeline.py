"""The run loop shared by every path: prepare a frame, submit it, collect what finished, hand it on.

`Pipeline.events()` is a generator: the caller's loop drives it (pull-based), and closing it early
releases everything. The calling thread prepares, submits and delivers; the software path's decoder
runs ahead on its own thread and OpenVINO infers on its own, so decoding, preparing and inferring
overlap. Results come out in frame order. `stop()` (what the CLI's Ctrl-C does) stops reading and
lets the requests in flight finish, so whatever the caller wrote stays valid.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from zerocopy.bridge.layout import LayoutError
from zerocopy.budget import decode_threads as cpu_decode_threads
from zerocopy.decode.damage import DamageReport
from zerocopy.decode.live import LivePolicy
from zerocopy.decode.vaapi import VASession
from zerocopy.detections import Detections
from zerocopy.errors import InferenceError, InputError, ModelError, PathUnavailable, ZeroCopyError, openvino_reason
from zerocopy.frames import PreparedFrame
from zerocopy.infer.model import WrappedModel
from zerocopy.infer.queue import InferenceScheduler, Result
from zerocopy.paths import FrameStream, Front, OpenRequest
from zerocopy.sinks import Sink
from zerocopy.stats import RunClock, StageTimes

FIRST_INFERENCE_TIMEOUT_S = 60.0  # a GPU that never completes the first request is refused, not waited on
# What binding a frame to a request may raise when the GPU, its driver or the bridge cannot cope
# (create_tensor_nv12 / set_tensor raise RuntimeError or TypeError; the bridge its own errors).
_BIND_ERRORS = (RuntimeError, TypeError, ValueError, LayoutError, ZeroCopyError)


@dataclass
class InputOutcome:
    source: str
    frames: int = 0
    error: str | None = None
    damage: DamageReport = field(default_factory=DamageReport)
    started: float | None = None  # perf_counter when it began, and at its last result
    ended: float | None = None

    @property
    def fps(self) -> float:
        span = (self.ended or 0.0) - (self.started or 0.0)
        return round(self.frames / span, 2) if self.frames and span > 0 else 0.0


@dataclass(frozen=True)
class InputBegin:
    source: str
    rate: float
    expected_frames: int | None
    input: int = 0  # the input's place in the run's list


@dataclass(frozen=True)
class FrameDone:
    source: str
    frame: PreparedFrame
    detections: Detections
    input: int = 0


@dataclass(frozen=True)
class InputEnd:
    """Every input ends with one, `began` or not (an input that could not be opened did not)."""

    source: str
    outcome: InputOutcome
    began: bool = True
    input: int = 0


Event = InputBegin | FrameDone | InputEnd


@dataclass
class RunResult:
    inputs: list[InputOutcome]
    stages: StageTimes
    clock: RunClock
    detections: int = 0
    interrupted: bool = False
    setup_s: float = 0.0  # opening the first input and compiling the model, not in the clock
    sink_s: float = 0.0  # wall time spent in the sinks (the annotated MP4's encoder, mostly), in the clock
    latency_ms: list[float] = field(default_factory=list)  # arrival → result, for live or paced inputs

    @property
    def frames(self) -> int:
        return sum(i.frames for i in self.inputs)


class Pipeline:
    """Runs inputs through one path.

    The model is compiled when the first input is open, because the zero-copy path's compile target
    (a VA remote context) comes from that input's first frame. The path is *committed* only once the
    first frame went through preparation, binding and inference: until then no event leaves, and a
    failure on a GPU path or a GPU device raises `PathUnavailable`, so `auto` can go on to the next
    path with the reason.
    """

    def __init__(self, model: WrappedModel, front: Front, device: str, nireq: int | None, threshold: float,
                 sinks: Sequence[Sink] = (), keep_pictures: bool = False, va_device: str | None = None,
                 progress: Callable[[str, int | None, int], object] | None = None, config: dict | None = None,
                 decode_threads: int | None = None, realtime: bool = False, reconnect: bool = False,
                 live: LivePolicy | None = None):
        self.model, self.front, self.device, self.threshold = model, front, device, threshold
        self.realtime, self.reconnect, self.live = realtime, reconnect, live
        self._streams: set[FrameStream] = set()  # open now: stop() interrupts their reading
        self.requested_nireq = nireq
        self.sinks = list(sinks)  # for `run()`; `events()` leaves the output to its caller
        self.keep_pictures, self.va_device = keep_pictures, va_device
        self.requested_decode_threads = decode_threads
        self.inputs = 1  # inputs decoded at once: they share the cores
        self.progress = progress
        self.config = config  # OpenVINO properties over the defaults
        self.stages = StageTimes()
        self.detections = 0
        self.stop_event = threading.Event()
        self.scheduler: InferenceScheduler | None = None
        self.nireq = 0
        self.committed = False
        self.va = VASession(va_device)  # one VA device (and remote context) for all of a run's inputs
        self._context = None
        self._compiled_for = 0  # the inputs at once it was compiled for (its inference threads)
        self.clock: RunClock | None = None
        self.setup_s = 0.0
        self.outcomes: list[InputOutcome] = []
        self.interrupted = False
        self.latency_ms: list[float] = []

    def stop(self) -> None:
        """Stop reading; the frames in flight still come out. Safe from any thread or a signal handler."""
        self.stop_event.set()
        for stream in list(self._streams):  # a live source waiting for data or for a reconnection
            interrupt = getattr(stream, "interrupt", None)
            if interrupt is not None:
                interrupt()

    @property
    def decode_threads(self) -> int:
        """FFmpeg's threads for each input, if the path decodes on the CPU."""
        return cpu_decode_threads(self.requested_decode_threads, self.device, self.inputs)

    @property
    def planned_nireq(self) -> int:
        return self.requested_nireq or self.front.nireq_cap or 2

    @property
    def _refusable(self) -> bool:
        """Whether a failure before commit means 'this path cannot run here' rather than a user error:
        on the VA paths and on a GPU it is the machine's; on the CPU it is the model's or the input's."""
        return self.front.name in ("zero-copy", "copy") or self.device.split(".")[0] == "GPU"

    def _refuse(self, stage: str, e: BaseException) -> PathUnavailable:
        """`stage` names what failed ("" when the message says it already)."""
        why = openvino_reason(e) if isinstance(e, RuntimeError) else str(e)
        return PathUnavailable({self.front.name: f"{stage}: {why}" if stage else why})

    def _open(self, source: str) -> FrameStream:
        batch = self.model.batch
        req = OpenRequest(self.model.input_names, self.model.width, self.model.height, self.model.spec.resize,
                          self.keep_pictures, batch=batch,
                          va=self.va, core=self.model.core, decode_threads=self.decode_threads,
                          realtime=self.realtime,
                          live=dataclasses.replace(self.live or LivePolicy(), reconnect=self.reconnect))
        stream = self.front.open(source, req)
        self._streams.add(stream)
        if self.stop_event.is_set():  # stopped while it was opening
            self.stop()
        return stream

    def _activate(self, stream: FrameStream) -> InferenceScheduler:
        """Compile (again, if the remote context changed) and make the scheduler (again, after a
        failed request: OpenVINO's queue rethrows a failure from then on)."""
        context = getattr(stream, "context", None)
        if self.model.compiled is None or context is not self._context or self._compiled_for != self.inputs:
            try:
                self.model.compile(self.device, context, self.config, self.inputs)
            except ModelError as e:
                if not self.committed and self._refusable:
                    raise self._refuse("", e) from None
                raise
            self._context, self._compiled_for = context, self.inputs
            self.scheduler = None
            n = self.requested_nireq or self.model.optimal_nireq
            if self.front.nireq_cap and not self.requested_nireq:
                n = min(n, self.front.nireq_cap)
            self.nireq = n
            if self.clock is not None and not self.setup_s:
                self.setup_s = self.clock.restart()
        if self.scheduler is None:
            self.scheduler = InferenceScheduler(self.model, self.front.handoff(self.model, stream), self.nireq)
        return self.scheduler

    def _trial(self, scheduler: InferenceScheduler, first: PreparedFrame) -> list[Result]:
        """The first frame through bind and inference, before anything leaves."""
        try:
            scheduler.submit([first])
        except _BIND_ERRORS as e:
            if self._refusable:
                raise self._refuse(f"binding the first frame on {self.device} failed", e) from None
            raise
        try:
            return list(scheduler.results(wait=True, timeout=FIRST_INFERENCE_TIMEOUT_S))
        except InferenceError as e:
            if self._refusable:
                raise self._refuse(f"first frame on {self.device}", e) from None
            raise

    def _note_no_frame(self, outcome: InputOutcome) -> None:
        """An input that ended without a frame, an error of its own or a stop: say so (and where
        reading stopped early, why)."""
        if not outcome.frames and not outcome.error and not self.stop_event.is_set():
            stopped = outcome.damage.stopped_early
            outcome.error = f"{outcome.source}: no frame could be decoded" + (f" ({stopped})" if stopped else "")

    def _done(self, source: str, r: Result, outcome: InputOutcome, input: int = 0) -> FrameDone:
        t0 = time.perf_counter()
        dets = self.model.decoder.decode(r.outputs, r.frame.geometry, self.threshold)
        now = time.perf_counter()
        self.stages.add(r.frame.decode_ms, r.frame.preprocess_ms, r.inference_ms, (now - t0) * 1e3)
        self.detections += len(dets)
        if r.frame.arrived is not None:  # a live or paced input: from its arrival to its result
            self.latency_ms.append((now - r.frame.arrived) * 1e3)
        outcome.frames += 1
        outcome.ended = now
        return FrameDone(source, r.frame, dets, input)

    def events(self, sources: Sequence[str], max_frames: int | None = None,
               parallel: bool = False) -> Iterator[Event]:
        """`InputBegin`, `FrameDone`… and `InputEnd` per source. A path that cannot handle the inputs
        raises `PathUnavailable` before the first event; an input it cannot handle after that ends with
        its error in `InputEnd.outcome.error`. `result()` sums the run up once it is over.

        One input after the other; or, `parallel`, all at once, each decoded on a thread of its own and
        all feeding the one compiled model and request queue: events of different inputs interleave,
        each input's frames in their order, and one input ending or failing does not stop the others.
        """
        self.clock = RunClock()
        self.outcomes = []
        self.inputs = len(sources) if parallel else 1
        if parallel and len(sources) > 1:
            try:
                yield from self._parallel_events([str(s) for s in sources], max_frames)
            except KeyboardInterrupt:
                self.interrupted = True
            finally:
                self.close()
                self.clock.stop()
            return
        try:
            for index, source in enumerate(sources):
                if self.stop_event.is_set():
                    break
                outcome = InputOutcome(str(source))
                self.outcomes.append(outcome)
                begun = False
                try:
                    for event in self._input_events(str(source), outcome, max_frames, index):
                        begun = begun or isinstance(event, InputBegin)
                        yield event
                except InputError as e:
                    outcome.error = str(e)
                except (InferenceError, PathUnavailable) as e:
                    if not self.committed:
                        raise
                    outcome.error = f"{source}: {e}"
                self._note_no_frame(outcome)
                yield InputEnd(str(source), outcome, begun, index)
        except KeyboardInterrupt:  # e.g. a second Ctrl-C: what was delivered stays delivered
            self.interrupted = True
        finally:
            self.close()
            self.clock.stop()

    def _input_events(self, source: str, outcome: InputOutcome, max_frames: int | None,
                      index: int = 0) -> Iterator[Event]:
        stream = self._open(source)
        scheduler: InferenceScheduler | None = None
        try:
            scheduler = self._activate(stream)
            frames = iter(stream)
            ready: list[Result] = []
            taken = 0
            if not self.committed:
                first = next(frames, None)
                if first is not None:
                    ready = self._trial(scheduler, first)
                    taken = 1
                    self.committed = True
            outcome.started = time.perf_counter()
            yield InputBegin(source, stream.rate, stream.expected_frames, index)
            for r in ready:
                yield self._done(source, r, outcome, index)
            batch = self.model.batch
            pending: list[PreparedFrame] = []
            for n, item in enumerate(frames, start=taken):
                if self.stop_event.is_set() or (max_frames is not None and n >= max_frames):
                    break
                pending.append(item)
                if len(pending) == batch:
                    scheduler.submit(pending)
                    pending = []
                # A live input's next frame is not there yet: deliver what is in flight when it is done,
                # not when that frame comes (a source's frame interval later).
                idle = not pending and getattr(stream, "live", False) and not stream.frame_ready()
                for r in scheduler.results(wait=idle):
                    yield self._done(source, r, outcome, index)
            if pending and not self.stop_event.is_set():
                scheduler.submit(pending)
            for r in scheduler.results(wait=True):  # what is in flight: stopping keeps it
                yield self._done(source, r, outcome, index)
        finally:
            try:
                if scheduler is not None:
                    scheduler.wait_all()  # after an error or an early close: let OpenVINO finish
            finally:
                if scheduler is not None:
                    scheduler.discard()  # results nobody will take (the input ended early)
                    if scheduler.failed:
                        self.scheduler = None
                stream.close()
                self._streams.discard(stream)
                outcome.damage = stream.damage_report()

    def _parallel_events(self, sources: list[str], max_frames: int | None) -> Iterator[Event]:
        outcomes = self.outcomes = [InputOutcome(src) for src in sources]
        streams: dict[int, FrameStream] = {}
        feeders: list[_Feeder] = []
        scheduler: InferenceScheduler | None = None
        try:
            for i, source in enumerate(sources):  # opening is quick; decoding starts on the feeders
                try:
                    streams[i] = self._open(source)
                except InputError as e:
                    outcomes[i].error = str(e)
            for i in sorted(set(range(len(sources))) - set(streams)):
                yield InputEnd(sources[i], outcomes[i], False, i)
            if not streams:
                return
            lead = min(streams)
            scheduler = self._activate(streams[lead])
            frames = {i: iter(st) for i, st in streams.items()}
            # The trial runs on the first input that gives a frame: one that gives none must not let
            # the path commit untried (the inputs before it are then over; their feeders end at once).
            first = None
            for i in sorted(streams):
                try:
                    first = next(frames[i], None)
                except InputError as e:  # that input is over (its feeder ends at once); the others go on
                    outcomes[i].error = str(e)
                    continue
                if first is not None:
                    lead = i
                    break
            ready = self._trial(scheduler, first) if first is not None else []
            self.committed = self.committed or first is not None
            for i, st in streams.items():
                outcomes[i].started = outcomes[i].started or time.perf_counter()
                yield InputBegin(sources[i], st.rate, st.expected_frames, i)
            for r in ready:
                yield self._done(sources[lead], r, outcomes[lead], lead)
            merged: queue.Queue = queue.Queue()
            feeders = [_Feeder(i, streams[i], frames[i], merged, self.stop_event, max_frames,
                               taken=1 if (i == lead and first is not None) else 0) for i in streams]
            yield from self._merge(sources, outcomes, feeders, merged)
        finally:
            for f in feeders:
                f.halt()
            for f in feeders:
                f.join()
            for i, st in streams.items():
                if not any(f.index == i for f in feeders):
                    st.close()  # never handed to a feeder (a refusal before commit)
                outcomes[i].damage = st.damage_report()
                self._streams.discard(st)
            if self.scheduler is not None:
                self.scheduler.wait_all()
                self.scheduler.discard()

    def _merge(self, sources, outcomes, feeders: list[_Feeder], merged: queue.Queue) -> Iterator[Event]:
        """Frames from every feeder into the one scheduler as they come; results back out in order."""
        by_input = {f.index: f for f in feeders}
        owner: dict[int, int] = {}  # id(frame) → input, while its request is in flight
        outstanding = dict.fromkeys((f.index for f in feeders), 0)
        live, finished, reported = {f.index for f in feeders}, set(), set()
        pending: list[PreparedFrame] = []
        batch = self.model.batch

        def deliver(results) -> Iterator[Event]:
            for r in results:
                i = owner.pop(id(r.frame))
                outstanding[i] -= 1
                yield self._done(sources[i], r, outcomes[i], i)

        def ends() -> Iterator[Event]:
            for i in sorted(finished - reported):
                if outstanding[i] == 0:
                    reported.add(i)
                    outcomes[i].damage = by_input[i].stream.damage_report()
                    self._note_no_frame(outcomes[i])
                    yield InputEnd(sources[i], outcomes[i], True, i)

        def submit(frames: list[PreparedFrame]) -> Iterator[Event]:
            try:
                self.scheduler.submit(frames)
            except InferenceError:
                yield from recover()
                self.scheduler.submit(frames)

        def recover() -> Iterator[Event]:
            """A failed request: its frames' inputs end with the error; the others go on, on a new queue."""
            old = self.scheduler
            while True:
                try:
                    yield from deliver(old.results(wait=True))
                    break
                except InferenceError as e:
                    for frame in getattr(e, "frames", []):
                        i = owner.pop(id(frame), None)
                        if i is not None:
                            outstanding[i] -= 1
                            outcomes[i].error = outcomes[i].error or f"{sources[i]}: {e}"
            old.discard()  # fully drained: `owner` now holds only frames not yet submitted
            self.scheduler = None
            self._activate(feeders[0].stream)

        while live or pending:
            try:
                busy = pending or self.scheduler.in_flight  # results may be waiting to come out
                i, kind, value = merged.get(timeout=0.002 if busy else 0.05)
            except queue.Empty:
                if pending:  # nothing more right now: do not hold a partial batch back
                    yield from submit(pending)
                    pending = []
                try:
                    yield from deliver(self.scheduler.results())
                except InferenceError:
                    yield from recover()
                yield from ends()
                continue
            if kind == _FRAME:
                by_input[i].taken_one()
                owner[id(value)] = i
                outstanding[i] += 1
                pending.append(value)
                if len(pending) == batch:
                    yield from submit(pending)
                    pending = []
            else:
                live.discard(i)
                finished.add(i)
                if kind == _ERROR:
                    outcomes[i].error = f"{sources[i]}: {value}" if not isinstance(value, InputError) else str(value)
            try:
                yield from deliver(self.scheduler.results())
            except InferenceError:
                yield from recover()
            yield from ends()
        try:
            yield from deliver(self.scheduler.results(wait=True))
        except InferenceError:
            yield from recover()
        finished |= {f.index for f in feeders}
        yield from ends()

    def close(self) -> None:
        """Release the requests and the compiled model, then the VA device they may use (idempotent)."""
        self.scheduler = None
        self._context = None
        self.model.release()
        self.va.close()

    def result(self, sink_s: float = 0.0) -> RunResult:
        interrupted = self.interrupted or self.stop_event.is_set()
        return RunResult(list(self.outcomes), self.stages, self.clock or RunClock(), self.detections, interrupted,
                         self.setup_s, sink_s, list(self.latency_ms))

    def run(self, sources: Sequence[str], max_frames: int | None = None) -> RunResult:
        """Every event into `self.sinks` (begin, write, end); the sinks stay open for their owner."""
        sink_s = feed(self.events(sources, max_frames), self.sinks, self.progress)
        return self.result(sink_s)


def feed(events: Iterator[Event], sinks: Sequence[Sink], progress=None) -> float:
    """Write events into sinks, with a progress bar per input while it runs (`progress(source,
    expected_frames, position)` makes one; inputs run at once get one each); returns the seconds
    the sinks took."""
    spent = 0.0
    bars: dict[int, Any] = {}
    try:
        for event in events:
            t0 = time.perf_counter()
            if isinstance(event, FrameDone):
                for sink in sinks:
                    sink.write(event.frame, event.detections, input=event.input)
                if event.input in bars:
                    bars[event.input].update(1)
            elif isinstance(event, InputBegin):
                if progress is not None and event.input not in bars:
                    bars[event.input] = progress(event.source, event.expected_frames, len(bars))
                for sink in sinks:
                    sink.begin(event.source, event.rate, input=event.input)
            elif event.began:
                for sink in sinks:
                    sink.end(input=event.input)
                bar = bars.pop(event.input, None)
                if bar is not None:
                    bar.close()
            spent += time.perf_counter() - t0
    finally:
        for bar in bars.values():
            bar.close()
        close = getattr(events, "close", None)
        if close is not None:
            close()
    return spent


_FRAME, _END, _ERROR = range(3)


class _Feeder:
    """Prepares one input's frames on a thread of its own, at most `depth` ahead of the scheduler, and
    hands them to the merged queue; then (also on a stop or an error) closes the input and says so.
    The input's stream is driven and closed by this thread only."""

    def __init__(self, index: int, stream: FrameStream, frames, merged: queue.Queue, stop: threading.Event,
                 max_frames: int | None, taken: int = 0, depth: int = 4):
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
