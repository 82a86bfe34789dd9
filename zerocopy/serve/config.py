"""`zerocopy serve`'s config file: the box's name, the broker, the HTTP address and the cameras by name.

Read with `tomllib`, then checked whole: every problem is collected and reported on a line of its own
(`ServeConfigError.problems`: `[table] key: what is wrong`), so one `--check` shows them all. Each
camera's run settings are checked by `RunConfig`'s own declarations (one check per setting, so a
config with three bad settings gives three lines). String values may hold `${NAME}` (the environment
variable NAME) and `${file:PATH}` (the contents of PATH, its trailing newline removed: Docker and
systemd credentials); `$$` is a literal `$`. What was filled in is never shown: a problem line names
the variable or the file, never its value. docs/serve.md is the reference.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zerocopy.analytics.objects import check_labels
from zerocopy.analytics.specs import LINE_OPTIONS, ZONE_OPTIONS, lines_of, zones_of
from zerocopy.catalog import CATALOG, DEFAULT_MODEL
from zerocopy.config import RunConfig, default_node
from zerocopy.errors import ConfigError, ZeroCopyError
from zerocopy.names import NAME_RULE, is_name, spelled
from zerocopy.postprocess import label_indices
from zerocopy.publish.homeassistant import HomeAssistantConfig
from zerocopy.publish.target import MqttTarget, ca_problem
from zerocopy.redaction import redact
from zerocopy.serve.checks import FRIGATE_TABLES, Problems, bool_value, shape_keys, table_of, unknown_keys
from zerocopy.serve.frigate import FRIGATE_SUFFIXES, load_frigate
from zerocopy.serve.homeassistant_config import check_homeassistant
from zerocopy.serve.http_config import HttpConfig, check_http
from zerocopy.serve.record_config import RECORD_KEYS, RecordConfig, check_record
from zerocopy.serve.secrets import Filler
from zerocopy.serve.storage_config import StorageConfig, check_storage
from zerocopy.sources import NETWORK_SCHEMES, schemeless_url, source_kind, url_scheme

# what serve sets for every camera (cameras drop and come back, and are watched for events): not in a config
SERVICE_SETTINGS: dict[str, Any] = {"reconnect": True, "retry_open": True, "reconnect_timeout": 365 * 86400.0,
                                    "track": True}
# what a camera runs with where neither it nor [defaults] says (a camera user's expectations, Frigate's): general
# objects, 5 inferences a second, only where something moves (`motion = false` infers at detect_fps)
CAMERA_DEFAULTS: dict[str, Any] = {"model": "objects", "detect_fps": 5.0, "motion": True}
EVERY_FRAME = ("detect_fps", "motion")  # what `anonymise` refuses (the frames between would show what it hides)
# a camera's own keys, besides the run settings
CAMERA_KEYS = ("url", "detect_url", "enabled", "publish", "loop", *RECORD_KEYS)
TOP_KEYS = ("node", "publish", "http", "homeassistant", "storage", "defaults", "cameras")
PUBLISH_KEYS = ("url", "ca", "detections", "frigate_events")
SHAPE_OPTIONS = {"zones": ZONE_OPTIONS, "lines": LINE_OPTIONS}


class ServeConfigError(ZeroCopyError):
    """The config cannot be used; `problems` holds one line per problem (without the file's name)."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


@dataclass(frozen=True, kw_only=True)
class CameraConfig:
    """One camera: its name (an MQTT topic level), its real URL (secrets filled in: never print it; `source`
    is the redacted form), its run settings (`RunConfig` names → values, checked) and whether it runs and
    publishes."""

    name: str
    url: str = field(repr=False)
    settings: dict[str, Any] = field(default_factory=dict)
    enabled: bool = True
    publish: bool = True
    loop: bool = False  # a file played as a camera, for trying serve: from its start again at its end, paced as live
    record: RecordConfig = field(default_factory=RecordConfig)  # its clips (serve/record_config.py)

    @property
    def source(self) -> str:
        return redact(self.url)


@dataclass(frozen=True)
class PublishConfig:
    url: str = field(repr=False)  # may hold a password
    ca: str | None = None
    detections: bool = False
    frigate_events: bool = False  # events on PREFIX/events, Frigate's one topic, not PREFIX/CAMERA/events


@dataclass(frozen=True, kw_only=True)
class ServeConfig:
    cameras: list[CameraConfig]
    publish: PublishConfig | None = None
    http: HttpConfig = field(default_factory=HttpConfig)
    homeassistant: HomeAssistantConfig | None = None  # [homeassistant]: MQTT discovery (docs/homeassistant.md)
    storage: StorageConfig | None = None  # [storage]: where events are kept (None: nowhere; a file always has one)
    node: str = ""
    path: str = ""
    # every value filled in from the environment or a file: serve masks each wherever it would show
    # (`redaction.masking`), in a camera's user, password, path or query alike
    secrets: frozenset[str] = field(default=frozenset(), repr=False)


RUN_SETTINGS = tuple(f.name for f in RunConfig.settings())
# set by serve too: `snapshots` is its [storage] folder's (serve/engine.py)
CAMERA_SETTINGS = tuple(n for n in RUN_SETTINGS if n not in SERVICE_SETTINGS and n not in ("node", "snapshots"))


def _check_settings(given: dict[str, Any], where: str, problem: Callable[[str, str], None],
                    mask: Callable[[str], str], base: Path) -> dict[str, Any]:
    """`given` run settings checked one by one with `RunConfig`'s declarations (so every bad one is
    reported; `load_config` checks each camera's whole set together); file settings relative to the config's
    folder."""
    settings: dict[str, Any] = {}
    for key, value in given.items():
        if key in SERVICE_SETTINGS:
            problem(where, f"{key} is set by serve for every camera ({key} = {SERVICE_SETTINGS[key]!r})")
            continue
        if key == "node":
            problem(where, "node is the box's name: a top-level key, not a camera's")
            continue
        if key in FRIGATE_TABLES and (key == "snapshots" or isinstance(value, dict)):
            problem(where, FRIGATE_TABLES[key])  # Frigate's `[cameras.X.snapshots]`, `.motion`
            continue
        if key not in RUN_SETTINGS:
            unknown_keys(where, [key], list(CAMERA_KEYS + CAMERA_SETTINGS), problem,
                         "a camera takes url, enabled, publish and the settings of `zerocopy detect` (docs/serve.md)",
                         frigate="camera")
            continue
        # zones and lines one by one ([cameras.X.zones.NAME] tables): every bad one is said, each unknown key
        items = [{n: v} for n, v in value.items()] if key in ("zones", "lines") and isinstance(value, dict) \
            else [value]
        bad = False
        for item in items:
            if key in SHAPE_OPTIONS and isinstance(value, dict):
                name, given = next(iter(item.items()))
                if not shape_keys(f"{where}.{key}.{name}", given, SHAPE_OPTIONS[key], key[:-1], problem):
                    bad = True
                    continue
            try:
                RunConfig.make({key: item})
            except ConfigError as e:
                problem(where, f"{key}: {mask(str(e))}")
                bad = True
        if bad:
            continue
        settings[key] = _relative(key, value, base)
    return settings


def _relative(key: str, value: Any, base: Path) -> Any:
    """A file named relative to the config's folder (a service's working folder is seldom the config's)."""
    if key == "labels" or (key == "model" and value not in CATALOG):
        path = Path(os.path.expanduser(str(value)))
        if not path.is_absolute() and (base / path).exists():
            return str(base / path)
        return str(path)
    return value


def _check_model(settings: dict[str, Any], where: str, problem: Callable[[str, str], None]) -> None:
    """The model exists, and a catalogue model has the `classes` and `anonymise` labels asked of it (else the
    camera's whole group would fail at every start, each camera sharing the compiled model with it included)."""
    model = settings.get("model", DEFAULT_MODEL)
    if isinstance(model, str) and model not in CATALOG and not Path(model).exists():
        problem(where, f"model: {model!r} is neither a catalogue model ({', '.join(CATALOG)}) nor a file")
    elif model in CATALOG and not settings.get("labels"):
        labels = spelled(CATALOG[model].labels)
        for key in ("classes", "anonymise"):
            if settings.get(key):
                try:
                    label_indices(getattr(RunConfig.make({key: settings[key]}), key) or (), labels, key)
                except ConfigError as e:
                    problem(where, f"{key}: {e}")
        _check_shape_labels(settings, labels, where, problem)


def _check_shape_labels(settings: dict[str, Any], names: Sequence[str], where: str,
                        problem: Callable[[str, str], None]) -> None:
    """Each zone's and line's `labels` are the model's (every problem said: `--check` lists them all)."""
    for key, read in (("zones", zones_of), ("lines", lines_of)):
        try:
            specs = read(getattr(RunConfig.make({key: settings[key]}), key)) if settings.get(key) else []
        except ConfigError:
            continue  # said already, by the setting's own check
        for spec in specs:
            try:
                check_labels(f"{key[:-1]} {spec.name}", spec.labels, names)
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


def load_config(path: str | Path, env: dict[str, str] | None = None) -> ServeConfig:
    """The config at `path`, checked whole; `ServeConfigError` with every problem, one line each.
    `env`: where `${NAME}` is looked up (default: the process's environment)."""
    path, env = Path(path), os.environ.copy() if env is None else env
    if path.suffix.lower() in FRIGATE_SUFFIXES:  # a Frigate config, mapped to this file's table (serve/frigate.py)
        return load_frigate(path, env, CAMERA_DEFAULTS["model"], parse_config, ServeConfigError)
    try:
        raw = tomllib.loads(path.read_text())
    except OSError as e:
        raise ServeConfigError([f"cannot read it: {e.strerror or e}"]) from None
    except UnicodeDecodeError:
        raise ServeConfigError(["not a text file (TOML is UTF-8)"]) from None
    except tomllib.TOMLDecodeError as e:
        raise ServeConfigError([f"not valid TOML: {e}"]) from None
    return parse_config(raw, env=env, base=path.resolve().parent, name=str(path))


def parse_config(raw: dict[str, Any], env: dict[str, str], base: Path, name: str = "") -> ServeConfig:
    """A parsed TOML document checked into a `ServeConfig` (see `load_config`)."""
    problem = Problems()
    fill = Filler(env, base, problem)
    given_cameras = {k: v for k, v in raw.get("cameras", {}).items() if isinstance(v, dict)} \
        if isinstance(raw.get("cameras"), dict) else {}
    given_http = raw.get("http") if isinstance(raw.get("http"), dict) else {}
    raw = fill.table(raw)
    unknown_keys("", sorted(set(raw) - set(TOP_KEYS)), list(TOP_KEYS), problem,
                 f"the top-level keys are {', '.join(TOP_KEYS)}", frigate="top")
    node = _check_node(raw.get("node"), problem)
    publish = _check_publish(table_of(raw, "publish", problem), fill, problem)
    http = check_http(table_of(raw, "http", problem), given_http, problem)
    homeassistant = check_homeassistant(table_of(raw, "homeassistant", problem), publish is not None, problem)
    storage = check_storage(table_of(raw, "storage", problem), env, base, problem)
    table = table_of(raw, "defaults", problem)
    defaults = _check_settings(table, "defaults", problem, fill.mask, base) if table is not None else {}
    cameras = _check_cameras(table_of(raw, "cameras", problem), given_cameras, defaults, publish is not None, fill,
                             problem, storage is not None)
    if cameras and not any(c.enabled for c in cameras) and not problem.lines:
        problem("", "every camera has enabled = false")
    if problem.lines:
        raise ServeConfigError([fill.mask(line) for line in problem.lines])
    return ServeConfig(cameras=cameras, publish=publish, http=http, homeassistant=homeassistant, storage=storage,
                       node=node, path=name, secrets=frozenset(fill.filled))


def _check_node(node: Any, problem: Callable[[str, str], None]) -> str:
    """The box's name: the config's `node`, else the machine's."""
    if node is not None and not is_name(node):
        problem("", f"node must be {NAME_RULE} (it becomes an MQTT topic level)")
        node = None
    return node or default_node()


def _check_publish(table: dict | None, fill: Filler, problem: Callable[[str, str], None]) -> PublishConfig | None:
    """The [publish] table (None: there is none, or it has no usable url); `ca` relative to the config's folder."""
    if table is None:
        return None
    unknown_keys("publish", sorted(set(table) - set(PUBLISH_KEYS)), list(PUBLISH_KEYS), problem,
                 f"[publish] takes {', '.join(PUBLISH_KEYS)}", frigate="publish")
    url, ca = table.get("url"), table.get("ca")
    if ca is not None and (not isinstance(ca, str) or not ca):
        problem("publish", "ca must be the path of a CA certificate file")
        ca = None
    elif ca is not None:
        ca = str(fill.base / os.path.expanduser(ca))
        if (why := ca_problem(ca)) is not None:  # read as TLS will read it: a file that is no certificate
            problem("publish", f"ca: {ca}: {why}")
            ca = None
    if not isinstance(url, str) or not url:  # (a url whose ${…} could not be filled in was said so already)
        url = None if ("publish", "url") in fill.unfilled else problem("publish", "url is missing (e.g. url = "
                                                                       "\"mqtt://127.0.0.1:1883/zerocopy\")")
    else:
        try:
            MqttTarget.parse(url, ca=ca)  # the publisher's own check of its URL
        except ConfigError as e:
            problem("publish", f"url: {fill.mask(str(e))}")
    flags = {key: bool_value(table, key, "publish", False, problem) for key in ("detections", "frigate_events")}
    return PublishConfig(url=url, ca=ca, **flags) if url is not None else None


def _check_cameras(table: dict | None, given: dict[str, dict], defaults: dict[str, Any], broker: bool, fill: Filler,
                   problem: Problems, storage: bool = False) -> list[CameraConfig]:
    """The [cameras.NAME] tables (filled in; `given`: as written, to tell a url left out because its secret could
    not be filled in from one missing), each over `defaults`; `broker`: whether there is a [publish] table."""
    unfilled = {name: set(cam) - set((table or {}).get(name, {})) for name, cam in given.items()}
    if not table:
        problem("", "no camera: add at least one [cameras.NAME] table with its url")
    cameras = []
    for cam_name, cam in (table or {}).items():
        url_unfilled = bool({"url", "detect_url"} & unfilled.get(cam_name, set()))
        camera = _check_camera(cam_name, cam, defaults, broker, url_unfilled, fill, problem, storage)
        if camera is not None:
            cameras.append(camera)
    return cameras


def _check_camera(cam_name: str, cam: Any, defaults: dict[str, Any], broker: bool, url_unfilled: bool,
                  fill: Filler, problem: Problems, storage: bool = False) -> CameraConfig | None:
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
    own = _check_settings({k: v for k, v in cam.items() if k not in CAMERA_KEYS}, where, problem, fill.mask,
                          fill.base)
    settings = {**defaults, **own, **({"realtime": True} if loop else {})}  # a looped file is paced as live
    for key, value in CAMERA_DEFAULTS.items():  # anonymise needs every frame inferred: no motion, no detect_fps
        if key not in settings and not (key in EVERY_FRAME and settings.get("anonymise")):
            settings[key] = value
    try:
        RunConfig.make(settings)  # the settings together (each was checked alone above)
    except ConfigError as e:
        if len(problem.lines) == before:
            problem(where, fill.mask(str(e)))
    _check_model(settings, where, problem)
    if not isinstance(url, str) or not url.strip():
        return None
    url = url.strip()
    _check_url(url, where, problem, loop, key="url" if "url" in cam else "detect_url")
    if loop and source_kind(url) == "file":  # relative to the config's folder, like the other files
        url = str(fill.base / os.path.expanduser(url))
        if not Path(url).is_file():
            problem(where, f"url: {redact(url)!r}: no such file")
    record = check_record(cam, where, problem, storage, lambda u: _check_url(u, where, problem, loop),
                          anonymise=bool(settings.get("anonymise")))
    return CameraConfig(name=cam_name, url=url, settings=settings, enabled=enabled, publish=publishes and broker,
                        loop=loop, record=record)
