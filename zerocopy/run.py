"""`detect`: pick the path (auto: zero-copy → copy → software, every refusal with its reason), run it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from zerocopy.catalog import DEFAULT_MODEL
from zerocopy.errors import ZeroCopyError
from zerocopy.paths import PathChoice
from zerocopy.pipeline import Pipeline, RunResult
from zerocopy.sources import expand_inputs


@dataclass
class DetectOptions:
    inputs: list[str]
    model: str = DEFAULT_MODEL
    labels: str | None = None
    decoder: str | None = None
    resize: str | None = None
    path: str = "auto"
    device: str = "auto"
    va_device: str | None = None
    nireq: int | None = None
    batch: int = 1
    threshold: float | None = None  # None: the model's default
    json: str | None = None
    output: str | None = None
    report: str | None = None
    max_frames: int | None = None
    quiet: bool = False
    verbose: bool = False  # say each refusal as it happens, and every reason
    parallel: bool = False  # every input at once, into one model
    progress: Callable | None = None
    ov_config: dict[str, str] = field(default_factory=dict)
    decode_threads: int | None = None
    realtime: bool = False  # pace file inputs at their frame rate
    reconnect: bool = False  # re-open a live source that drops
    reconnect_timeout: float = 60.0  # give up after this long without a frame


@dataclass
class DetectRun:
    result: RunResult
    choice: PathChoice
    pipeline: Pipeline
    report: dict = field(default_factory=dict)


def _sinks(opts: DetectOptions, labels):
    from zerocopy.sinks.jsonl import JsonlSink
    from zerocopy.sinks.video import VideoSink

    sinks = []
    try:
        if opts.json:
            sinks.append(JsonlSink(opts.json, labels, with_source=len(opts.inputs) > 1))
    except OSError as e:
        raise ZeroCopyError(f"cannot write --json {opts.json}: {e.strerror or e}") from None
    if opts.output:
        sinks.append(VideoSink(opts.output, labels, inputs=len(opts.inputs)))
    return sinks


def _name_outputs(report: dict, sinks) -> None:
    """Each input's entry in the report names its annotated video."""
    from zerocopy.sinks.video import VideoSink

    for sink in sinks:
        if isinstance(sink, VideoSink):
            written = list(sink.outputs)
            for entry in report["inputs"]:
                match = next((i for i, (source, _) in enumerate(written) if source == entry["source"]), None)
                if match is not None:
                    entry["output"] = written.pop(match)[1]


def make_detector(opts: DetectOptions, log: Callable[[str], None] | None = None):
    """The `Detector` for these options (resolves the model: a bad one fails here, before any input)."""
    from zerocopy.api import Detector

    return Detector(opts.model, path=opts.path, device=opts.device, threshold=opts.threshold, nireq=opts.nireq,
                    batch=opts.batch, keep_images=False, labels=opts.labels, decoder=opts.decoder,
                    resize=opts.resize, va_device=opts.va_device, decode_threads=opts.decode_threads,
                    ov_config=opts.ov_config, log=log, realtime=opts.realtime, reconnect=opts.reconnect,
                    reconnect_timeout=opts.reconnect_timeout)


def run_detect(opts: DetectOptions, log: Callable[[str], None], detector=None) -> DetectRun:
    """Run the detector over the inputs into the sinks the options ask for, and write the report.

    The path is tried in `auto` order until one commits (its first frame went through inference);
    a refused one writes nothing. The sinks are made once and closed here, whichever path ran.
    """
    from zerocopy.pipeline import feed
    from zerocopy.sinks.report import write_report

    opts.inputs = expand_inputs(opts.inputs)
    det = detector or make_detector(opts)
    if opts.verbose:
        det.on_refusal = lambda name, device, why: log(
            f"{name} path refused on {device}: {'; '.join(why)}; trying the next")
    sinks = _sinks(opts, det.spec.labels)
    try:  # the time spent writing the outputs is the detector's "consumer" time: the report's `sinks`
        feed(det.events(opts.inputs, max_frames=opts.max_frames, keep_pictures=bool(opts.output),
                        parallel=opts.parallel), sinks, opts.progress)
    finally:
        for sink in sinks:
            sink.close()
    report = det.report()
    _name_outputs(report, sinks)
    if opts.report:
        write_report(report, opts.report)
    return DetectRun(det.result(), det.choice, det._pipeline, report)
