"""`zerocopy process`: a `Processor` from the flags, its events into the map sinks the flags ask for (the
map blended over the video, a grayscale mask video, `.npy` per frame, JSON Lines with each map summed
up), the report, and a summary on stderr. Like `detect`, a client of the API; every output goes through
sinks/files.py's checks, locks and temporaries."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from zerocopy.cli.detect import DetectRun, Outputs, _progress_factory, stop_on_signals
from zerocopy.errors import ZeroCopyError
from zerocopy.sinks.drive import feed
from zerocopy.sources import expand_inputs

VIDEO_OPTIONS = (("--output", "output"), ("--mask-output", "mask_output"))  # flag, args name


@dataclass(frozen=True)
class MapOutputs:
    """Where `process` writes the maps besides `Outputs`' JSON Lines and report (`output` is the blend)."""

    mask_output: str | None = None
    npy: str | None = None


def _sinks(out: Outputs, maps: MapOutputs, names, inputs: int) -> list:
    from zerocopy.sinks.jsonl import JsonlSink
    from zerocopy.sinks.maps import MapVideoSink, NpySink

    sinks: list = []
    try:
        if out.json:
            sinks.append(JsonlSink(out.json, names, with_source=inputs > 1))
        if maps.npy:
            sinks.append(NpySink(maps.npy, inputs))
    except OSError as e:
        raise ZeroCopyError(f"cannot write {e.filename}: {e.strerror or e}") from None
    for target, mode in ((out.output, "blend"), (maps.mask_output, "mask")):
        if target:
            sinks.append(MapVideoSink(target, names, inputs, mode))
    return sinks


def run_process(processor, inputs: Sequence[str], out: Outputs, maps: MapOutputs) -> DetectRun:
    """Run `processor` over the inputs into the sinks asked for, and write the report (each input's entry
    names its `output` and `mask_output` videos)."""
    from zerocopy.report import write_report
    from zerocopy.sinks.maps import MapVideoSink

    inputs = expand_inputs(list(inputs))
    sinks = _sinks(out, maps, processor.names or (), len(inputs))
    try:
        feed(processor.events(inputs, max_frames=out.max_frames, keep_images=bool(out.output),
                              parallel=out.parallel), sinks, out.progress)
    finally:
        for sink in sinks:
            sink.close()
    report = processor.report()
    for sink in sinks:
        if isinstance(sink, MapVideoSink):
            key = "output" if sink.mode == "blend" else "mask_output"
            files = dict(sink.outputs)
            for entry in report["inputs"]:
                if entry["source"] in files:
                    entry[key] = files[entry["source"]]
    if out.report:
        write_report(report, out.report)
    return DetectRun(processor.result(), processor.choice, report)


def claim_map_outputs(args):
    """Every file the run will write, checked against the others and the inputs and locked (sinks/files.py)."""
    from zerocopy.sinks.files import STDOUT, Target, claim
    from zerocopy.sinks.video import output_names

    if args.json == STDOUT and args.report == STDOUT:
        raise ZeroCopyError("cannot write --report -: --json - writes to stdout too")
    try:
        inputs = expand_inputs(list(args.inputs))
    except ZeroCopyError:
        inputs = list(args.inputs)  # the run reports bad inputs itself
    targets = [Target("--json", args.json, args.json), Target("--report", args.report, args.report),
               Target("--npy", args.npy, args.npy)]
    for option, dest in VIDEO_OPTIONS:
        given = vars(args)[dest]
        if given:
            targets += [Target(option, given, p) for p in output_names(given, len(inputs))]
    return claim(targets, inputs)


def _check_targets(args) -> None:
    from zerocopy.sinks.files import check_writable, stdout_alias
    from zerocopy.sinks.maps import check_npy_folder
    from zerocopy.sinks.video import CONTAINERS

    args.json, args.report = stdout_alias(args.json), stdout_alias(args.report)
    for option, target in (("--json", args.json), ("--report", args.report), ("--output", args.output),
                           ("--mask-output", args.mask_output)):
        check_writable(option, target)
    for option, dest in VIDEO_OPTIONS:
        target = vars(args)[dest]
        if target and (target.endswith(("/", "\\")) or not target.lower().endswith(CONTAINERS)):
            raise ZeroCopyError(f"cannot write {option} {target}: name a video file ending in {', '.join(CONTAINERS)}")
    if args.npy:
        check_npy_folder(args.npy)


def cmd_process(args, say: Callable[[str], None]) -> int:
    import signal

    from zerocopy.cli.options import (
        EXIT_FAIL,
        EXIT_INTERRUPTED,
        EXIT_OK,
        EXIT_TERMINATED,
        PROCESS_SETTINGS,
        config_from,
    )
    from zerocopy.process import Processor
    from zerocopy.refusals import summary

    _check_targets(args)
    on_refusal = None
    if args.verbose:
        def on_refusal(name, device, why):
            say(f"{name} path refused on {device}: {'; '.join(why)}; trying the next")
    out = Outputs(args.json, args.output, args.report, args.max_frames, args.parallel, _progress_factory(args.quiet))
    config = config_from(args, ("model", *PROCESS_SETTINGS))
    with claim_map_outputs(args), Processor(config=config, detector=args.detector, log=say,
                                            on_refusal=on_refusal) as processor, \
            stop_on_signals(processor.stop) as stopped:
        run = run_process(processor, args.inputs, out, MapOutputs(args.mask_output, args.npy))
    report, result = run.report, run.result
    if run.choice.reasons and not args.quiet and result.frames:
        say(f"path: {run.choice.name} (better paths refused: {summary(run.choice.reasons)}; "
            "`zerocopy doctor` explains)")
    for outcome in result.inputs:
        if outcome.damage.damaged:
            say(f"{outcome.source}: damaged stream, {outcome.frames} frames processed: {outcome.damage.summary()}")
        if outcome.error:
            say(outcome.error)
    if not args.quiet and result.frames:
        on = f" on {report['detections']} {processor.detector} boxes" if processor.detector else ""
        say(f"{report['frames']} frames mapped by {report['process']['model']}{on}, {report['fps']} fps, "
            f"CPU {report['cpu']['percent']}% on the {run.choice.name} path ({report['device']})")
    if result.interrupted:
        say("interrupted; everything written so far is complete")
        return EXIT_TERMINATED if stopped.signal == signal.SIGTERM else EXIT_INTERRUPTED
    return EXIT_FAIL if any(o.error for o in result.inputs) else EXIT_OK
