"""`detect`: pick the path (auto: zero-copy → copy → software, every refusal with its reason), run it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from zerocopy.errors import InputError, ModelError, PathUnavailable, ZeroCopyError
from zerocopy.paths import AUTO_ORDER, PathChoice, front_for
from zerocopy.pipeline import Pipeline, RunResult


@dataclass
class DetectOptions:
    inputs: list[str]
    model: str = "face"
    labels: str | None = None
    decoder: str | None = None
    resize: str | None = None
    path: str = "auto"
    device: str = "auto"
    va_device: str | None = None
    nireq: int | None = None
    batch: int = 1
    threshold: float = 0.5
    json: str | None = None
    output: str | None = None
    report: str | None = None
    max_frames: int | None = None
    quiet: bool = False
    progress: Callable | None = None
    ov_config: dict[str, str] = field(default_factory=dict)
    decode_threads: int | None = None


@dataclass
class DetectRun:
    result: RunResult
    choice: PathChoice
    pipeline: Pipeline
    report: dict = field(default_factory=dict)


VIDEO_SUFFIXES = {".mp4", ".m4v", ".mov", ".mkv", ".webm", ".avi", ".ts", ".mts", ".m2ts", ".mpg", ".mpeg",
                  ".flv", ".wmv", ".h264", ".264", ".h265", ".265", ".hevc", ".ivf", ".y4m",
                  # still images: FFmpeg reads each as a one-frame video, as when one is named alone
                  ".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff"}


def expand_inputs(inputs: list[str]) -> list[str]:
    """Folders become their video and image files (by suffix, sorted, not recursive); other inputs
    stay as given."""
    out: list[str] = []
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            videos = sorted(str(p) for p in path.iterdir() if p.is_file() and p.suffix.lower() in VIDEO_SUFFIXES)
            if not videos:
                raise InputError(f"{item}: a directory with no video or image files")
            out += videos
        else:
            out.append(item)
    return out


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


def _devices(core, requested: str, front) -> list[str]:
    """Where a path may infer, best first: with `auto`, a GPU that fails is followed by the CPU."""
    from zerocopy.infer.model import pick_device

    if requested.lower() != "auto":
        return [pick_device(core, requested, front.devices)]
    first = pick_device(core, "auto", front.devices)
    rest = [d for d in front.devices if d != first.split(".")[0]]
    return [first] + [d for d in rest if _available(core, d)]


def _available(core, device: str) -> bool:
    from zerocopy.errors import ModelError
    from zerocopy.infer.model import pick_device

    try:
        pick_device(core, device)
        return True
    except ModelError:
        return False


def run_detect(opts: DetectOptions, log: Callable[[str], None]) -> DetectRun:
    """Try the paths in order until one commits (its first frame went through inference), then run it.

    A path (or, with `--device auto`, a device) that cannot run is refused with its reason before
    anything reaches the sinks; the sinks are made once and closed here, whichever path ran.
    """
    from zerocopy.catalog.fetch import cache_dir
    from zerocopy.infer.model import WrappedModel, make_core, resolve_spec
    from zerocopy.probe import gather, refusals
    from zerocopy.sinks.report import build_report, write_report

    opts.inputs = expand_inputs(opts.inputs)
    core = make_core(cache_dir() / "ov-cache")
    spec = resolve_spec(opts.model, opts.labels, opts.decoder, opts.resize, core=core)
    candidates = AUTO_ORDER if opts.path == "auto" else (opts.path,)
    gpu_paths = [p for p in candidates if p in ("zero-copy", "copy")]
    static = {}
    if gpu_paths:
        facts = gather(core.available_devices, check_bridge=True)
        static = refusals(facts, opts.batch, spec.resize == "letterbox", opts.device, opts.va_device)
    refused: dict[str, list[str]] = {}
    sinks = _sinks(opts, spec.labels)
    try:
        for name in candidates:
            if name in static:
                refused[name] = static[name]
                continue
            front = front_for(name)
            try:
                devices = _devices(core, opts.device, front)
            except ModelError as e:  # e.g. zero-copy needs a GPU OpenVINO does not see
                if opts.path != "auto":
                    raise
                refused.setdefault(name, []).append(str(e))
                continue
            for device in devices:
                model = WrappedModel(core, spec, front.input_kind, opts.batch, front.memory_type)
                pipeline = Pipeline(model, front, device, opts.nireq, opts.threshold, sinks,
                                    keep_pictures=bool(opts.output), va_device=opts.va_device,
                                    progress=opts.progress, config=opts.ov_config,
                                    decode_threads=opts.decode_threads)
                try:
                    result = pipeline.run(opts.inputs, opts.max_frames)
                except PathUnavailable as e:
                    for path, why in e.reasons.items():
                        refused.setdefault(path, []).extend(why)
                    if not opts.quiet and opts.path == "auto":
                        log(f"{name} path refused on {device}: {'; '.join(e.reasons.get(name, [str(e)]))}; "
                            "trying the next")
                    continue
                choice = PathChoice(name, refused)
                run = DetectRun(result, choice, pipeline)
                threads = pipeline.decode_threads if name == "software" else None
                run.report = build_report(result, choice, model, pipeline.nireq, threads)
                _name_outputs(run.report, sinks)
                if opts.report:
                    write_report(run.report, opts.report)
                return run
            if opts.path != "auto":
                break
    finally:
        for sink in sinks:
            sink.close()
    raise PathUnavailable(refused)
