"""`zerocopy serve`'s config file: the box's name, the broker, the HTTP address and the cameras by name.

Read with `tomllib`, then checked whole: every problem is collected and reported on a line of its own
(`ServeConfigError.problems`: `[table] key: what is wrong`), so one `--check` shows them all. Each
camera is checked into its record by serve/camera_config.py (one check per setting, so a config with
three bad settings gives three lines; then one `RunConfig` of them all, made once). String values may
hold `${NAME}` (the environment variable NAME) and `${file:PATH}` (the contents of PATH, its trailing
newline removed: Docker and systemd credentials); `$$` is a literal `$`. What was filled in is never
shown: a problem line names the variable or the file, never its value. docs/serve.md is the reference.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zerocopy.config import default_node
from zerocopy.errors import ConfigError, ZeroCopyError
from zerocopy.names import NAME_RULE, is_name
from zerocopy.publish.homeassistant import HomeAssistantConfig
from zerocopy.publish.target import MqttTarget, ca_problem
from zerocopy.serve.camera_config import CAMERA_DEFAULTS, CameraConfig, check_cameras, check_settings
from zerocopy.serve.checks import Problems, bool_value, table_of, unknown_keys
from zerocopy.serve.frigate import FRIGATE_SUFFIXES, load_frigate
from zerocopy.serve.homeassistant_config import check_homeassistant
from zerocopy.serve.http_config import HttpConfig, check_http
from zerocopy.serve.record_config import RECORD_KEYS, record_defaults
from zerocopy.serve.secrets import Filler
from zerocopy.serve.storage_config import StorageConfig, check_storage

TOP_KEYS = ("node", "publish", "http", "homeassistant", "storage", "defaults", "cameras")
PUBLISH_KEYS = ("url", "ca", "detections", "frigate_events")


class ServeConfigError(ZeroCopyError):
    """The config cannot be used; `problems` holds one line per problem (without the file's name)."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


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
    table = table_of(raw, "defaults", problem) or {}
    recording = record_defaults(table, problem, storage is not None)
    defaults = check_settings({k: v for k, v in table.items() if k not in RECORD_KEYS}, "defaults", problem,
                              fill.mask, base)
    cameras = check_cameras(table_of(raw, "cameras", problem), given_cameras, defaults, publish is not None, fill,
                            problem, storage is not None, recording)
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
