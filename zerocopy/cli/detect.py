"""`zerocopy detect`: a `Detector` from the flags, its events into the sinks the flags ask for, the
report, and a summary on stderr. The CLI is a client of the API: it adds only outputs and Ctrl-C."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from zerocopy.api import Detector
from zerocopy.cli.options import config_from
from zerocopy.cli.progress import progress_factory
from zerocopy.cli.runtime import (
    DetectRun,
    Outputs,
    claim_outputs,
    drive,
    finish,
    given_inputs,
    open_publisher,
    refusal_teller,
    stop_on_signals,
)
from zerocopy.errors import ConfigError, counted
from zerocopy.names import NAME_RULE, camera_name, is_name
from zerocopy.sinks.drive import made_sinks
from zerocopy.sinks.files import check_writable, stdout_alias
from zerocopy.sinks.jsonl import EventsSink, JsonlSink
from zerocopy.sinks.overlay import Overlay
from zerocopy.sinks.publish import MqttSink
from zerocopy.sinks.video import VideoSink, check_video_target


def _sinks(out: Outputs, labels, inputs: int, overlay: Overlay | None = None):
    return made_sinks(
        lambda: JsonlSink(out.json, labels, with_source=inputs > 1) if out.json else None,
        lambda: EventsSink(out.events) if out.events else None,
        lambda: MqttSink(out.publisher, labels, out.cameras or (), detections=out.publish_detections)
        if out.publisher is not None else None,
        lambda: VideoSink(out.output, labels, inputs=inputs, overlay=overlay) if out.output else None)


def _name_outputs(report: dict, sinks) -> None:
    """Each input's entry in the report names its annotated video."""
    for sink in sinks:
        if isinstance(sink, VideoSink):
            written = list(sink.outputs)
            for entry in report["inputs"]:
                match = next((i for i, (source, _) in enumerate(written) if source == entry["source"]), None)
                if match is not None:
                    entry["output"] = written.pop(match)[1]


def run_detect(detector, inputs: Sequence[str], out: Outputs) -> DetectRun:
    """Run `detector` over the inputs (folders expanded: `given_inputs`) into the sinks `out` asks for, and write
    the report.

    The path is tried in `auto` order until one commits (its first frame went through inference);
    a refused one writes nothing. The sinks are made once and closed here, whichever path ran.
    """
    inputs = list(inputs)
    return drive(detector, inputs, out, _sinks(out, detector.spec.labels, len(inputs), Overlay.of(detector.config)),
                 _name_outputs)


def cmd_detect(args, say: Callable[[str], None]) -> int:
    args.json, args.report = stdout_alias(args.json), stdout_alias(args.report)
    args.events = stdout_alias(args.events)
    for option, target in (("--json", args.json), ("--output", args.output), ("--report", args.report),
                           ("--events", args.events)):
        check_writable(option, target)
    if args.output:
        check_video_target(args.output)
    if args.anonymise and not (args.output or args.snapshots):
        raise ConfigError("anonymise", "--anonymise changes the pictures written: give --output FILE.mp4 or "
                          "--snapshots FOLDER too")
    if (args.mqtt_ca or args.publish_detections) and not args.publish:
        option = "--mqtt-ca" if args.mqtt_ca else "--publish-detections"
        raise ConfigError(option.lstrip("-"), f"{option} goes with --publish URL")
    config = config_from(args)  # (`anonymise` with `detect_fps` is refused there: the frames between would show)
    if (args.events or args.publish) and not config.track:
        config = config.replace(track=True)  # events come from tracked objects
    inputs = given_inputs(args)
    cameras = _camera_names(args, inputs)
    out = Outputs(json=args.json, output=args.output, report=args.report, max_frames=args.max_frames,
                  parallel=args.parallel, progress=progress_factory(args.quiet), events=args.events, cameras=cameras,
                  publish_detections=args.publish_detections)
    # a first use says what it downloads
    with claim_outputs(args, inputs, others=[("--events", args.events)]), \
            Detector(config=config, log=say, on_refusal=refusal_teller(args, say)) as detector, \
            stop_on_signals(detector.stop) as stopped:
        if args.publish:
            out = replace(out, publisher=open_publisher(args.publish, args.mqtt_ca, detector.config.node_name))
            say(f"publishing events to {out.publisher.target}")
        run = run_detect(detector, inputs, out)
    return finish(run, args, say, stopped, counted(run.report['detections'], 'detection'))


def _camera_names(args, inputs: Sequence[str]) -> tuple[str, ...]:
    """Each input's name in events and topics: `--name` (once per input), else its file stem or URL's last part."""
    if not args.name:
        return tuple(camera_name(s) for s in inputs)
    if len(args.name) != len(inputs):
        raise ConfigError("name", f"--name names each input: {len(inputs)} inputs, {len(args.name)} names")
    bad = [n for n in args.name if not is_name(n)]
    if bad:
        raise ConfigError("name", f"--name {bad[0]!r}: use {NAME_RULE} (it becomes an MQTT topic level)")
    return tuple(args.name)


