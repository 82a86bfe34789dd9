"""`zerocopy process`: a `Processor` from the flags, its events into the map sinks the flags ask for (the
map blended over the video, a grayscale mask video, `.npy` per frame, JSON Lines with each map summed
up), the report, and a summary on stderr. Like `detect`, a client of the API; every output goes through
sinks/files.py's checks, locks and temporaries."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from zerocopy.cli.options import PROCESS_SETTINGS, config_from
from zerocopy.cli.progress import progress_factory
from zerocopy.cli.runtime import (
    DetectRun,
    Outputs,
    claim_outputs,
    drive,
    finish,
    given_inputs,
    refusal_teller,
    stop_on_signals,
)
from zerocopy.errors import ConfigError, ZeroCopyError
from zerocopy.process import Processor
from zerocopy.sinks.drive import made_sinks
from zerocopy.sinks.files import check_writable, stdout_alias
from zerocopy.sinks.jsonl import JsonlSink
from zerocopy.sinks.map_videos import MapVideoSink, NpySink, check_npy_folder
from zerocopy.sinks.video import CONTAINERS


@dataclass(frozen=True)
class MapOutputs:
    """Where `process` writes the maps besides `Outputs`' JSON Lines and report (`output` is the blend)."""

    mask_output: str | None = None
    npy: str | None = None
    anonymise: str | None = None  # a style: --output hides where the map is (person shapes) instead of tinting


def _sinks(out: Outputs, maps: MapOutputs, names, inputs: int) -> list:
    blend = "anonymise" if maps.anonymise else "blend"
    return made_sinks(
        lambda: JsonlSink(out.json, names, with_source=inputs > 1) if out.json else None,
        lambda: NpySink(maps.npy, inputs) if maps.npy else None,
        lambda: MapVideoSink(out.output, names, inputs, blend, maps.anonymise or "pixelate")
        if out.output else None,
        lambda: MapVideoSink(maps.mask_output, names, inputs, "mask", option="--mask-output")
        if maps.mask_output else None)


def run_process(processor, inputs: Sequence[str], out: Outputs, maps: MapOutputs) -> DetectRun:
    """Run `processor` over the inputs (folders expanded: `given_inputs`) into the sinks asked for, and write the
    report."""
    inputs = list(inputs)
    return drive(processor, inputs, out, _sinks(out, maps, processor.names or (), len(inputs)), _name_outputs)


def _name_outputs(report: dict, sinks) -> None:
    """Each input's entry in the report names its `output` and `mask_output` videos."""
    for sink in sinks:
        if isinstance(sink, MapVideoSink):
            files = dict(sink.outputs)
            for entry in report["inputs"]:
                if entry["source"] in files:
                    entry["mask_output" if sink.mode == "mask" else "output"] = files[entry["source"]]


def _check_targets(args, videos: list[tuple[str, str | None]]) -> None:
    """Refuse, before any work, an output that cannot be written (the videos: by their name too)."""
    args.json, args.report = stdout_alias(args.json), stdout_alias(args.report)
    for option, target in (("--json", args.json), ("--report", args.report), *videos):
        check_writable(option, target)
    for option, target in videos:
        if target and (target.endswith(("/", "\\")) or not target.lower().endswith(CONTAINERS)):
            raise ZeroCopyError(f"cannot write {option} {target}: name a video file ending in {', '.join(CONTAINERS)}")
    if args.npy:
        check_npy_folder(args.npy)


def cmd_process(args, say: Callable[[str], None]) -> int:
    videos = [("--output", args.output), ("--mask-output", args.mask_output)]
    _check_targets(args, videos)
    if args.anonymise and not args.output:
        raise ConfigError("anonymise", "--anonymise changes the --output video: give --output FILE.mp4 too")
    maps = MapOutputs(args.mask_output, args.npy, args.anonymise_style if args.anonymise else None)
    out = Outputs(json=args.json, output=args.output, report=args.report, max_frames=args.max_frames,
                  parallel=args.parallel, progress=progress_factory(args.quiet))
    config = config_from(args, ("model", *PROCESS_SETTINGS))
    # the outputs are claimed before the model is pulled (a `with` enters its items in order), as detect does
    inputs = given_inputs(args)
    with claim_outputs(args, inputs, videos, [("--npy", args.npy)]), \
            Processor(config=config, detector=args.detector, log=say, on_refusal=refusal_teller(args, say)) \
            as processor, stop_on_signals(processor.stop) as stopped:
        run = run_process(processor, inputs, out, maps)
    on = f" on {run.report['detections']} {processor.detector} boxes" if processor.detector else ""
    return finish(run, args, say, stopped, f"mapped by {run.report['process']['model']}{on}")
