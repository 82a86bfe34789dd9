"""The run loop shared by every path: prepare a frame, submit it, collect what finished, sink.

This thread prepares, submits and delivers; the software path's decoder runs ahead on its own
thread and OpenVINO infers on its own, so decoding, preparing and inferring overlap. Results are
delivered in frame order. Ctrl-C stops reading, lets the requests in flight finish, and closes
every sink, so what was written stays valid.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from zerocopy.bridge.layout import LayoutError
from zerocopy.budget import decode_threads as cpu_decode_threads
from zerocopy.decode.damage import DamageReport
from zerocopy.decode.vaapi import VASession
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


@contextmanager
def stop_on_sigint(stop: threading.Event):
    """The first Ctrl-C asks the run to stop after the frames in flight; a second one aborts at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@dataclass
class InputOutcome:
    source: str
    frames: int = 0
    error: str | None = None
    damage: DamageReport = field(default_factory=DamageReport)


@dataclass
class RunResult:
    inputs: list[InputOutcome]
    stages: StageTimes
    clock: RunClock
    detections: int = 0
    interrupted: bool = False
    setup_s: float = 0.0  # opening the first input and compiling the model, not in the clock
    sink_s: float = 0.0  # wall time spent in the sinks (the annotated MP4's encoder, mostly), in the clock

    @property
    def frames(self) -> int:
        return sum(i.frames for i in self.inputs)


class Pipeline:
    """Runs inputs through one path.

    The model is compiled when the first input is open, because the zero-copy path's compile target
    (a VA remote context) comes from that input's first frame. The path is *committed* only once the
    first frame went through preparation, binding and inference: until then nothing reaches a sink,
    and a failure on a GPU path or a GPU device raises `PathUnavailable`, so `auto` can go on to the
    next path with the reason. Sinks belong to the caller, who closes them.
    """

    def __init__(self, model: WrappedModel, front: Front, device: str, nireq: int | None, threshold: float,
                 sinks: Sequence[Sink], keep_pictures: bool = False, va_device: str | None = None,
                 progress: Callable[[str, int | None], object] | None = None, config: dict | None = None,
                 decode_threads: int | None = None):
        self.model, self.front, self.device, self.threshold = model, front, device, threshold
        self.requested_nireq = nireq
        self.sinks = list(sinks)
        self.keep_pictures, self.va_device = keep_pictures, va_device
        self.decode_threads = cpu_decode_threads(decode_threads, device)  # FFmpeg's threads, if it decodes
        self.progress = progress
        self.config = config  # OpenVINO properties over the defaults
        self.stages = StageTimes()
        self.detections = 0
        self.stop = threading.Event()
        self.scheduler: InferenceScheduler | None = None
        self.nireq = 0
        self.committed = False
        self.sink_s = 0.0
        self.va = VASession(va_device)  # one VA device (and remote context) for all of a run's inputs
        self._context = None
        self._clock: RunClock | None = None
        self.setup_s = 0.0

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
                          va=self.va, core=self.model.core, decode_threads=self.decode_threads)
        return self.front.open(source, req)

    def _activate(self, stream: FrameStream) -> InferenceScheduler:
        """Compile (again, if the remote context changed) and make the scheduler (again, after a
        failed request: OpenVINO's queue rethrows a failure from then on)."""
        context = getattr(stream, "context", None)
        if self.model.compiled is None or context is not self._context:
            try:
                self.model.compile(self.device, context, self.config)
            except ModelError as e:
                if not self.committed and self._refusable:
                    raise self._refuse("", e) from None
                raise
            self._context = context
            self.scheduler = None
            n = self.requested_nireq or self.model.optimal_nireq
            if self.front.nireq_cap and not self.requested_nireq:
                n = min(n, self.front.nireq_cap)
            self.nireq = n
            if self._clock is not None and not self.setup_s:
                self.setup_s = self._clock.restart()
        if self.scheduler is None:
            self.scheduler = InferenceScheduler(self.model, self.front.handoff(self.model, stream), self.nireq)
        return self.scheduler

    def _trial(self, scheduler: InferenceScheduler, first: PreparedFrame) -> list[Result]:
        """The first frame through bind and inference, before anything is written."""
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

    def _deliver(self, results, bar) -> int:
        n = 0
        for r in results:
            self._emit(r)
            n += 1
            if bar is not None:
                bar.update(1)
        return n

    def _emit(self, r: Result) -> None:
        t0 = time.perf_counter()
        dets = self.model.decoder.decode(r.outputs, r.frame.geometry, self.threshold)
        post_ms = (time.perf_counter() - t0) * 1e3
        self.stages.add(r.frame.decode_ms, r.frame.preprocess_ms, r.inference_ms, post_ms)
        self.detections += len(dets)
        t1 = time.perf_counter()
        for sink in self.sinks:
            sink.write(r.frame, dets)
        self.sink_s += time.perf_counter() - t1

    def run(self, sources: Sequence[str], max_frames: int | None = None) -> RunResult:
        """Process every source. A path that cannot handle the inputs raises `PathUnavailable` before
        anything is written; an input it cannot handle after that is reported as that input's error."""
        clock = self._clock = RunClock()
        outcomes: list[InputOutcome] = []
        interrupted = False
        try:
            with stop_on_sigint(self.stop):
                for source in sources:
                    if self.stop.is_set():
                        break
                    outcome = InputOutcome(str(source))
                    outcomes.append(outcome)
                    try:
                        self._run_one(source, outcome, max_frames)
                    except (InputError, InferenceError) as e:
                        if not self.committed and isinstance(e, InferenceError):
                            raise
                        outcome.error = str(e) if isinstance(e, InputError) else f"{source}: {e}"
                    except PathUnavailable as e:
                        if not self.committed:
                            raise
                        outcome.error = f"{source}: {e}"
        except KeyboardInterrupt:  # a second Ctrl-C, or one outside the main thread's handler
            interrupted = True
        finally:
            self.close()
            clock.stop()
        interrupted = interrupted or self.stop.is_set()
        return RunResult(outcomes, self.stages, clock, self.detections, interrupted, self.setup_s, self.sink_s)

    def close(self) -> None:
        """Release the requests and the compiled model, then the VA device they may use (idempotent)."""
        self.scheduler = None
        self._context = None
        self.model.release()
        self.va.close()

    def _run_one(self, source: str, outcome: InputOutcome, max_frames: int | None) -> None:
        stream = self._open(source)
        scheduler: InferenceScheduler | None = None
        bar = None
        begun = False
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
            bar = self.progress(str(source), stream.expected_frames) if self.progress else None
            for sink in self.sinks:
                sink.begin(str(source), stream.rate)
            begun = True
            outcome.frames += self._deliver(ready, bar)
            self._feed(scheduler, frames, taken, max_frames, outcome, bar)
        finally:
            # On Ctrl-C or an error: stop reading, finish what is in flight, keep every sink valid.
            try:
                if scheduler is not None and begun:
                    outcome.frames += self._deliver(scheduler.results(wait=True), bar)
                elif scheduler is not None:
                    scheduler.wait_all()
            finally:
                if scheduler is not None and scheduler.failed:
                    self.scheduler = None
                stream.close()
                outcome.damage = stream.damage_report()
                if begun:
                    t1 = time.perf_counter()
                    for sink in self.sinks:
                        sink.end()
                    self.sink_s += time.perf_counter() - t1
                if bar is not None:
                    bar.close()
        if outcome.frames == 0 and not self.stop.is_set():
            raise InputError(f"{source}: no frame could be decoded"
                             + (f" ({outcome.damage.stopped_early})" if outcome.damage.stopped_early else ""))

    def _feed(self, scheduler: InferenceScheduler, frames, taken: int, max_frames: int | None,
              outcome: InputOutcome, bar) -> None:
        batch = self.model.batch
        pending: list[PreparedFrame] = []
        for n, item in enumerate(frames, start=taken):
            if self.stop.is_set() or (max_frames is not None and n >= max_frames):
                break
            pending.append(item)
            if len(pending) == batch:
                scheduler.submit(pending)
                pending = []
            outcome.frames += self._deliver(scheduler.results(), bar)
        if pending and not self.stop.is_set():
            scheduler.submit(pending)
