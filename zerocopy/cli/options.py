"""The command line's grammar and exit codes. The run settings' flags are made from `RunConfig`'s
declarations (name, help, default, checks), so a setting is declared once and `detect`, `bench` and the
API agree."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from zerocopy import __version__
from zerocopy.catalog import CATALOG, IMAGE_MODELS
from zerocopy.config import PATHS, STYLES, Kind, RunConfig
from zerocopy.errors import ConfigError

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE, EXIT_TERMINATED = 0, 1, 2, 130, 141, 143
# Flags a setting is also known by (older names keep working).
ALIASES = {"postprocess": ("--decoder",), "anonymise": ("--anonymize",), "anonymise_style": ("--anonymize-style",),
           "zones": ("--zone",), "lines": ("--line",), "filters": ("--filter",)}
# The settings bench takes (it runs every path itself and measures whole files, not live sources).
BENCH_SETTINGS = ("model", "device", "nireq", "ov_config", "decode_threads", "batch", "threshold", "classes",
                  "classify", "max_rois", "min_presence", "detect_fps", "tiles", "motion", "motion_threshold",
                  "motion_mask", "motion_keepalive")
# The settings process takes besides its model (threshold and max_rois: for the detector of a box model).
PROCESS_SETTINGS = ("resize", "path", "device", "va_device", "nireq", "batch", "threshold", "max_rois", "tiles",
                    "decode_threads", "ov_config", "realtime", "reconnect", "reconnect_timeout", "retry_open")


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows a default only when there is one and the help text does not already describe it."""

    def _get_help_string(self, action):
        if action.default in (None, [], False) or "default:" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def _value(name: str, kind: Kind):
    """argparse's `type`: the text read as the setting reads it, and checked as the setting checks it."""

    def parse(text: str) -> Any:
        try:
            value = kind.parse(text)  # type: ignore[misc]
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e) if kind.repeat else f"not a number: {text!r}") from None
        if kind.repeat:
            return value
        try:
            return kind.check(name, value)
        except ConfigError:
            raise argparse.ArgumentTypeError(f"must be {kind.accepts}, got {text}") from None

    parse.__name__ = name  # argparse names the type in its error message
    return parse


def add_settings(parser: argparse.ArgumentParser, names: tuple[str, ...] | None = None) -> None:
    """One flag per `RunConfig` setting (or those `names`), `--decode-threads` for `decode_threads`."""
    for f in RunConfig.settings():
        if names is not None and f.name not in names:
            continue
        kind: Kind = f.metadata["kind"]
        flags = (f"--{f.name.replace('_', '-')}", *ALIASES.get(f.name, ()))
        common: dict[str, Any] = {"dest": f.name, "help": f.metadata["help"]}
        if kind.flag:
            parser.add_argument(*flags, action="store_true", **common)
        elif kind.choices:
            parser.add_argument(*flags, choices=kind.choices, default=f.default, **common)
        elif kind.repeat:
            parser.add_argument(*flags, type=_value(f.name, kind), action="append", default=[],
                                metavar=f.metadata["metavar"], **common)
        else:
            default = None if f.default is dataclasses.MISSING else f.default
            parser.add_argument(*flags, type=_value(f.name, kind), default=default,
                                metavar=f.metadata["metavar"], **common)


def config_from(args: argparse.Namespace, names: tuple[str, ...] | None = None) -> RunConfig:
    """The `RunConfig` the parsed flags ask for."""
    given = {f.name: getattr(args, f.name) for f in RunConfig.settings() if names is None or f.name in names}
    if "ov_config" in given:
        given["ov_config"] = dict(given["ov_config"])
    return RunConfig(**given)


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return v


def _path_list(text: str) -> list[str]:
    names = [p.strip() for p in text.split(",") if p.strip()]
    bad = [p for p in names if p not in PATHS]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"unknown path(s) {', '.join(bad) or text!r}; choose from {', '.join(PATHS)}")
    return list(dict.fromkeys(names))


def add_run_flags(p: argparse.ArgumentParser) -> None:
    """The flags `detect` and `process` share: JSON Lines, the report, how much to read, how to show it."""
    p.add_argument("--json", metavar="FILE", help="write JSON Lines, one line per frame ('-' for stdout)")
    p.add_argument("--report", metavar="FILE", help="write a JSON report: path, reasons, timings, CPU ('-' for stdout)")
    p.add_argument("--max-frames", type=_positive_int, metavar="N", help="stop after N frames of each input")
    p.add_argument("--parallel", action="store_true",
                   help="decode every input at once (each on its own thread) into one model and request queue; "
                   "results per input in that input's order, one input ending or failing does not stop the others")
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    p.add_argument("--verbose", action="store_true",
                   help="say every reason each better path was refused (the summary names the main ones)")


def add_process_parser(sub) -> None:
    """`zerocopy process`: the run settings that apply to an image-to-image model (and to the detector
    of a box model), its model, and where its maps go."""
    p = sub.add_parser("process", help="run an image-to-image model (text map, person mask) over videos",
                       description="Run an image-to-image model over one or more videos, frame by frame: "
                       "text-map (a text probability map) or person-mask (a person segmentation, on the boxes "
                       "of a person detector). Writes the map blended over the video, as a grayscale video, as "
                       "one .npy per frame, and a JSON line per frame.", formatter_class=HelpFormatter)
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="video files, folders of them, or stream URLs")
    p.add_argument("--model", required=True, metavar="MODEL",
                   help=f"an image-to-image catalogue model ({', '.join(IMAGE_MODELS)}) or a model file with one "
                   "single-channel map output")
    p.add_argument("--detector", metavar="MODEL",
                   help="for a model run on boxes (person-mask): the detector that finds them (default: the "
                   "catalogue's choice, objects; person works too)")
    add_settings(p, PROCESS_SETTINGS)
    p.add_argument("--output", metavar="FILE.mp4", help="write the video with the map blended over it")
    p.add_argument("--mask-output", metavar="FILE.mp4", help="write the map as a grayscale video (white: 1)")
    p.add_argument("--npy", metavar="DIR", help="write each frame's map as a float32 .npy into this new or empty "
                   "folder")
    p.add_argument("--anonymise", "--anonymize", action="store_true",
                   help="in the --output video, hide what the map covers (with person-mask: the people's shapes) "
                   "instead of tinting it: privacy-safe recordings")
    p.add_argument("--anonymise-style", "--anonymize-style", choices=STYLES, default="pixelate",
                   help="how --anonymise hides it: coarse blocks, a strong blur, or black")
    add_run_flags(p)


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
                       formatter_class=HelpFormatter)
    d.add_argument("inputs", nargs="+", metavar="INPUT", help="video files, folders of them, or stream URLs")
    add_settings(d)
    d.add_argument("--output", metavar="FILE.mp4", help="write the video with the detections drawn on it")
    d.add_argument("--events", metavar="FILE", help="write one JSON line per object event: new, update, end "
                   "(with --zone, loiter; with --line, each crossing) (tracking implied; '-' for stdout); "
                   "docs/tracking.md and docs/analytics.md describe them")
    d.add_argument("--publish", metavar="URL", help="publish object events (tracking implied) to an MQTT broker: "
                   "mqtt://[user[:password]@]host[:port]/prefix, or mqtts:// for TLS; topics PREFIX/NAME/events and "
                   "PREFIX/available/NODE; the password may come from $ZEROCOPY_MQTT_PASSWORD instead; never blocks "
                   "the run (docs/mqtt.md)")
    d.add_argument("--mqtt-ca", metavar="FILE", help="with --publish mqtts://: the CA certificate (PEM) that "
                   "signed the broker's certificate (default: the system's CAs)")
    d.add_argument("--publish-detections", action="store_true",
                   help="with --publish: also each inferred frame's detections, to PREFIX/NAME/detections")
    d.add_argument("--name", action="append", metavar="NAME",
                   help="the input's name in events and topics (default: its file stem or a URL's last part); "
                   "once per input, in order")
    add_run_flags(d)
    add_process_parser(sub)

    b = sub.add_parser("bench", help="measure every path that can run here against the baseline",
                       description="Run each path (and the OpenCV baseline) over the same input, interleaved "
                       "A B A B so machine drift hits all alike, each run in its own process, warm-up frames "
                       "excluded. Reports medians of FPS, per-stage latency, CPU per frame (also split by "
                       "thread: decoding, the Python main thread, inference and other workers), peak memory, "
                       "agreement with the software path, and the decode-only and inference-only limits.",
                       formatter_class=HelpFormatter)
    b.add_argument("input", metavar="INPUT", help="a video file")
    b.add_argument("--paths", type=_path_list, help="comma-separated paths (default: all that can run + baseline)")
    add_settings(b, BENCH_SETTINGS)
    b.add_argument("--frames", type=_positive_int, default=300,
                   help="measured frames per run (a shorter input: what it has after the warm-up, with a notice)")
    b.add_argument("--warmup", type=_positive_int, default=30, help="frames run before measuring")
    b.add_argument("--repeat", type=_positive_int, default=3, help="runs per path (medians are reported)")
    b.add_argument("--streams", choices=("auto",),
                   help="stream density instead: per path, the most copies of INPUT, each paced at its native rate "
                   "and all at once into one model, kept in real time (every frame, p95 latency ≤ 1 s); "
                   "--frames is then the frames per stream")
    b.add_argument("--max-streams", type=_positive_int, default=16, metavar="N",
                   help="with --streams auto: try at most this many streams")
    b.add_argument("--json", metavar="FILE", help="write the results as JSON ('-' for stdout)")
    b.add_argument("--markdown", metavar="FILE", help="write a Markdown table")
    b.add_argument("--plot", metavar="FILE.png", help="write a PNG: preprocessing time, CPU per frame, FPS")

    sv = sub.add_parser("serve", help="run the cameras of a config file as a service: events to MQTT, status over HTTP",
                        description="Run every camera of CONFIG.toml at once (cameras that share a model share one "
                        "compiled model), reconnecting each on its own, tracking objects and publishing their "
                        "events to an MQTT broker, with /health, /metrics (Prometheus), /api/cameras and "
                        "/api/cameras/NAME/latest.jpg over HTTP. SIGTERM or Ctrl-C stop it within 2 s. "
                        "docs/serve.md describes the config.", formatter_class=HelpFormatter)
    sv.add_argument("config", metavar="CONFIG.toml", help="the cameras, the broker and the HTTP address")
    sv.add_argument("--check", action="store_true", help="check the config (one line per problem, exit 2) and exit")

    doc = sub.add_parser("doctor", help="what this machine offers each path, and a verdict per path",
                         description="Check PyAV/FFmpeg, render nodes and VA display, OpenVINO devices, OpenCL "
                         "and the native bridge, and say for each path whether it can run and why not. "
                         "Always exits 0.")
    doc.add_argument("--json", action="store_true", help="print the stable JSON form")
    doc.add_argument("--va-device", metavar="NODE", help="a render node to check first, besides /dev/dri/renderD* "
                     "(as detect's --va-device)")

    m = sub.add_parser("models", help="list or pull catalogue models")
    msub = m.add_subparsers(dest="models_command", metavar="ACTION")
    msub.add_parser("list", help="list the catalogue and what is cached")
    pull = msub.add_parser("pull", help="download, verify and cache catalogue models")
    pull.add_argument("names", nargs="*", metavar="NAME", help=f"models to pull (default: all: {', '.join(CATALOG)})")
    return p
