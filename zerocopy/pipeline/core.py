"""The run loop's shared half: compile, make the request queue, try the first frame, turn results
into events; and the rule for whether a failure refuses the path (so `auto` moves on) or is the
input's or the model's.

`Pipeline.events()` is a generator: the caller's loop drives it (pull-based), and closing it early
releases everything. Inputs run one after the other or all at once through the one input loop
(`inputs.py`): each input is read and prepared by a feeder thread (`parallel.py`), the calling thread
submits and delivers, and OpenVINO infers on its own. Results come out in frame order.
`stop()` (what the CLI's Ctrl-C does) stops reading and lets the requests in flight finish, so
whatever the caller wrote stays valid.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence

from zerocopy.bridge.layout import LayoutError
from zerocopy.config import RunConfig
from zerocopy.decode.base import GUESSED_RATE
from zerocopy.decode.vaapi import VASession
from zerocopy.detections import Detections
from zerocopy.errors import InferenceError, ModelError, PathUnavailable, ZeroCopyError, openvino_reason
from zerocopy.frames import PreparedFrame
from zerocopy.infer.compiled import CompiledModels
from zerocopy.infer.model import WrappedModel
from zerocopy.infer.queue import InferenceScheduler, Result
from zerocopy.input_settings import InputSettings
from zerocopy.names import camera_name
from zerocopy.paths.base import FrameStream, Front, OpenRequest
from zerocopy.pipeline.delivered import Delivered
from zerocopy.pipeline.events import Event, FrameDone, InputBegin, InputOutcome, RunResult
from zerocopy.pipeline.inputs import input_events
from zerocopy.pipeline.parallel import Reopen
from zerocopy.postprocess import label_indices
from zerocopy.postprocess.maps import frame_map
from zerocopy.refusals import Code, Reason
from zerocopy.stages.base import Activation, InputInfo, Stage
from zerocopy.stages.chain import StageChain
from zerocopy.stats import Distribution, RunClock, StepTimes

FIRST_INFERENCE_TIMEOUT_S = 60.0  # a GPU that never completes the first request is refused, not waited on
# What binding a frame to a request may raise when the GPU, its driver or the bridge cannot cope
# (create_tensor_nv12 / set_tensor raise RuntimeError or TypeError; the bridge its own errors).
_BIND_ERRORS = (RuntimeError, TypeError, ValueError, LayoutError, ZeroCopyError)


class OpenInputs:
    """The streams open now, and the latest by its input's place in the run's list (feeders open and forget
    theirs on threads of their own)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._open: set[FrameStream] = set()
        self._by_input: dict[int, FrameStream] = {}

    def add(self, input: int, stream: FrameStream) -> None:
        with self._lock:
            self._open.add(stream)
            self._by_input[input] = stream

    def forget(self, stream: FrameStream) -> None:
        with self._lock:
            self._open.discard(stream)
            self._by_input = {i: s for i, s in self._by_input.items() if s is not stream}

    def get(self, input: int) -> FrameStream | None:
        with self._lock:
            return self._by_input.get(input)

    def interrupt(self) -> None:
        """End every open stream's wait for data (or for a reconnection)."""
        with self._lock:
            streams = list(self._open)
        for stream in streams:
            stream.interrupt()


class Pipeline:
    """Runs inputs through one path (`front`) on one device, with `config` (resolved for that device and the
    `inputs` decoded at once; its `nireq` is resolved once the model is compiled).

    The model is compiled when the first input is open, because the zero-copy path's compile target (a VA remote
    context) comes from that input's first frame. The path is *committed* only once the first frame went through
    preparation, binding and inference: until then no event leaves, and a failure on a GPU path or a GPU device
    raises `PathUnavailable`, so `auto` can go on to the next path with the reason.
    """

    feeder_depth = 4  # frames each input's feeder may prepare ahead

    def __init__(self, model: WrappedModel, front: Front, config: RunConfig, *, inputs: int = 1,
                 keep_images: bool = False, stop_event: threading.Event | None = None, stages: Sequence[Stage] = (),
                 models: CompiledModels | None = None, every_picture: bool = True):
        self.model, self.front, self.inputs, self.keep_images = model, front, inputs, keep_images
        self.every_picture = every_picture  # with keep_images: each frame's (else those decoded: `OpenRequest`)
        # the owner of the compiled models and of the VA device they use (a Detector's, or a service's): they
        # outlive this run; without one, the run compiles its own and closes its VA device at its end
        self.models = models
        # what runs on each frame after inference (tiles, classes, region models, tracking…), in order
        self.after = StageChain(stages)
        # an image-to-image model's output over the frame (`text-map`); None for a detector
        self.maps = frame_map(model.spec.postprocess, model.spec.name, model.output_shapes)
        self.planned = self.config = config  # as resolved before compiling; `config` adds what compiling tells
        self.stop_event = stop_event or threading.Event()
        self.delivered = Delivered()  # which frames the stages have seen, per input (a file's gate waits on it)
        self.abandon = threading.Event()  # set by a stop or the end of a run: opens still waiting give up
        self.open_inputs = OpenInputs()  # open now: stop() interrupts their reading
        self.steps = StepTimes()  # each frame's decode, preprocess, inference and postprocess times
        self.detections, self.committed = 0, False
        self.scheduler: InferenceScheduler | None = None
        # one VA device (and remote context) for all of a run's inputs
        self.va = models.va_session(front.name, config.va_device) if models is not None else VASession(config.va_device)
        self.clock: RunClock | None = None
        self.setup_s, self.skipped = 0.0, 0  # and the frames --detect-fps left out
        self.outcomes: list[InputOutcome] = []
        self._context, self.interrupted = None, False
        self.latency = Distribution()  # arrival → result, ms
        self.per_input: list[InputSettings] = []  # each input's own settings (`input_settings.INPUT_SETTINGS`)
        self.cameras: list[str] = []  # each input's name in events

    @property
    def device(self) -> str:
        return self.config.device

    @property
    def nireq(self) -> int:
        return self.config.nireq or 0

    def stop(self) -> None:
        """Stop reading; the frames in flight still come out. Safe from any thread or a signal handler."""
        self.stop_event.set()
        self.abandon.set()
        self.open_inputs.interrupt()  # a live source waiting for data or for a reconnection

    @property
    def refusable(self) -> bool:
        """Whether a failure before commit means 'this path cannot run here' rather than a user error:
        on the VA paths and on a GPU it is the machine's; on the CPU it is the model's or the input's."""
        return self.front.name in ("zero-copy", "copy") or self.device.split(".")[0] == "GPU"

    def _refuse(self, code: Code, stage: str, e: BaseException) -> PathUnavailable:
        """`stage` names what failed ("" when the message says it already)."""
        why = openvino_reason(e) if isinstance(e, RuntimeError) else str(e)
        return PathUnavailable({self.front.name: Reason(code, f"{stage}: {why}" if stage else why)})

    def open(self, source: str, input: int = 0) -> FrameStream:
        # prepared and not yet bound at once: a batch being filled, the first frame primed, the one being
        # prepared, and what its feeder prepares ahead (and holds while it waits)
        unbound = self.model.batch + 2 + self.feeder_depth + 1
        if self.stop_event.is_set():
            self.abandon.set()
        self.delivered.reset(input)
        stream = self.front.open(source, OpenRequest(model=self.model, config=self._own(input).of_run(self.config),
                                                     va=self.va,
                                                     keep_images=self.keep_images, every_picture=self.every_picture,
                                                     unbound=unbound, stop=self.abandon, keep_source=self.after.crops,
                                                     busy=lambda t: self.after.busy(input, t),
                                                     ends_due=lambda: self.after.ends_due(input),
                                                     settle=self.delivered.settler(input, self.abandon)))
        self.open_inputs.add(input, stream)
        if self.stop_event.is_set():  # stopped while it was opening
            self.stop()
        return stream

    def _own(self, input: int) -> InputSettings:
        return self.per_input[input] if input < len(self.per_input) else InputSettings()

    def forget(self, stream: FrameStream) -> None:
        self.open_inputs.forget(stream)

    def damage_now(self, input: int):
        """An open input's `DamageReport` as it stands (its drops and reconnections so far), else None."""
        stream = self.open_inputs.get(input)
        return stream.damage_report() if stream is not None else None

    def activate(self, stream: FrameStream) -> InferenceScheduler:
        """Compile (again, if the remote context changed) and make the scheduler (again, after a
        failed request: OpenVINO's queue rethrows a failure from then on)."""
        if self.model.compiled is None or stream.context is not self._context:
            try:
                self.model.compile(self.device, stream.context, self.config.ov_config, self.inputs, self.models)
                self.after.activate(Activation(device=self.device, context=stream.context,
                                               ov_config=self.config.ov_config, models=self.models,
                                               feed=lambda wrapped: self.front.roi_feed(wrapped, stream)))
            except ModelError as e:
                if not self.committed and self.refusable:
                    raise self._refuse(Code.COMPILE, "", e) from None
                raise
            self._context = stream.context
            self.drop_scheduler()
            self.config = self.planned.resolve(optimal_nireq=self.model.optimal_nireq, nireq_cap=self.front.nireq_cap)
            if self.clock is not None and not self.setup_s:
                self.setup_s = self.clock.restart()
        if self.scheduler is None:
            self.scheduler = InferenceScheduler(self.model, self.front.handoff(self.model, stream), self.nireq)
        return self.scheduler

    def drop_scheduler(self) -> None:
        """Close the request queue (`RequestQueue`'s rule); the next `activate` makes a new one."""
        scheduler, self.scheduler = self.scheduler, None
        if scheduler is not None:
            scheduler.close()

    def trial(self, scheduler: InferenceScheduler, first: PreparedFrame) -> list[Result]:
        """The first frame through bind and inference, before anything leaves."""
        try:
            scheduler.submit([first])
        except _BIND_ERRORS as e:
            if self.refusable:
                raise self._refuse(Code.BIND, f"binding the first frame on {self.device} failed", e) from None
            raise
        try:
            results = list(scheduler.results(wait=True, timeout=FIRST_INFERENCE_TIMEOUT_S))
        except InferenceError as e:
            if self.refusable:
                raise self._refuse(Code.FIRST_INFERENCE, f"first frame on {self.device}", e) from None
            raise
        # the stages that crop once on the first frame, boxes or not (region models; tiles run on every inferred
        # frame: the first frame's own `done`, still before commit, tries them)
        self.after.prime(first, self.stage_failed)
        return results

    def stage_failed(self, stage: Stage, e: Exception) -> Exception:
        """What a stage that crops the frame (tiles, region models) raised, said as the path's (before commit:
        the first frame's regions are still part of the path's trial) or the run's."""
        title = stage.title
        if isinstance(e, PathUnavailable):
            if not self.committed:
                return e
            return InferenceError(f"{title} failed: the path can no longer crop regions ({e})")
        if not isinstance(e, _BIND_ERRORS):
            return e
        if not self.committed and self.refusable:
            return self._refuse(Code.ROI_CROP, f"{title} on the first frame on {self.device}", e)
        return e if isinstance(e, InferenceError) else InferenceError(f"{title} failed: {e}")

    def note_no_frame(self, outcome: InputOutcome) -> None:
        """An input that ended without a frame, an error of its own or a stop: say so (and where
        reading stopped early, why)."""
        if not outcome.frames and not outcome.error and not self.stop_event.is_set():
            stopped = outcome.damage.stopped_early
            outcome.error = f"{outcome.source}: no frame could be decoded" + (f" ({stopped})" if stopped else "")

    def begin(self, input: int, source: str, stream: FrameStream) -> InputBegin:
        """An input's first event; the stages learn of it here (its tracker starts, with `--track`)."""
        own = self._own(input)
        camera = self.cameras[input] if input < len(self.cameras) else camera_name(source)
        classes = label_indices(own.classes, self.model.spec.labels) if own.classes is not None else None
        self.after.begin(InputInfo(index=input, source=source, camera=camera, rate=stream.rate or GUESSED_RATE,
                                   detect_fps=own.of_run(self.config).detect_fps, classes=classes, settings=own))
        return InputBegin(source, stream.rate, stream.expected_frames, input)

    def end_input(self, input: int) -> tuple:
        """The events the stages make as an input ends (or the run stops): with `--track`, the `end` of every
        object still open in it."""
        return self.after.end(input)

    def done(self, r: Result, outcome: InputOutcome, input: int = 0) -> FrameDone:
        """A frame's result: its outputs decoded, then through the stages (a frame `--detect-fps` left out, with
        no outputs, through those that see such frames: the tracks' predicted boxes, or none)."""
        try:
            t0 = time.perf_counter()
            dets: Detections | None = None
            if r.outputs is None:
                self.skipped += 1
            elif self.maps is not None:  # an image-to-image model: its map is the frame's result
                r.frame.output, dets = self.maps(r.outputs, r.frame.geometry), Detections.empty()
            else:
                assert self.model.postprocessor is not None
                dets = self.model.postprocessor(r.outputs, r.frame.geometry)
            decoded_s = time.perf_counter() - t0
            chained = self.after(r.frame, dets, input, self.stage_failed)
            now = time.perf_counter()
            outcome.frames += 1
            outcome.ended = now
            if r.outputs is not None:
                post_ms = (decoded_s + chained.untimed) * 1e3  # with the stages that do not time themselves
                self.steps.add(r.frame.decode_ms, r.frame.preprocess_ms, r.inference_ms, post_ms)
                self.detections += len(chained.detections)
                if r.frame.arrived is not None:  # a live or paced input: from its arrival to its result
                    self.latency.add((now - r.frame.arrived) * 1e3)
            return FrameDone(source=outcome.source, frame=r.frame, detections=chained.detections, input=input,
                             events=tuple(chained.events))
        finally:  # a frame whose stages failed is seen too: a feeder waiting on it goes on
            self.delivered.mark(input, r.frame.index)

    def events(self, sources: Sequence[str], max_frames: int | None = None, cameras: Sequence[str] | None = None,
               per_input: Sequence[InputSettings] | None = None, reopen: Reopen | None = None) -> Iterator[Event]:
        """`InputBegin`, `FrameDone`… and `InputEnd` per source. A path that cannot handle the inputs
        raises `PathUnavailable` before the first event; an input it cannot handle after that ends with
        its error in `InputEnd.outcome.error`. `result()` sums the run up once it is over.

        One input after the other; or, with `inputs` > 1, all at once, all feeding the one compiled model and
        request queue: events of different inputs interleave, each input's frames in their order, and one input
        ending or failing does not stop the others. Either way each input is decoded on a thread of its own
        (`inputs.py`: one loop, a window of one input or of all). With `reopen`, inputs run all at once whatever
        their number, and each one that ends is opened again after a back-off (`parallel.Reopen`) until a stop."""
        self.clock = RunClock()
        self.outcomes = []
        self.skipped = 0
        self.per_input = list(per_input or [])
        self.cameras = [camera_name(s) for s in sources] if cameras is None else list(cameras)
        self.abandon.clear()
        window = len(sources) if reopen is not None or self.inputs > 1 else 1
        try:
            yield from input_events(self, [str(s) for s in sources], max_frames, window=window, reopen=reopen)
        except KeyboardInterrupt:  # e.g. a second Ctrl-C: what was delivered stays delivered
            self.interrupted = True
        finally:
            self.interrupted = self.interrupted or self.stop_event.is_set()  # the stop may be cleared later
            self.close()
            self.clock.stop()

    def close(self) -> None:
        """Release the requests and the compiled model, then the VA device they may use, unless their owner
        (`models`) keeps them for the next run (idempotent)."""
        self.drop_scheduler()
        self.after.release()
        self.model.release()
        if self.models is None:
            self.va.close()

    def result(self, sink_s: float = 0.0) -> RunResult:
        interrupted = self.interrupted or self.stop_event.is_set()  # (asked while the run still goes)
        return RunResult(inputs=list(self.outcomes), steps=self.steps, clock=self.clock or RunClock(),
                         detections=self.detections, interrupted=interrupted, setup_s=self.setup_s, sink_s=sink_s,
                         latency=self.latency, skipped=self.skipped, reports=self.after.reports())
