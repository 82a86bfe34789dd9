"""Every setting of a run, declared once: its type, default, what it means, how it is checked and its
command-line flag.

`RunConfig` is what `Detector(**settings)` and `zerocopy detect`'s flags build (the CLI's options are
generated from the declarations below, so the two cannot drift apart), what the pipeline, the path
fronts and the bench's workers take whole, and what the report prints once resolved. A value is
checked when the configuration is made, before any model or video is opened; a bad one raises
`ConfigError` naming the setting and what it accepts. `resolve()` turns "auto" and None into what
this machine and this model give (device, threshold, decoding threads, requests in flight).
"""

from __future__ import annotations

import copy
import dataclasses
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from zerocopy.analytics.filter_specs import FILTERS, FilterSpec
from zerocopy.analytics.specs import LINES, MASKS, ZONES, LineSpec, MaskSpec, ZoneSpec
from zerocopy.budget import default_decode_threads
from zerocopy.catalog import DEFAULT_MODEL
from zerocopy.decode.live import LivePolicy
from zerocopy.errors import ConfigError
from zerocopy.kinds import (
    LEVEL,
    NAMES,
    NODE,
    PROPERTIES,
    RATE,
    SCORE,
    SECONDS,
    SWITCH,
    TASKS,
    TILE_ROWS,
    Kind,
    choice,
    integer,
    text,
)
from zerocopy.names import as_name
from zerocopy.postprocess import POSTPROCESSORS
from zerocopy.roi.tasks import RoiTask, parse_task
from zerocopy.serve.checks import did_you_mean

PATHS = ("zero-copy", "copy", "software", "baseline")
AUTO_ORDER = ("zero-copy", "copy", "software")
STYLES = ("pixelate", "blur", "fill")  # how `anonymise` hides a box (`sinks.draw.anonymise`)
UNSET: Any = object()  # a keyword of `setting` not given
DELAY = Kind(accepts="a number of seconds ≥ 0", test=lambda v: SECONDS.test(v) or (type(v) in (int, float) and v == 0),
             convert=float, parse=float)
ON_OFF = Kind(accepts="True or False (on the command line: true, false, on, off, yes, no, 1, 0)",
              test=lambda v: isinstance(v, bool), parse=lambda t: {"true": True, "on": True, "yes": True, "1": True,
                                                                   "false": False, "off": False, "no": False,
                                                                   "0": False}[t.strip().lower()])


def default_node() -> str:
    """This machine's name in events: the first label of its host name, as a node name."""
    return as_name(socket.gethostname().split(".")[0], "zerocopy")


def setting(default: Any, kind: Kind, help: str, metavar: str | None = None, stage: str | None = None, *,
            per_input: bool = False, serve_sets: Any = UNSET, camera_default: Any = UNSET,
            not_camera: str = "") -> Any:
    """A field of `RunConfig`: its default, how it is checked, and its one-line description. `stage`: the stage
    after inference it switches on, as "module:Class" (`stages.assemble.declared_stages` makes it with the run's
    config and the model's labels when the setting is set; it follows the tracked objects, so it turns tracking
    on): an analytic added by its declaration alone.

    Where else it may appear (`declared` reads it back): `per_input`, an input of a run (a serve camera,
    `Detector.run(per_input=…)`) may have its own (`InputSettings`); `serve_sets`, the value serve gives every
    camera, which may not set it; `camera_default`, a serve camera's where neither it nor [defaults] says one;
    `not_camera`, why a serve camera may not set it at all."""
    meta = {"kind": kind, "help": help, "metavar": metavar, "stage": stage, "per_input": per_input or UNSET,
            "serve_sets": serve_sets, "camera_default": camera_default, "not_camera": not_camera or UNSET}
    meta = {key: value for key, value in meta.items() if value is not UNSET}
    if isinstance(default, dict):
        return field(default_factory=dict, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True, kw_only=True)
class RunConfig:
    """The settings of a run. Made with keywords only; every value is checked here (`ConfigError`)."""

    model: str = setting(DEFAULT_MODEL, text(optional=False),
                         "catalogue name (`zerocopy models list`) or an IR/ONNX/TFLite file", camera_default="objects")
    labels: str | None = setting(None, text(), "class names, one per line (for your own model)", "FILE")
    postprocess: str | None = setting(
        None, choice(*POSTPROCESSORS, optional=True),
        "how a model file's outputs become detections (default: guessed from its output shapes; a catalogue "
        "model keeps its own)")
    classes: tuple[str, ...] | None = setting(
        None, NAMES, "keep only detections of these classes of the model's labels, comma-separated, "
        "case-insensitive (e.g. person,car)", "NAMES", per_input=True)
    anonymise: tuple[str, ...] | None = setting(
        None, NAMES, "hide the boxes of these classes (grown by a fifth) in every picture the run keeps: the --output "
        "video, serve's latest.jpg, the API's images; they are detected for that whatever --classes reports "
        "(comma-separated, case-insensitive, e.g. face or Person,Car); needs every frame inferred (no --detect-fps)",
        "NAMES")
    anonymise_style: str = setting("pixelate", choice(*STYLES),
                                   "how --anonymise hides a box: coarse blocks, a strong blur, or black")
    classify: tuple[str, ...] = setting(
        (), TASKS, "run a second model on the boxes of these labels (all boxes if none), repeatable: a catalogue "
        "region model (face-mesh, ...) or a classifier file; its results go into each box's attributes and "
        "keypoints", "MODEL[:LABEL,...]")
    max_rois: int = setting(8, integer(1, optional=False), "at most this many boxes per frame each region model "
                            "runs on (the --classify models; in process, person-mask), the largest first", "N")
    min_presence: float | None = setting(
        None, SCORE, "with --classify and a landmark model (face-mesh, handedness): drop boxes whose presence score "
        "is below this (a check that a face box holds a face, a palm box a hand)", "SCORE")
    tiles: int = setting(0, TILE_ROWS, "also run the detector on N rows of overlapping square tiles "
                         "of each inferred frame and merge their boxes with the whole frame's: finds smaller objects "
                         "(with objects on 16:9 video, 1 row finds people and cats from a fifth of the frame height, "
                         "2 rows cups), for 1 + the tiles' count inferences a frame (1 row of 16:9: 3); 0: off", "N")
    regions: bool = setting(True, ON_OFF, "with --motion: also run the detector on up to 4 squares (its input size "
                            "or a little more) around what moves and what the frame before found, and merge their "
                            "boxes with the whole frame's: finds far people and cats at a fraction of --tiles' cost; "
                            "--tiles replaces it; false: off (docs/regions.md)", "true|false")
    resize: str | None = setting(None, choice("letterbox", "stretch", optional=True),
                                 "keep the aspect ratio with black bars, or fill the input (default: per model)")
    path: str = setting("auto", choice("auto", *PATHS),
                        "auto tries zero-copy, copy, then software, and says why each better path could not run; "
                        "baseline is the OpenCV decode+resize pipeline to measure against")
    device: str = setting("auto", text(optional=False),
                          "OpenVINO device: auto (GPU if present, else CPU), GPU, CPU")
    va_device: str | None = setting(None, text(), "VA-API render node for the GPU paths (default: the first Intel "
                                    "/dev/dri/renderD*)", "NODE")
    nireq: int | None = setting(None, integer(1), "inference requests in flight (default: the device's optimum, "
                                "at least 2; at most 4 on the VA paths, whose surface pools they size)")
    batch: int = setting(1, integer(1, optional=False), "frames per inference request")
    threshold: float | None = setting(None, SCORE, "minimum detection score (default: the model's, 0.5 for your "
                                      "own models)")
    decode_threads: int | None = setting(
        None, integer(0), "FFmpeg threads for CPU decoding on the software path; 0 lets FFmpeg use every core "
        "(more FPS on heavy video; on light video, more CPU per frame and fewer FPS). Default: the cores CPU "
        "inference does not use (1 on 2 cores), every core when inference runs on a GPU; with --parallel, one per "
        "input (the cores divided among the inputs when inference runs on a GPU)", "N")
    ov_config: dict[str, Any] = setting(
        {}, PROPERTIES, "an OpenVINO property for compiling (repeatable), e.g. INFERENCE_NUM_THREADS=4; default: "
        "PERFORMANCE_HINT=THROUGHPUT, and on the CPU half the cores for inference", "KEY=VALUE")
    realtime: bool = setting(False, SWITCH, "pace file inputs at their own frame rate, as a camera delivers frames "
                             "(live sources pace themselves); the report then gives each frame's arrival-to-result "
                             "latency")
    reconnect: bool = setting(False, SWITCH, "re-open a network source or camera that drops, with back-off (0.5 s "
                              "doubling to 8 s); frames go on numbered in order, and the report counts each gap",
                              serve_sets=True)
    reconnect_timeout: float = setting(60.0, SECONDS, "with --reconnect: give up on a source after this long "
                                       "without a frame", "SECONDS", serve_sets=365 * 86400.0)
    retry_open: bool = setting(False, SWITCH, "with --reconnect: a network source that cannot be opened at start (a "
                               "camera still booting) is tried again with the same back-off, until "
                               "--reconnect-timeout; without it that is an error at once (most often a wrong URL)",
                               serve_sets=True)
    detect_fps: float | None = setting(
        None, RATE, "infer on this many frames per second of each input (Frigate detects at 5); the frames between "
        "are decoded but not scaled or inferred, and with --track their objects keep their ids (default: every "
        "frame)", "N", per_input=True, camera_default=5.0)
    track: bool = setting(False, SWITCH, "give each object an id that lasts across frames (per input), and make "
                          "an event when it appears, changes and leaves (--events and --publish imply it)",
                          serve_sets=True)
    min_hits: int = setting(3, integer(1, optional=False), "with --track: inferred frames an object must be found in "
                            "before it gets an id and a `new` event", "N")
    max_lost: float = setting(2.0, SECONDS, "with --track: seconds an object may go unseen before its `end` event",
                              "SECONDS")
    update_interval: float = setting(5.0, SECONDS, "with --track: at most one `update` event per object this often",
                                     "SECONDS")
    motion: bool = setting(False, SWITCH, "infer only when something moves (within --detect-fps): while the "
                           "picture is still and no tracked object moves, frames are decoded but not inferred, except "
                           "one every --motion-keepalive seconds (serve: on by default)",
                           per_input=True, camera_default=True)
    motion_threshold: int = setting(25, LEVEL, "with --motion: how much a pixel's brightness (0-255) must change to "
                                    "count as motion", "LEVEL", per_input=True)
    motion_mask: tuple[MaskSpec, ...] = setting(
        (), MASKS, "with --motion: a polygon where motion is ignored (a timestamp overlay, trees), repeatable",
        "x1,y1,x2,y2,x3,y3,...", per_input=True)
    motion_keepalive: float = setting(10.0, SECONDS, "with --motion: infer at least once this often even when "
                                      "nothing moves (on the next keyframe, if one comes within 5 s)", "SECONDS",
                                      per_input=True)
    motion_off_delay: float = setting(30.0, DELAY, "with --motion and --publish: CAMERA/motion says ON when motion "
                                      "starts and OFF only after this long without motion (Frigate's "
                                      "motion.mqtt_off_delay)", "SECONDS", per_input=True)
    draw_motion: bool = setting(False, SWITCH, "with --motion and --output: draw the boxes where motion was seen")
    decode_gate: str = setting("auto", choice("auto", "off"), "with --motion: while nothing moves and nothing is "
                               "tracked, decode keyframes only and watch the other packets' sizes, decoding from the "
                               "last keyframe when they grow or motion shows (auto: unless the stream's packet sizes "
                               "cannot follow the scene, e.g. constant bit rate; off: decode every frame)",
                               per_input=True)
    zones: tuple[ZoneSpec, ...] = setting(
        (), ZONES, "a zone (repeatable): objects whose box's bottom-centre is inside it for min_frames inferred "
        "frames (default 3) are in it; events carry current_zones and entered_zones, staying loiter_s seconds makes a "
        "`loiter` event. Points in source pixels, or fractions when all are <= 1 (implies --track)",
        "NAME:x1,y1,x2,y2,x3,y3,...[:labels=A,B][:min_frames=N][:loiter_s=S]", per_input=True)
    lines: tuple[LineSpec, ...] = setting(
        (), LINES, "a line to count crossings of (repeatable): each crossing is a `cross` event, direction `in` "
        "from the line's right-hand side to its left looking from its first point to its second (implies --track)",
        "NAME:x1,y1,x2,y2[:labels=A,B]", per_input=True)
    filters: tuple[FilterSpec, ...] = setting(
        (), FILTERS, "a label's object filters (repeatable, Frigate's objects.filters): min_score drops a box scored "
        "below it, threshold confirms an object only once its scores' median reaches it, min_area/max_area bound a "
        "box's area (pixels, or a fraction of the frame when <= 1), min_ratio/max_ratio its width/height, mask (a "
        "polygon, repeatable) drops a box whose bottom-centre is in it", "LABEL:KEY=VALUE[:KEY=VALUE...]",
        per_input=True)
    dwell: bool = setting(False, SWITCH, "with zones: how long each tracked object stayed in each zone, in its end "
                          "event (dwell: zone → seconds), on serve's /metrics and retained on CAMERA/ZONE/LABEL/dwell",
                          stage="zerocopy.analytics.dwell:Dwell")
    snapshots: str | None = setting(
        None, text(), "write each tracked object's best picture into this folder (CAMERA/ID.jpg with its box drawn, "
        "and ID-thumb.jpg, its box): when it ends, and while it lasts at most every --snapshot-interval seconds; "
        "events then say has_snapshot (implies --track; serve: its [storage] folder)", "FOLDER",
        not_camera="snapshots are serve's: every tracked object's is kept in the [storage] folder")
    snapshot_interval: float = setting(10.0, SECONDS, "with --snapshots: refresh a lasting object's snapshot at most "
                                       "this often, when a better picture came", "SECONDS")
    node: str | None = setting(None, NODE, "this machine's name in events (default: the host name); with several "
                               "machines publishing into one broker, each needs its own", "NAME",
                               not_camera="node is the box's name: a top-level key, not a camera's")

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, f.metadata["kind"].check(f.name, getattr(self, f.name)))
        self._check_together()

    def _check_together(self) -> None:
        """The rules between settings (each setting alone is checked by its `Kind`)."""
        if self.anonymise and self.detect_fps:  # the frames in between have no boxes of their own to hide
            raise ConfigError("detect_fps", "anonymise needs every frame inferred: with detect_fps the frames in "
                              "between would show what it hides; drop detect_fps")
        if self.anonymise and self.motion:
            raise ConfigError("motion", "anonymise needs every frame inferred: with motion the still frames would show "
                              "what it hides; drop motion")
        both = {z.name for z in self.zones} & {ln.name for ln in self.lines}
        if both:
            raise ConfigError("lines", f"a zone and a line are both named {sorted(both)[0]!r}: each needs its own "
                              "name (they share MQTT topics)")
        if self.min_presence is not None and not self.classify:
            raise ConfigError("min_presence", "min_presence needs a landmark model to score boxes: --classify "
                              "face-mesh")

    @property
    def tasks(self) -> tuple[RoiTask, ...]:
        """`classify`, read: each region model and the labels of the boxes it runs on."""
        return tuple(parse_task(item) for item in self.classify)

    @property
    def node_name(self) -> str:
        """`node`, or this machine's name when unset."""
        return self.node or default_node()

    @classmethod
    def settings(cls) -> tuple[dataclasses.Field, ...]:
        return dataclasses.fields(cls)

    def switched_stages(self) -> list[str]:
        """The stages its settings switch on ("module:Class", `setting(stage=…)`), in the declarations' order."""
        return [f.metadata["stage"] for f in self.settings() if f.metadata.get("stage") and getattr(self, f.name)]

    @classmethod
    def _known(cls, names: Iterable[str]) -> None:
        """One `ConfigError` (not a `TypeError`) naming every setting that does not exist, each with the nearest
        one that does."""
        known = sorted(f.name for f in cls.settings())
        unknown = sorted(set(names) - set(known))
        if unknown:
            named = ", ".join(f"{key!r}{did_you_mean(key, known)}" for key in unknown)
            raise ConfigError(unknown[0], f"unknown setting{'s' * (len(unknown) > 1)} {named}; the settings are: "
                              f"{', '.join(known)}")

    @classmethod
    def make(cls, settings: Mapping[str, Any]) -> RunConfig:
        cls._known(settings)
        return cls(**settings)

    def replace(self, **changes: Any) -> RunConfig:
        """A copy with `changes`: each checked by its setting's `Kind`, then the rules between settings; the
        settings it keeps were checked when this configuration was made, and are not checked again."""
        self._known(changes)
        if not changes:
            return self
        kinds = {f.name: f.metadata["kind"] for f in self.settings()}
        made = copy.copy(self)
        for name, value in changes.items():
            object.__setattr__(made, name, kinds[name].check(name, value))
        made._check_together()
        return made

    def to_dict(self, json_ready: bool = False) -> dict[str, Any]:
        """Every setting by name, as text and numbers (zones, lines and masks in their text form: `make` reads
        it back into this configuration; the bench sends it to its workers as JSON; the report prints it
        resolved). `json_ready`: OpenVINO property values that JSON cannot hold (an API caller may pass
        OpenVINO's own enums) as their text."""
        out = {f.name: f.metadata["kind"].plain(getattr(self, f.name)) for f in self.settings()}
        if json_ready:
            plain = (str, int, float, bool, type(None))
            out["ov_config"] = {k: v if isinstance(v, plain) else str(v) for k, v in self.ov_config.items()}
        return out

    @property
    def live_policy(self):
        """How live sources are waited for and reconnected (`decode.live.LivePolicy`)."""
        return LivePolicy(reconnect=self.reconnect, give_up_after=self.reconnect_timeout, retry_open=self.retry_open)

    def resolve(self, *, spec: Any = None, device: str | None = None, inputs: int = 1,
                optimal_nireq: int | None = None, nireq_cap: int | None = None) -> RunConfig:
        """This configuration with "auto"/None replaced by what is known now (each rule lives here):

        - `threshold`, `resize`, `postprocess`: the model's own (`spec`, an `infer.model.ModelSpec`);
        - `device`: the device a path infers on (`infer.model.pick_device`'s answer);
        - `decode_threads`: `budget.default_decode_threads` for the device and the `inputs` decoded at once;
        - `nireq`: the compiled model's `optimal_nireq`, capped at the path's `nireq_cap` (the VA paths'
          surface pools) unless it was given.
        What is not known yet stays as it was; a resolved value is never changed again.
        """
        changes: dict[str, Any] = {}
        if device is not None and self.device.lower() == "auto":
            changes["device"] = device
        if spec is not None:
            for name in ("threshold", "resize", "postprocess"):
                if getattr(self, name) is None:
                    changes[name] = getattr(spec, name)
        if self.decode_threads is None and device is not None:
            changes["decode_threads"] = default_decode_threads(device, inputs)
        if self.nireq is None and optimal_nireq is not None:
            changes["nireq"] = min(optimal_nireq, nireq_cap) if nireq_cap else optimal_nireq
        return self.replace(**changes)

