"""The Python API: `Detector` (a model, the best path this machine allows, and runs over videos) and
the one-shot `detect()`.

    import zerocopy

    with zerocopy.Detector(model="face") as det:
        for r in det.run("clip.mp4"):
            print(r.index, r.pts, len(r.detections))
        print(det.path, det.refused)

Runs are pull-based generators: the caller's loop drives decoding and inference, and leaving the
loop early (break, an exception, `close()`) stops the read-ahead, lets the requests in flight
finish and closes the input. The CLI is a client of this module.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from zerocopy.catalog.fetch import cache_dir
from zerocopy.config import RunConfig
from zerocopy.errors import ConfigError, InputError, ModelError, PathUnavailable
from zerocopy.infer.compiled import CompiledModels
from zerocopy.infer.model import make_core, pick_device
from zerocopy.input_settings import InputSettings, input_settings
from zerocopy.paths import Front, candidates, devices_to_try
from zerocopy.pipeline import FrameDone, InputBegin, InputEnd, Pipeline
from zerocopy.pipeline.parallel import Reopen
from zerocopy.plan import RunPlan, plan_detection
from zerocopy.postprocess import label_indices
from zerocopy.probe import gather
from zerocopy.refusals import Code, PathChoice, Reason, redacted
from zerocopy.report import build_report
from zerocopy.results import FrameResult
from zerocopy.run_args import Source, check_cameras, check_run_options, source_list

OnRefusal = Callable[[str, str, list[str]], None]


class Detector:
    """A detection model on the best path this machine allows (auto: zero-copy, copy, software).

    `settings` are `RunConfig`'s (model, path, device, threshold, nireq, batch, …: `help(RunConfig)`
    lists them with their defaults, the CLI's), or pass a ready `config`. They are checked here
    (`ConfigError`) and the model resolved (a catalogue model pulled), so a bad setting or model
    raises before any video is opened; compiling waits for the first frame (zero-copy compiles on
    the VA context that frame gives). `path` and `refused` are set once a run has committed to a
    path, before its first result. `keep_images` keeps each frame's picture in `FrameResult.image`;
    `log` hears what a first use downloads (the CLI prints it); `on_refusal(path, device, reasons)`
    is told when `auto` moves on; `fronts` replaces the paths `auto` tries (in order) and that a
    named `path` picks from: an extension point, and how tests inject failing paths. `models`: a
    longer-lived owner of compiled models (serve's) to compile through; by default the detector's own.
    """

    def __init__(self, model: str | None = None, *, config: RunConfig | None = None, keep_images: bool = False,
                 log: Callable[[str], None] | None = None, on_refusal: OnRefusal | None = None,
                 fronts: Sequence[Front] | None = None, models: CompiledModels | None = None, **settings: Any):
        if model is not None:
            settings["model"] = model
        if "decoder" in settings:  # the name `postprocess` had before
            if "postprocess" in settings:
                raise ConfigError("postprocess", "give postprocess or its old name decoder, not both")
            settings["postprocess"] = settings.pop("decoder")
        asked = (config or RunConfig()).replace(**settings) if settings else (config or RunConfig())
        self.keep_images, self._on_refusal = bool(keep_images), on_refusal
        self._fronts = list(fronts) if fronts is not None else None
        self._owns_models = models is None
        self._models = models if models is not None else CompiledModels(make_core(cache_dir() / "ov-cache"))
        self._core = self._models.core
        if asked.device.lower() != "auto":  # every path runs on it: one line now, not a refusal per path
            pick_device(self._core, asked.device)
        self.plan = self._plan(asked, log)
        self.spec, self.config = self.plan.spec, self.plan.config
        self.path: str | None = None
        self.refused: dict[str, str] = {}
        self.choice: PathChoice | None = None
        self._stop = threading.Event()
        self._pipeline = None
        self._consumer_s = 0.0
        self._runs: weakref.WeakSet = weakref.WeakSet()
        self._closed = False

    def _plan(self, asked: RunConfig, log: Callable[[str], None] | None) -> RunPlan:
        """The run's plan (`plan.plan_detection`): the model pulled, the settings resolved, the labels, the region
        models; a bad setting or model raises here."""
        return plan_detection(asked, self._core, log)

    @property
    def names(self) -> tuple[str, ...] | None:
        return tuple(self.spec.labels) or None

    def run(self, sources: Source | Iterable[Source], *, max_frames: int | None = None,
            on_error: str = "raise", parallel: bool = False, cameras: Sequence[str] | None = None,
            on_event: Callable[[Any], None] | None = None,
            per_input: Sequence[dict | InputSettings] | None = None) -> Iterator[FrameResult]:
        """Results of every frame of every source (a path, URL, folder, or a list of them), in order.

        A new generator per call, its arguments checked here (`ConfigError`); `max_frames` is per
        source. An input that cannot be opened or decodes no frame raises `InputError` at its place
        (`on_error="raise"`), or is skipped and recorded in `report()["inputs"]` (`on_error="skip"`).
        With `parallel=True` every source is decoded at once into the one model: results of different
        sources interleave, each source's in its own order (tell them apart by `r.input`), and one
        ending or failing does not stop the others — with `on_error="raise"` the others finish first,
        then the first failed input's `InputError` is raised. A `stop()` (or `close()`) after this call
        ends the run, even before its first result is taken. With `track=True`: `cameras` names each
        source in events (default: its file stem or URL's last part), and `on_event(event)` hears each
        object event as its frame's result comes out. `per_input` gives each source settings of its own
        (`input_settings.INPUT_SETTINGS`, those declared `per_input`: `detect_fps`, `zones`, `motion`…, and `classes`,
        which narrow the run's), one dict (or `input_settings.InputSettings`) per source.
        """
        check_run_options(max_frames, on_error, parallel)
        return self._results(self.events(sources, max_frames=max_frames, keep_images=self.keep_images,
                                         parallel=parallel, cameras=cameras, per_input=per_input),
                             on_error, parallel, on_event)

    def _results(self, events, on_error: str, parallel: bool, on_event=None) -> Iterator[FrameResult]:
        names, failed = self.names, None
        try:
            for event in events:
                for e in event.events if on_event is not None and not isinstance(event, InputBegin) else ():
                    on_event(e)  # (an input's end carries the end of every object still open in it)
                if isinstance(event, FrameDone):
                    yield FrameResult.of(event, names, self.keep_images)
                    continue
                if isinstance(event, InputEnd) and event.outcome.error and on_error == "raise":
                    if not parallel:
                        raise InputError(event.outcome.error)
                    failed = failed or event.outcome.error
        finally:
            events.close()
        if failed:
            raise InputError(failed)

    def events(self, sources: Source | Iterable[Source], *, max_frames: int | None = None,
               keep_images: bool = False, parallel: bool = False, cameras: Sequence[str] | None = None,
               per_input: Sequence[dict | InputSettings] | None = None, reopen: Reopen | None = None,
               every_picture: bool = True):
        """The run as pipeline events (`InputBegin`, `FrameDone`, `InputEnd`): what sinks consume.
        Its arguments are checked here; a `stop()` made before it ends it (a Ctrl-C while the model
        loads included), and a run that ended clears the stop for the next one. With `reopen` (serve's
        cameras), an input that ends is opened again after a back-off, the others going on, until a stop.
        `every_picture=False` (with `keep_images`: serve's latest.jpg) asks only for the pictures of the frames
        decoded, so the decode gate may run and leave frames without one."""
        if self._closed:
            raise ValueError("the detector is closed")
        inputs = source_list(sources)
        check_run_options(max_frames, "raise", parallel)
        cameras = check_cameras(cameras, inputs)
        own = self._per_input(per_input, inputs)
        run = self._stopping_after(self._events(inputs, max_frames, bool(keep_images), parallel, cameras, own,
                                                reopen, every_picture))
        self._runs.add(run)
        return run

    def _stopping_after(self, events):
        try:
            yield from events
        finally:
            events.close()
            self._stop.clear()  # the stop was this run's

    def _per_input(self, per_input: Sequence[dict | InputSettings] | None, inputs: list[str]) -> list[InputSettings]:
        """Each input's own settings, checked (with the run's: `anonymise` needs every frame inferred; its classes
        among the model's labels)."""
        if per_input is None:
            return []
        if isinstance(per_input, dict) or len(per_input) != len(inputs):
            raise ConfigError("per_input", f"per_input must be one dict per input ({len(inputs)})")
        out = []
        for i, given in enumerate(per_input):
            own = input_settings(given, f"per_input[{i}]")
            own.of_run(self.config)  # checked with the run's settings
            if own.classes is not None:
                label_indices(own.classes, self.spec.labels)
            out.append(own)
        return out

    def _events(self, inputs: list[str], max_frames: int | None, keep_images: bool, parallel: bool = False,
                cameras: list[str] | None = None, per_input: list[InputSettings] | None = None,
                reopen: Reopen | None = None, every_picture: bool = True):
        self.path, self.refused, self.choice, self._consumer_s = None, {}, None, 0.0
        at_once = len(inputs) if parallel else 1
        facts = functools.cache(lambda: gather(self._core.available_devices, check_bridge=True))
        refused: dict[str, list[str]] = {}
        for front in candidates(self.config.path, self._fronts):
            name = front.name
            static = front.refusals(facts, self.config)
            if static:
                refused[name] = list(static)
                continue
            try:
                devices = devices_to_try(self._core, self.config.device, front)
            except ModelError as e:  # e.g. zero-copy needs a GPU OpenVINO does not see
                if self.config.path != "auto":
                    raise
                refused.setdefault(name, []).append(Reason(Code.NO_DEVICE, str(e)))
                continue
            for device in devices:
                made = self.plan.for_path(self._core, front, device, at_once)
                pipeline = Pipeline(made.model, front, made.config, inputs=at_once, keep_images=keep_images,
                                    every_picture=every_picture, stop_event=self._stop, stages=made.stages,
                                    models=self._models)
                self._pipeline = pipeline
                events = pipeline.events(inputs, max_frames, cameras, per_input, reopen)
                held = []
                try:
                    for event in events:
                        if not pipeline.committed:  # e.g. the end of an input that gave no frame
                            held.append(event)
                            continue
                        if self.choice is None:
                            self._commit(name, refused)
                        for e in [*held, event]:
                            t0 = time.perf_counter()
                            yield e
                            self._consumer_s += time.perf_counter() - t0
                        held = []
                except PathUnavailable as e:
                    reasons = {path: [redacted(w) for w in why] for path, why in e.reasons.items()}
                    for path, why in reasons.items():  # each reason once (a VA refusal repeats per device)
                        known = refused.setdefault(path, [])
                        known += [w for w in why if w not in known]
                    if self._on_refusal is not None and self.config.path == "auto":
                        self._on_refusal(name, device, reasons.get(name, [redacted(str(e))]))
                    continue
                finally:
                    events.close()
                if self.choice is None:
                    self._commit(name, refused)
                yield from held
                return
            if self.config.path != "auto":
                break
        raise PathUnavailable(refused)

    def _commit(self, name: str, refused: dict[str, list[str]]) -> None:
        self.choice = PathChoice(name, {p: list(w) for p, w in refused.items()})
        self.path, self.refused = name, self.choice.refused

    def stop(self) -> None:
        """Ask the current run to stop reading; results in flight still come out. Thread- and
        signal-safe (the CLI calls it on Ctrl-C)."""
        self._stop.set()
        pipeline = self._pipeline
        if pipeline is not None:
            pipeline.stop()  # also ends a live source's wait for data or for a reconnection

    def damage_now(self, input: int):
        """While a run goes: input `input`'s `DamageReport` as it stands (drops, reconnections), None when
        it is not open (`serve`'s status)."""
        pipeline = self._pipeline
        return pipeline.damage_now(input) if pipeline is not None else None

    def result(self):
        """The last run's `RunResult` (frames, step times, clock, per-input outcomes)."""
        if self._pipeline is None:
            raise ValueError("nothing has run yet")
        return self._pipeline.result(self._consumer_s)

    def report(self) -> dict:
        """The last run's report: the same dict `zerocopy detect --report` writes."""
        if self._pipeline is None or self.choice is None:
            raise ValueError("nothing has run yet")
        return build_report(self.result(), self.choice, self._pipeline.model, self._pipeline.config)

    def close(self) -> None:
        """Stop and close every live run (idempotent), from any thread: a run another thread is
        inside of ends there after its current frame, releasing what it holds as it ends."""
        self._closed = True
        self.stop()
        for run in list(self._runs):
            with contextlib.suppress(ValueError):  # "already executing": its own thread ends it, stopped
                run.close()
        if self._owns_models:  # (a run still going on another thread keeps what it uses until it ends)
            self._models.close()

    def __enter__(self) -> Detector:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def detect(sources: Source | Iterable[Source], *, max_frames: int | None = None,
           **options: Any) -> Iterator[FrameResult]:
    """One-shot: a `Detector(**options)` run over `sources`, closed when the loop ends."""
    with Detector(**options) as det:
        yield from det.run(sources, max_frames=max_frames)
