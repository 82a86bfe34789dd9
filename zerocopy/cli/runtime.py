"""What every command that runs a detector shares: where its results go (`Outputs`), driving its events into the
sinks and writing the report (`drive`), claiming the output files, stopping on Ctrl-C and SIGTERM, saying each
refusal, the broker's publisher, and the summary and exit code at the end (`finish`)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from zerocopy.cli.options import EXIT_FAIL, EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED
from zerocopy.errors import ConfigError, counted
from zerocopy.pipeline import RunResult
from zerocopy.pipeline.events import InputBegin
from zerocopy.publish import MqttPublisher, MqttTarget
from zerocopy.refusals import PathChoice, summary
from zerocopy.report import write_report
from zerocopy.sinks.drive import Progress, commit, discard, feed, settle
from zerocopy.sinks.files import STDOUT, OutputError, Target, claim
from zerocopy.sinks.video import output_names
from zerocopy.sources import expand_inputs


@dataclass(frozen=True, kw_only=True)
class Outputs:
    """Where a run's results go and how much of the inputs it reads: the caller's side of a run."""

    json: str | None = None
    output: str | None = None  # the annotated MP4
    report: str | None = None
    max_frames: int | None = None
    parallel: bool = False
    progress: Progress | None = None
    events: str | None = None  # object events as JSON Lines (--track)
    cameras: tuple[str, ...] | None = None  # each input's name in events and topics
    publisher: Any = None  # publish.MqttPublisher: events (and detections) to a broker
    publish_detections: bool = False


@dataclass
class DetectRun:
    result: RunResult
    choice: PathChoice
    report: dict = field(default_factory=dict)


def drive(detector, inputs: list[str], out: Outputs, sinks: list, name_outputs) -> DetectRun:
    """Feed a `Detector`'s (or `Processor`'s) run over `inputs` into `sinks` and close them, then make the
    report, let `name_outputs(report, sinks)` name each input's files in it, and write it.

    The outputs are renamed into place together at the end (docs/unattended.md, "Outputs"): an output that
    cannot be written (`OutputError`: a full disk, an I/O error) removes every temporary of the run and
    renames none, so each previous file stays as it was; the report is renamed into place only if an input
    began (a run that fails before its first frame keeps the previous report)."""
    began = False

    def saw(event) -> None:
        nonlocal began
        began = began or isinstance(event, InputBegin)

    failure: BaseException | None = None
    try:  # the time spent writing the outputs is the detector's "consumer" time: the report's `sinks`
        feed(detector.events(inputs, max_frames=out.max_frames, keep_images=bool(out.output),
                             parallel=out.parallel, cameras=out.cameras), sinks, out.progress, observe=saw)
    except BaseException as e:  # noqa: BLE001 - raised again below, once the outputs are closed
        failure = e
    try:
        settle(sinks)  # each file complete in its temporary, nothing renamed yet
    except OutputError as e:
        failure = failure if isinstance(failure, OutputError) else e
    finally:
        if out.publisher is not None:
            out.publisher.close()  # what is queued goes out within its timeout; the rest is counted
    report, staged_report = {}, None
    if failure is None:
        try:  # whatever is raised here (a full disk, a bug, a second Ctrl-C), the sinks are still closed below
            report = detector.report()
            if out.publisher is not None:
                report["publish"] = out.publisher.stats()
            name_outputs(report, sinks)
            if out.report:
                staged_report = write_report(report, out.report)
        except BaseException as e:  # noqa: BLE001 - raised again below
            failure = e
    if isinstance(failure, OutputError):
        discard(sinks)
        raise failure
    commit(sinks)  # a second Ctrl-C or a bug (raised below) still keeps what was written whole
    if staged_report is not None:
        staged_report.finish(keep=began)
    if failure is not None:
        raise failure
    return DetectRun(detector.result(), detector.choice, report)


def given_inputs(args) -> list[str]:
    """The inputs on the command line, folders expanded (once: what claims the outputs, names the cameras and
    runs all use); a folder without videos is one line, before any work."""
    return expand_inputs(list(args.inputs))


def claim_outputs(args, inputs: Sequence[str], videos: Sequence[tuple[str, str | None]] | None = None,
                  others: Sequence[tuple[str, str | None]] = ()):
    """Every file the run will write (`--output`'s per-input names included), checked against the others
    and the `inputs` (expanded), and locked until the run ends (sinks/files.py): refused before any work.
    `videos`: the (flag, file) of each video written per input (default: `--output`'s); `others`: more files."""
    on_stdout = [option for option, target in (("--json", args.json), ("--report", args.report), *others)
                 if target == STDOUT]
    if len(on_stdout) > 1:
        raise ConfigError(on_stdout[1].lstrip("-"), f"cannot write {on_stdout[1]} -: {on_stdout[0]} - writes to stdout "
                          "too")
    targets = [Target("--json", args.json, args.json), Target("--report", args.report, args.report)]
    targets += [Target(option, given, given) for option, given in others if given]
    for option, given in [("--output", args.output)] if videos is None else videos:
        if given:
            targets += [Target(option, given, p) for p in output_names(given, len(inputs))]
    return claim(targets, list(inputs))


@dataclass
class Stop:
    """Which signal stopped the run (None: none did); the exit code follows it (130, 143)."""

    signal: int | None = None


@contextlib.contextmanager
def stop_on_signals(stop: Callable[[], None]):
    """The first Ctrl-C or SIGTERM (`docker stop`, systemd) calls `stop()`: the run ends after the
    frames in flight and its outputs complete. A second Ctrl-C interrupts at once."""
    seen = Stop()
    if threading.current_thread() is not threading.main_thread():
        yield seen
        return

    def handler(signum, frame):
        if seen.signal is not None:
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            return  # a repeated SIGTERM: the stop under way goes on
        seen.signal = signum
        stop()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield seen
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def refusal_teller(args, say: Callable[[str], None]):
    """With --verbose, what `Detector(on_refusal=...)` calls each time `auto` moves on; else None."""
    if not args.verbose:
        return None

    def on_refusal(name, device, why):
        say(f"{name} path refused on {device}: {'; '.join(why)}; trying the next")
    return on_refusal


def open_publisher(url: str, ca: str | None, node: str):
    """The MQTT publisher for `--publish` and serve's `[publish]` (connecting in the background: a broker that
    is down delays nothing); its caller says "publishing events to" when the run is ready."""
    return MqttPublisher(MqttTarget.parse(url, ca=ca), node=node)


def finish(run: DetectRun, args, say: Callable[[str], None], stopped: Stop, what: str) -> int:
    """After a run: the summary on stderr (the path and why better ones were refused, damaged or failed
    inputs, `what` was found with the speed and CPU), and the exit code."""
    report, result = run.report, run.result
    if run.choice.reasons and not args.quiet and result.frames:
        if args.verbose:
            for path, reasons in run.choice.reasons.items():
                say(f"{path} refused: {'; '.join(reasons)}")
        say(f"path: {run.choice.name}, {report['runs_on']} (better paths "
            f"refused: {summary(run.choice.reasons)}; `zerocopy doctor` explains)")
    for outcome in result.inputs:
        if outcome.damage.damaged:
            say(f"{outcome.source}: damaged stream, {counted(outcome.frames, 'frame')} processed: "
                f"{outcome.damage.summary()}")
        if outcome.error:
            say(outcome.error)
    if not args.quiet and result.frames:
        say(f"{counted(report['frames'], 'frame')}, {what}, {report['fps']} fps, "
            f"CPU {report['cpu']['percent']}% on the {run.choice.name} path ({report['device']}, "
            f"nireq {report['nireq']}, batch {report['batch']})")
        if report.get("latency"):
            say(f"latency from a frame's arrival to its result: p50 {report['latency']['p50_ms']:.0f} ms, "
                f"p95 {report['latency']['p95_ms']:.0f} ms")
        sinks = report.get("sinks") or {}
        if args.output and sinks.get("share", 0) >= 0.2:
            say(f"writing the annotated video took {round(100 * sinks['share'])}% of the time (without it: roughly "
                f"{float(format(sinks['fps_without'], '.2g')):g} fps; leave out --output to measure the pipeline "
                "alone)")
    tracking, published = report.get("tracking"), report.get("publish")
    if tracking and not args.quiet:
        labels = ", ".join(f"{label} {t['objects']} (mean {t['mean_dwell_s']} s)"
                           for label, t in tracking["per_label"].items())
        say(f"tracked {tracking['objects']} object(s){': ' + labels if labels else ''}")
    if not args.quiet:
        for line in analytics_lines(report):
            say(line)
    if published and (not args.quiet or published["dropped"] or not published["published"]):
        trouble = f" (last error: {published['last_error']})" if published.get("last_error") else ""
        say(f"published {published['published']} message(s) to {published['target']}, "
            f"{published['dropped']} dropped{trouble}")
    if result.interrupted:
        say("interrupted; everything written so far is complete")
        return EXIT_TERMINATED if stopped.signal == signal.SIGTERM else EXIT_INTERRUPTED
    undelivered = bool(published and published["dropped"] and not published["published"])  # the broker never took one
    return EXIT_FAIL if undelivered or any(o.error for o in result.inputs) else EXIT_OK


def analytics_lines(report: dict) -> list[str]:
    """What the zones, lines, motion gate and filters did, a line each (from the run report's sections)."""
    out = []
    for camera, zones in (report.get("zones") or {}).get("entered", {}).items():
        said = "; ".join(f"{zone}: " + ", ".join(f"{label} {n}" for label, n in labels.items())
                         for zone, labels in zones.items())
        out.append(f"{camera}: entered zones: {said}")
    for camera, lines in (report.get("lines") or {}).get("crossings", {}).items():
        said = "; ".join(f"{line}: in " + (", ".join(f"{label} {n}" for label, n in ways["in"].items()) or "0")
                         + ", out " + (", ".join(f"{label} {n}" for label, n in ways["out"].items()) or "0")
                         for line, ways in lines.items())
        out.append(f"{camera}: crossed {said}")
    if (filters := report.get("filters")) is not None:
        out.append(f"filters dropped {filters['dropped']} box(es)" + "".join(
            f"; {label}: " + ", ".join(f"{key} {n}" for key, n in keys.items())
            for label, keys in filters["per_label"].items()))
    return out
