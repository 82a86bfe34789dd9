"""A camera of `zerocopy serve`'s config (`[cameras.NAME]`, over `[defaults]`) checked into its record
(`CameraConfig`): its run settings checked one by one with `RunConfig`'s declarations (so every bad one is said),
then together into one frozen `RunConfig` (`CameraConfig.run`), made here once, which the model's and the shapes'
checks and the engine take. Which settings a camera may have, which serve sets for every camera and a camera's
defaults are said by the declarations (`config.setting`: `serve_sets`, `camera_default`, `not_camera`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zerocopy.analytics.objects import check_labels
from zerocopy.analytics.specs import LINE_OPTIONS, ZONE_OPTIONS, ZoneSpec
from zerocopy.catalog import CATALOG
from zerocopy.config import RunConfig
from zerocopy.errors import ConfigError
from zerocopy.input_settings import declared
from zerocopy.names import is_name, spelled
from zerocopy.postprocess import label_indices
from zerocopy.redaction import redact
from zerocopy.serve.checks import FRIGATE_TABLES, Problems, bool_value, shape_keys, unknown_keys
from zerocopy.serve.record_config import RECORD_KEYS, RecordConfig, check_record
from zerocopy.serve.secrets import Filler
from zerocopy.sources import NETWORK_SCHEMES, schemeless_url, source_kind, url_scheme

# what serve sets for every camera (cameras drop and come back, and are watched for events): not in a config
SERVICE_SETTINGS: dict[str, Any] = declared("serve_sets")
# what a camera runs with where neither it nor [defaults] says (a camera user's expectations, Frigate's): general
# objects, 5 inferences a second, only where something moves (`motion = false` infers at detect_fps)
CAMERA_DEFAULTS: dict[str, Any] = declared("camera_default")
NOT_CAMERA: dict[str, str] = declared("not_camera")  # why a camera may not set these (`node`: the box's name)
EVERY_FRAME = ("detect_fps", "motion")  # what `anonymise` refuses (the frames between would show what it hides)
# a camera's own keys, besides the run settings
CAMERA_KEYS = ("url", "detect_url", "enabled", "publish", "loop", *RECORD_KEYS)
SHAPE_OPTIONS = {"zones": ZONE_OPTIONS, "lines": LINE_OPTIONS}
READ_ONCE = ("zones", "lines", "motion_mask")  # kept in `CameraConfig.settings` as read: their specs
RUN_SETTINGS = tuple(f.name for f in RunConfig.settings())
CAMERA_SETTINGS = tuple(n for n in RUN_SETTINGS if n not in SERVICE_SETTINGS and n not in NOT_CAMERA)


def camera_run(settings: dict[str, Any]) -> RunConfig:
    """A camera's run settings as one checked record: its own (over [defaults] and its defaults) and those serve
    sets for every camera (`ConfigError` for a rule between them broken)."""
    return RunConfig.make({**settings, **SERVICE_SETTINGS})


@dataclass(frozen=True, kw_only=True)
class CameraConfig:
    """One camera: its name (an MQTT topic level), its real URL (secrets filled in: never print it; `source`
    is the redacted form), its run settings (`settings`: as the config gives them, over [defaults] and the camera
    defaults, its zones, lines and masks as read; `run`: all of them checked together, with serve's, into one frozen
    record, which is what runs) and whether it runs and publishes."""

    name: str
    url: str = field(repr=False)
    settings: dict[str, Any] = field(default_factory=dict)
    run: RunConfig = field(default=None, repr=False)  # type: ignore[assignment]  # (None: made from `settings`)
    enabled: bool = True
    publish: bool = True
    loop: bool = False  # a file played as a camera, for trying serve: from its start again at its end, paced as live
    record: RecordConfig = field(default_factory=RecordConfig)  # its clips (serve/record_config.py)

    def __post_init__(self) -> None:
        if self.run is None:
            object.__setattr__(self, "run", camera_run(self.settings))

    @property
    def source(self) -> str:
        return redact(self.url)


def check_settings(given: dict[str, Any], where: str, problem: Callable[[str, str], None],
                   mask: Callable[[str], str], base: Path) -> dict[str, Any]:
    """`given` run settings checked one by one with `RunConfig`'s declarations (so every bad one is
    reported; `check_cameras` checks each camera's whole set together); file settings relative to the config's
    folder."""
    settings: dict[str, Any] = {}
    for key, value in given.items():
        if key in SERVICE_SETTINGS:
            problem(where, f"{key} is set by serve for every camera ({key} = {SERVICE_SETTINGS[key]!r})")
            continue
        if key in FRIGATE_TABLES and (key == "snapshots" or isinstance(value, dict)):
            problem(where, FRIGATE_TABLES[key])  # Frigate's `[cameras.X.snapshots]`, `.motion`
            continue
        if key in NOT_CAMERA:
            problem(where, NOT_CAMERA[key])
            continue
        if key not in RUN_SETTINGS:
            unknown_keys(where, [key], list(CAMERA_KEYS + CAMERA_SETTINGS), problem,
                         "a camera takes url, enabled, publish and the settings of `zerocopy detect` (docs/serve.md)",
                         frigate="camera")
            continue
        # zones and lines one by one ([cameras.X.zones.NAME] tables): every bad one is said, each unknown key
        items = [{n: v} for n, v in value.items()] if key in ("zones", "lines") and isinstance(value, dict) \
            else [value]
        bad, read = False, []
        for item in items:
            if key in SHAPE_OPTIONS and isinstance(value, dict):
                name, given = next(iter(item.items()))
                if not shape_keys(f"{where}.{key}.{name}", given, SHAPE_OPTIONS[key], key[:-1], problem):
                    bad = True
                    continue
            try:
                checked = getattr(RunConfig.make({key: item}), key)
                read += checked if key in READ_ONCE else ()
            except ConfigError as e:
                problem(where, f"{key}: {mask(str(e))}")
                bad = True
        if not bad:  # zones, lines and masks as read here (their specs), not read again
            settings[key] = tuple(read) if key in READ_ONCE else _relative(key, value, base)
    return settings


def _relative(key: str, value: Any, base: Path) -> Any:
    """A file named relative to the config's folder (a service's working folder is seldom the config's)."""
    if key == "labels" or (key == "model" and value not in CATALOG):
        path = Path(os.path.expanduser(str(value)))
        if not path.is_absolute() and (base / path).exists():
            return str(base / path)
        return str(path)
    return value


def _check_model(model: str, run: RunConfig | None, where: str, problem: Callable[[str, str], None]) -> None:
    """The model exists, and a catalogue model has the `classes` and `anonymise` labels asked of it (else the
    camera's whole group would fail at every start, each camera sharing the compiled model with it included);
    `run`: the camera's record (None: its settings broke a rule between them, said already)."""
    if model not in CATALOG and not Path(model).exists():
        problem(where, f"model: {model!r} is neither a catalogue model ({', '.join(CATALOG)}) nor a file")
    elif run is not None and run.model in CATALOG and not run.labels:
        labels = spelled(CATALOG[run.model].labels)
        for key in ("classes", "anonymise"):
            try:
                label_indices(getattr(run, key) or (), labels, key)
            except ConfigError as e:
                problem(where, f"{key}: {e}")
        _check_shape_labels(run, labels, where, problem)


def _check_shape_labels(run: RunConfig, names: Sequence[str], where: str, problem: Callable[[str, str], None]) -> None:
    """Each zone's and line's `labels`, and each filter's label, are the model's (every problem said: `--check` lists
    them all)."""
    shapes = [(f"{'zone' if isinstance(s, ZoneSpec) else 'line'} {s.name}", s.labels) for s in (*run.zones, *run.lines)]
    for what, labels in [*shapes, *((f"filter {f.label}", (f.label,)) for f in run.filters)]:
        try:
            check_labels(what, labels, names)
        except ConfigError as e:
            problem(where, str(e))


def _check_url(url: str, where: str, problem: Callable[[str, str], None], loop: bool = False,
               key: str = "url") -> None:
    """A camera is a stream or a device, or a file with `loop = true` (for trying serve: played again from its
    start at its end, paced as live); a file without it would be read to its end at full speed (`zerocopy detect`
    runs files)."""
    scheme = url_scheme(url)
    if scheme is not None and scheme not in NETWORK_SCHEMES:
        problem(where, f"{key}: {redact(url)!r}: {scheme}:// is not a stream zerocopy opens (use rtsp://, http://, "
                "udp://, srt://…)")
    elif (shown := schemeless_url(url)) is not None:
        problem(where, f"{key}: {shown!r} has no scheme: write rtsp://…, http://… or udp://…")
    elif source_kind(url) == "file" and not loop:
        problem(where, f"{key}: {redact(url)!r} is a file, not a camera: serve runs streams (rtsp://, http://, "
                "udp://…) and devices (/dev/video0); to try serve on a file, add loop = true; `zerocopy detect` "
                "runs files")
    elif loop and source_kind(url) != "file":
        problem(where, "loop = true is for a file played as a camera; a stream or a device is opened again by "
                "itself when it drops")


def check_cameras(table: dict | None, given: dict[str, dict], defaults: dict[str, Any], broker: bool, fill: Filler,
                  problem: Problems, storage: bool = False, recording: dict | None = None) -> list[CameraConfig]:
    """The [cameras.NAME] tables (filled in; `given`: as written, to tell a url left out because its secret could
    not be filled in from one missing), each over `defaults` (its recording keys over `recording`, [defaults]'
    own: `record_config.record_defaults`); `broker`: whether there is a [publish] table."""
    unfilled = {name: set(cam) - set((table or {}).get(name, {})) for name, cam in given.items()}
    if not table:
        problem("", "no camera: add at least one [cameras.NAME] table with its url")
    cameras = []
    for cam_name, cam in (table or {}).items():
        url_unfilled = bool({"url", "detect_url"} & unfilled.get(cam_name, set()))
        camera = _check_camera(cam_name, cam, defaults, broker, url_unfilled, fill, problem, storage, recording or {})
        if camera is not None:
            cameras.append(camera)
    return cameras


def _check_camera(cam_name: str, cam: Any, defaults: dict[str, Any], broker: bool, url_unfilled: bool,
                  fill: Filler, problem: Problems, storage: bool = False,
                  recording: dict | None = None) -> CameraConfig | None:
    """One camera's table checked (None: it has no usable url, or is no table)."""
    where = f"cameras.{cam_name}"
    if not is_name(cam_name):
        problem(where, "a camera's name holds only letters, digits, - and _ (it is an MQTT topic level)")
    if not isinstance(cam, dict):
        problem(where, f"a camera is a table ([{where}]) with its url, not a {type(cam).__name__}")
        return None
    url = cam.get("url", cam.get("detect_url"))  # `detect_url`: Frigate's name for the stream detection decodes
    if "url" in cam and "detect_url" in cam:
        problem(where, "url and detect_url are the same key (the stream detection decodes): give one")
    elif (not isinstance(url, str) or not url.strip()) and not url_unfilled:
        problem(where, "url is missing (the camera's stream: rtsp://…, http://…, /dev/video0)")
    enabled = bool_value(cam, "enabled", where, True, problem)
    loop = bool_value(cam, "loop", where, False, problem)
    publishes = bool_value(cam, "publish", where, True, problem)
    if publishes and "publish" in cam and not broker:
        problem(where, "publish = true but there is no [publish] table with the broker's url")
    before = len(problem.lines)
    own = check_settings({k: v for k, v in cam.items() if k not in CAMERA_KEYS}, where, problem, fill.mask,
                          fill.base)
    settings = {**defaults, **own, **({"realtime": True} if loop else {})}  # a looped file is paced as live
    for key, value in CAMERA_DEFAULTS.items():  # anonymise needs every frame inferred: no motion, no detect_fps
        if key not in settings and not (key in EVERY_FRAME and settings.get("anonymise")):
            settings[key] = value
    try:
        run = camera_run(settings)  # the settings together (each was checked alone above), made once
    except ConfigError as e:
        run = None
        if len(problem.lines) == before:
            problem(where, fill.mask(str(e)))
    _check_model(str(settings["model"]), run, where, problem)
    if not isinstance(url, str) or not url.strip():
        return None
    url = url.strip()
    _check_url(url, where, problem, loop, key="url" if "url" in cam else "detect_url")
    if loop and source_kind(url) == "file":  # relative to the config's folder, like the other files
        url = str(fill.base / os.path.expanduser(url))
        if not Path(url).is_file():
            problem(where, f"url: {redact(url)!r}: no such file")
    anonymise = bool(settings.get("anonymise"))
    record = check_record({**({} if anonymise else recording or {}), **cam}, where, problem, storage,
                          lambda u: _check_url(u, where, problem, loop), anonymise=anonymise)
    if run is None:
        return None
    return CameraConfig(name=cam_name, url=url, settings=settings, run=run, enabled=enabled,
                        publish=publishes and broker, loop=loop, record=record)
