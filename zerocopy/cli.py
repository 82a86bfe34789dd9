"""`zerocopy` command line: detect, models."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from zerocopy import __version__
from zerocopy.catalog import CATALOG, DEFAULT_MODEL
from zerocopy.errors import PathUnavailable, ZeroCopyError
from zerocopy.paths import PATHS

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 0, 1, 2, 130, 141

# Refusals as a user needs them on every run: the cause that matters, short; most fundamental first.
# The full reasons are in --report, `zerocopy doctor` and --verbose.
_SHORT_REASONS = (
    ("lacks HWAccel(is_hw_owned)", "PyAV too old for VA-API"),
    ("PyAV was built without VA-API", "no VA-API in PyAV"),
    ("OpenVINO sees no GPU", "no GPU"),
    ("no /dev/dri render node", "no render node"),
    ("does not exist", "no such render node"),
    ("cannot open the VA device", "the VA device cannot be opened"),
    ("the GPU cannot decode", "the GPU cannot decode this codec"),
    ("VA-API cannot decode", "the GPU cannot decode this codec"),
    ("native bridge:", "no native bridge"),
)


def say(msg: str) -> None:
    print(f"zerocopy: {msg}", file=sys.stderr, flush=True)


def short_refusals(reasons: dict[str, list[str]], most: int = 2) -> str:
    """The one or two reasons that matter, each once: "no VA-API in PyAV; no GPU"."""
    found: list[tuple[int, str]] = []
    for why in (w for ws in reasons.values() for w in ws):
        rank, short = next(((i, s) for i, (key, s) in enumerate(_SHORT_REASONS) if key in why),
                           (len(_SHORT_REASONS), why.split(": ")[0][:80]))
        if short not in (s for _, s in found):
            found.append((rank, short))
    return "; ".join(s for _, s in sorted(found, key=lambda f: f[0])[:most])


def _positive(kind):
    def parse(text: str):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if v <= 0:
            raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
        return v
    return parse


def _threads(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be ≥ 0, got {text}")
    return v


_DECODE_THREADS_HELP = ("FFmpeg threads for CPU decoding on the software path; 0 lets FFmpeg use every core "
                        "(more FPS on heavy video; on light video, more CPU per frame and fewer FPS). Default: "
                        "the cores CPU inference does not use (1 on 2 cores), every core when inference runs on a GPU; "
                        "with --parallel, one per input (the cores divided among the inputs when inference "
                        "runs on a GPU)")


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value.strip()


def _threshold(text: str) -> float:
    v = _positive(float)(text)
    if v > 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {text}")
    return v


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows a default only when there is one and the help text does not already describe it."""

    def _get_help_string(self, action):
        if action.default in (None, [], False) or "default:" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def _add_threshold(parser: argparse.ArgumentParser) -> None:
    """The same option, and the same default, for detect and bench."""
    parser.add_argument("--threshold", type=_threshold,
                        help="minimum detection score (default: the model's, 0.5 for your own models)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="zerocopy",
        description="Run OpenVINO models over video with the fewest copies the machine allows: "
        "VA-API decode, scale_vaapi and remote NV12 tensors on Intel iGPUs, a copy path and a "
        "software path where that cannot run.",
    )
    p.add_argument("--version", action="version", version=f"zerocopy {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    d = sub.add_parser("detect", help="detect objects in videos",
                       description="Detect objects in one or more videos, frame by frame.",
                       formatter_class=_HelpFormatter)
    d.add_argument("inputs", nargs="+", metavar="INPUT", help="video files, folders of them, or stream URLs")
    d.add_argument("--model", default=DEFAULT_MODEL,
                   help=f"catalogue name ({', '.join(CATALOG)}) or an IR/ONNX/TFLite file")
    d.add_argument("--labels", metavar="FILE", help="class names, one per line (for your own model)")
    d.add_argument("--decoder", choices=("anchor-ssd", "detection-output", "yolo"),
                   help="how to decode the model's outputs (default: from the catalogue or the output shapes)")
    d.add_argument("--resize", choices=("letterbox", "stretch"),
                   help="keep the aspect ratio with black bars, or fill the input (default: per model)")
    d.add_argument("--path", choices=("auto", *PATHS), default="auto",
                   help="auto tries zero-copy, copy, then software, and says why each better path "
                   "could not run; baseline is the OpenCV decode+resize pipeline to measure against")
    d.add_argument("--device", default="auto", help="OpenVINO device: auto (GPU if present, else CPU), GPU, CPU")
    d.add_argument("--va-device", metavar="NODE",
                   help="VA-API render node for the GPU paths (default: the first Intel /dev/dri/renderD*)")
    d.add_argument("--nireq", type=_positive(int),
                   help="inference requests in flight (default: the device's optimum, at least 2)")
    d.add_argument("--ov-config", type=_key_value, action="append", default=[], metavar="KEY=VALUE",
                   help="an OpenVINO property for compiling (repeatable), e.g. INFERENCE_NUM_THREADS=4; "
                   "default: PERFORMANCE_HINT=THROUGHPUT, and on the CPU half the cores for inference")
    d.add_argument("--decode-threads", type=_threads, metavar="N", help=_DECODE_THREADS_HELP)
    d.add_argument("--batch", type=_positive(int), default=1, help="frames per inference request")
    d.add_argument("--realtime", action="store_true",
                   help="pace file inputs at their own frame rate, as a camera delivers frames (live sources "
                   "pace themselves); the report then gives each frame's arrival-to-result latency")
    d.add_argument("--reconnect", action="store_true",
                   help="re-open a network source or camera that drops, with back-off (0.5 s doubling to 8 s); "
                   "frames go on numbered in order, and the report counts each gap")
    d.add_argument("--reconnect-timeout", type=_positive(float), default=60.0, metavar="SECONDS",
                   help="with --reconnect: give up on a source after this long without a frame")
    _add_threshold(d)
    d.add_argument("--json", metavar="FILE", help="write JSON Lines, one line per frame ('-' for stdout)")
    d.add_argument("--output", metavar="FILE.mp4", help="write the video with the detections drawn on it")
    d.add_argument("--report", metavar="FILE", help="write a JSON report: path, reasons, timings, CPU")
    d.add_argument("--max-frames", type=_positive(int), metavar="N", help="stop after N frames of each input")
    d.add_argument("--parallel", action="store_true",
                   help="decode every input at once (each on its own thread) into one model and request queue; "
                   "results per input in that input's order, one input ending or failing does not stop the others")
    d.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    d.add_argument("--verbose", action="store_true",
                   help="say every reason each better path was refused (the summary names the main ones)")

    b = sub.add_parser("bench", help="measure every path that can run here against the baseline",
                       description="Run each path (and the OpenCV baseline) over the same input, interleaved "
                       "A B A B so machine drift hits all alike, each run in its own process, warm-up frames "
                       "excluded. Reports medians of FPS, per-stage latency, CPU per frame (also split by "
                       "thread: decoding, the Python main thread, inference and other workers), peak memory, "
                       "agreement with the software path, and the decode-only and inference-only limits.",
                       formatter_class=_HelpFormatter)
    b.add_argument("input", metavar="INPUT", help="a video file")
    b.add_argument("--paths", type=_path_list, help="comma-separated paths (default: all that can run + baseline)")
    b.add_argument("--model", default=DEFAULT_MODEL, help="catalogue name or model file")
    b.add_argument("--device", default="auto", help="OpenVINO device")
    b.add_argument("--nireq", type=_positive(int), help="requests in flight (default: the device's optimum, ≥ 2)")
    b.add_argument("--ov-config", type=_key_value, action="append", default=[], metavar="KEY=VALUE",
                   help="an OpenVINO property for compiling (repeatable)")
    b.add_argument("--decode-threads", type=_threads, metavar="N", help=_DECODE_THREADS_HELP)
    b.add_argument("--batch", type=_positive(int), default=1,
                   help="frames per inference request, for every path (zero-copy takes batch 1 only)")
    b.add_argument("--frames", type=_positive(int), default=300,
                   help="measured frames per run (a shorter input: what it has after the warm-up, with a notice)")
    b.add_argument("--warmup", type=_positive(int), default=30, help="frames run before measuring")
    b.add_argument("--repeat", type=_positive(int), default=3, help="runs per path (medians are reported)")
    b.add_argument("--streams", choices=("auto",),
                   help="stream density instead: per path, the most copies of INPUT, each paced at its native rate "
                   "and all at once into one model, kept in real time (every frame, p95 latency ≤ 1 s); "
                   "--frames is then the frames per stream")
    b.add_argument("--max-streams", type=_positive(int), default=16, metavar="N",
                   help="with --streams auto: try at most this many streams")
    _add_threshold(b)
    b.add_argument("--json", metavar="FILE", help="write the results as JSON ('-' for stdout)")
    b.add_argument("--markdown", metavar="FILE", help="write a Markdown table")
    b.add_argument("--plot", metavar="FILE.png", help="write a PNG: preprocessing time, CPU per frame, FPS")

    doc = sub.add_parser("doctor", help="what this machine offers each path, and a verdict per path",
                         description="Check PyAV/FFmpeg, render nodes and VA display, OpenVINO devices, OpenCL "
                         "and the native bridge, and say for each path whether it can run and why not. "
                         "Always exits 0.")
    doc.add_argument("--json", action="store_true", help="print the stable JSON form")

    m = sub.add_parser("models", help="list or pull catalogue models")
    msub = m.add_subparsers(dest="models_command", metavar="ACTION")
    msub.add_parser("list", help="list the catalogue and what is cached")
    pull = msub.add_parser("pull", help="download, verify and cache catalogue models")
    pull.add_argument("names", nargs="*", metavar="NAME", help="models to pull (default: all)")
    return p


def _path_list(text: str) -> list[str]:
    names = [p.strip() for p in text.split(",") if p.strip()]
    bad = [p for p in names if p not in PATHS]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"unknown path(s) {', '.join(bad) or text!r}; choose from {', '.join(PATHS)}")
    return list(dict.fromkeys(names))


def cmd_bench(args) -> int:
    import json

    from zerocopy.bench.report import markdown, plot, table
    from zerocopy.bench.runner import BenchOptions, run_bench
    from zerocopy.sinks import check_writable

    if args.plot and Path(args.plot).suffix.lower() not in (".png", ".svg", ".pdf"):
        raise ZeroCopyError(f"cannot write --plot {args.plot}: name a .png, .svg or .pdf file")
    for option, target in (("--json", args.json), ("--markdown", args.markdown), ("--plot", args.plot)):
        check_writable(option, target)
    opts = BenchOptions(args.input, args.paths, args.model, args.device, args.nireq, args.frames, args.warmup,
                        args.repeat, args.threshold, dict(args.ov_config), args.decode_threads, args.batch)
    if args.streams:
        from zerocopy.bench.report import density_table, plot_density
        from zerocopy.bench.runner import stream_density

        result = stream_density(opts, args.max_streams, log=say)
        print(density_table(result))
        if args.plot:
            plot_density(result, args.plot)
            args.plot = None
        if args.markdown:
            Path(args.markdown).write_text(density_table(result) + "\n", encoding="utf-8")
            args.markdown = None
    else:
        result = run_bench(opts, log=say)
        print(table(result))
    if args.json == "-":
        print(json.dumps(result, indent=2))
    elif args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(markdown(result))
    if args.plot:
        plot(result, args.plot)
    return EXIT_OK if result.get("paths") or result.get("density") else EXIT_FAIL


def cmd_doctor(args) -> int:
    import json

    from zerocopy.doctor import collect, render

    info = collect()
    print(json.dumps(info, indent=2) if args.json else render(info))
    return EXIT_OK


def cmd_models(args) -> int:
    from zerocopy.catalog.fetch import cache_dir, cached_path, pull

    if args.models_command == "pull":
        names = args.names or list(CATALOG)
        for name in names:
            path = pull(name, log=say)
            print(f"{name}\t{path}")
        return EXIT_OK
    print(f"{'name':<10} {'input':<8} {'threshold':<9} {'cached':<7} suits")
    for e in CATALOG.values():
        mark = " (default)" if e.name == DEFAULT_MODEL else ""
        print(f"{e.name:<10} {e.size_text:<8} {e.threshold:<9} {'yes' if cached_path(e) else 'no':<7} {e.suits}{mark}")
        print(f"{'':<10} {e.description}; {e.source.licence}")
    print("which model for which footage, with the measured recall: docs/models.md")
    print(f"cache: {cache_dir()}")
    return EXIT_OK


def _progress_factory(quiet: bool):
    if quiet or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    def make(source: str, total: int | None, position: int = 0):
        return tqdm(total=total, desc=os.path.basename(source)[:30], unit="frame", leave=False,
                    file=sys.stderr, dynamic_ncols=True, position=position)
    return make


def _refuse_overwriting_inputs(args) -> None:
    """An output naming an input would destroy it while it is read: refuse before any work."""
    from zerocopy.sources import expand_inputs

    try:
        inputs = [Path(p) for p in expand_inputs(list(args.inputs)) if Path(p).is_file()]
    except ZeroCopyError:
        return  # the run reports bad inputs itself
    for option, target in (("--json", args.json), ("--output", args.output), ("--report", args.report)):
        if not target or target == "-" or not Path(target).exists():
            continue
        for p in inputs:
            if os.path.samefile(p, target):
                raise ZeroCopyError(f"cannot write {option} {target}: it is an input of this run")


@contextlib.contextmanager
def stop_on_sigint(stop):
    """The first Ctrl-C calls `stop()` (the run ends after the frames in flight, outputs complete);
    a second one interrupts at once."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    asked = threading.Event()

    def handler(signum, frame):
        if asked.is_set():
            raise KeyboardInterrupt
        asked.set()
        stop()

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def cmd_detect(args) -> int:
    from zerocopy.run import DetectOptions, make_detector, run_detect
    from zerocopy.sinks import check_writable
    from zerocopy.sinks.video import check_video_target

    for option, target in (("--json", args.json), ("--output", args.output), ("--report", args.report)):
        check_writable(option, target)
    if args.output:
        check_video_target(args.output)
    _refuse_overwriting_inputs(args)
    opts = DetectOptions(
        inputs=args.inputs, model=args.model, labels=args.labels, decoder=args.decoder, resize=args.resize,
        path=args.path, device=args.device, va_device=args.va_device, nireq=args.nireq, batch=args.batch,
        threshold=args.threshold, json=args.json, output=args.output, report=args.report,
        max_frames=args.max_frames, quiet=args.quiet, verbose=args.verbose, parallel=args.parallel,
        progress=_progress_factory(args.quiet),
        ov_config=dict(args.ov_config), decode_threads=args.decode_threads, realtime=args.realtime,
        reconnect=args.reconnect, reconnect_timeout=args.reconnect_timeout)
    detector = make_detector(opts, log=say)  # a first use says what it downloads
    with detector, stop_on_sigint(detector.stop):
        run = run_detect(opts, say, detector)
    report, result = run.report, run.result
    if run.choice.reasons and not args.quiet and result.frames:
        if args.verbose:
            for path, reasons in run.choice.reasons.items():
                say(f"{path} refused: {'; '.join(reasons)}")
        say(f"path: {run.choice.name} (better paths refused: {short_refusals(run.choice.reasons)}; "
            "`zerocopy doctor` explains)")
    for outcome in result.inputs:
        if outcome.damage.damaged:
            say(f"{outcome.source}: damaged stream, {outcome.frames} frames processed: {outcome.damage.summary()}")
        if outcome.error:
            say(outcome.error)
    if not args.quiet and result.frames:
        say(f"{report['frames']} frames, {report['detections']} detections, {report['fps']} fps, "
            f"CPU {report['cpu']['percent']}% on the {run.choice.name} path ({report['device']}, "
            f"nireq {report['nireq']}, batch {report['batch']})")
        if report.get("latency"):
            say(f"latency from a frame's arrival to its result: p50 {report['latency']['p50_ms']:.0f} ms, "
                f"p95 {report['latency']['p95_ms']:.0f} ms")
        sinks = report.get("sinks") or {}
        if args.output and sinks.get("share", 0) >= 0.2:
            say(f"writing the annotated video took {round(100 * sinks['share'])}% of the time (without it: roughly "
                f"{sinks['fps_without']} fps; leave out --output to measure the pipeline alone)")
    if result.interrupted:
        say("interrupted; everything written so far is complete")
        return EXIT_INTERRUPTED
    return EXIT_FAIL if any(o.error for o in result.inputs) else EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        if args.command == "detect":
            return cmd_detect(args)
        if args.command == "models":
            return cmd_models(args)
        if args.command == "doctor":
            return cmd_doctor(args)
        if args.command == "bench":
            return cmd_bench(args)
    except PathUnavailable as e:
        for path, reasons in e.reasons.items():
            for why in reasons:
                say(f"the {path} path cannot run here: {why}")
        return EXIT_FAIL
    except ZeroCopyError as e:
        say(str(e))
        return EXIT_FAIL
    except KeyboardInterrupt:
        say("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (e.g. `| head`): end quietly, as Unix tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except Exception as e:  # a bug: still one line, the traceback on request
        if os.environ.get("ZEROCOPY_DEBUG"):
            traceback.print_exc()
        say(f"internal error: {type(e).__name__}: {e} (set ZEROCOPY_DEBUG=1 for the traceback)")
        return EXIT_FAIL
    parser.print_help()
    return EXIT_USAGE


def entry() -> None:
    """The `zerocopy` command.

    A Ctrl-C before or during a run stops it (the run finishes the frames in flight, see
    `pipeline.stop_on_sigint`). Once `main` is done every output is closed, so the process ends at
    once (`os._exit`) instead of going through the interpreter's shutdown, where OpenVINO's and
    FFmpeg's native threads are torn down under Python's feet: a second Ctrl-C arriving then printed
    "Exception ignored …", and could even abort the process.
    """
    import signal

    from zerocopy.infer.telemetry import keep_openvino_quiet

    keep_openvino_quiet()
    done = False

    def on_sigint(signum, frame):
        if done:
            os._exit(EXIT_INTERRUPTED)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)
    try:
        code = main()
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    done = True
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(ValueError, OSError):  # a closed pipe (`| head`) included
            stream.flush()
    os._exit(code)
