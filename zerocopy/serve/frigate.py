"""A Frigate config (YAML, Frigate 0.14–0.16) read as written: mapped into the table `serve.config.parse_config` takes
from TOML, so every check, message and default of serve's own config applies to it. `mqtt` becomes `[publish]`, the
retain days `[storage] max_days`, each camera a `[cameras.NAME]` table (serve/frigate_camera.py); `{FRIGATE_X}`
becomes `${FRIGATE_X}`, or `${file:/run/secrets/FRIGATE_X}` when that file exists (filled in and masked as serve's
own secrets). A `zerocopy:` section (top level, or a camera's) holds serve's own keys, over what is mapped. What
cannot map is said once, one line each; what would change what is detected is a problem. docs/frigate.md."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from zerocopy.serve.frigate_camera import Report, camera_table, merged, unmapped

FRIGATE_SUFFIXES = (".yml", ".yaml")
SECRETS_DIR = "/run/secrets"  # Docker's secrets; systemd's $CREDENTIALS_DIRECTORY when set
SECRET = re.compile(r"\{(FRIGATE_[A-Za-z0-9_]*)\}")
# Frigate's top-level keys that have no zerocopy twin, and why (anything else unknown is said as not mapped too)
WHY = {
    "detectors": "zerocopy infers with OpenVINO on this box's GPU or CPU: `device` under zerocopy: defaults:",
    "model": "zerocopy runs its own models: `model` under zerocopy: defaults:",
    "go2rtc": "zerocopy runs no go2rtc; a camera reading its restream reads the stream's source",
    "birdseye": "zerocopy has no combined view", "ui": "zerocopy's page is its own",
    "telemetry": "zerocopy's figures are in /metrics", "audio": "zerocopy detects in pictures only",
    "review": "zerocopy has events, not review items", "database": "zerocopy keeps events in [storage]",
}
log = logging.getLogger(__name__)


@dataclass
class Frigate:
    """A Frigate config mapped: `table` as `parse_config` takes it (None: the file could not be read), the notes
    (said, not mapped) and the problems (refused)."""

    table: dict[str, Any] | None
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def load_frigate(path: Path, env: dict[str, str], default_model: str, parse: Callable[..., Any],
                 error: type[Exception]) -> Any:
    """The Frigate config at `path` checked as serve's own (`parse`: `parse_config`): `error` (`ServeConfigError`)
    with the mapping's problems, then the table's; its notes logged, one line each."""
    frigate = read_frigate(path, env, default_model)
    problems = list(frigate.problems)
    config = None
    if frigate.table is not None:
        try:
            config = parse(frigate.table, env=env, base=path.resolve().parent, name=str(path))
        except error as e:  # its problems go after the mapping's
            problems += list(getattr(e, "problems", [str(e)]))
    if problems:
        raise error(problems)  # type: ignore[call-arg]
    return config


def read_frigate(path: Path, env: dict[str, str], default_model: str, secrets_dir: str | None = None) -> Frigate:
    """The Frigate config at `path` mapped (`frigate_table`); its notes logged, one line each."""
    import yaml  # serve's extra (pyyaml)

    try:
        raw = yaml.safe_load(path.read_text())
    except OSError as e:
        return Frigate(None, problems=[f"cannot read it: {e.strerror or e}"])
    except UnicodeDecodeError:
        return Frigate(None, problems=["not a text file (YAML is UTF-8)"])
    except yaml.YAMLError as e:
        return Frigate(None, problems=[f"not valid YAML: {' '.join(str(e).split())}"])
    if not isinstance(raw, dict):
        return Frigate(None, problems=["a Frigate config is a mapping (mqtt:, cameras:, …)"])
    mapped = frigate_table(raw, env, default_model, secrets_dir)
    for note in mapped.notes:
        log.warning("%s: %s", path, note)
    return mapped


def frigate_table(raw: dict[str, Any], env: dict[str, str], default_model: str,
                  secrets_dir: str | None = None) -> Frigate:
    """Frigate's config `raw` (as YAML reads it) mapped into serve's config table; `default_model`: what a camera
    runs when the config names none (serve's default); `secrets_dir`: where `FRIGATE_X` files are (default:
    $CREDENTIALS_DIRECTORY, else /run/secrets)."""
    report = Report()
    folder = Path(secrets_dir or env.get("CREDENTIALS_DIRECTORY") or SECRETS_DIR)
    extra = raw.get("zerocopy") if isinstance(raw.get("zerocopy"), dict) else {}
    raw = secrets({k: v for k, v in raw.items() if k != "zerocopy"}, folder)
    table: dict[str, Any] = {}
    for key in raw:
        if key not in ("mqtt", "cameras", "detect", "objects", "motion", "record", "snapshots", "ffmpeg"):
            report.note("", key, WHY.get(key, "no zerocopy twin"))
    for key in ("detect", "objects", "motion", "record", "snapshots", "ffmpeg"):
        unmapped(raw.get(key), key, "", report)
    if isinstance(raw.get("mqtt"), dict):
        table["publish"] = publish_table(raw["mqtt"], env, folder, report)
    days = retain_days(raw)
    if days:
        table["storage"] = {"max_days": max(days)}
        if len(set(days)) > 1:
            report.said(f"storage: events and their files kept {max(days):g} days, the longest of Frigate's retain "
                        "settings (zerocopy keeps every event alike)")
    table["cameras"] = _cameras(raw, extra, default_model, report)
    table = merged(table, {k: v for k, v in extra.items() if k != "cameras"})
    return Frigate({k: v for k, v in table.items() if v is not None}, report.notes, report.problems)


def _cameras(raw: dict[str, Any], extra: dict[str, Any], default_model: str, report: Report) -> dict[str, Any]:
    """Each Frigate camera as a `[cameras.NAME]` table."""
    cameras = raw.get("cameras") if isinstance(raw.get("cameras"), dict) else {}
    streams = (raw.get("go2rtc") or {}).get("streams") if isinstance(raw.get("go2rtc"), dict) else None
    defaults = {"model": default_model, **(extra.get("defaults") if isinstance(extra.get("defaults"), dict) else {})}
    out = {}
    for name, own in cameras.items():
        if not isinstance(own, dict):
            out[name] = own  # said by serve's own check
            continue
        own_extra = own.get("zerocopy") if isinstance(own.get("zerocopy"), dict) else {}
        out[name] = camera_table(str(name), own, raw, {**((extra.get("cameras") or {}).get(name) or {}), **own_extra},
                                 defaults, streams if isinstance(streams, dict) else {}, report)
    return out


def secrets(value: Any, folder: Path) -> Any:
    """Frigate's `{FRIGATE_X}` as serve's `${…}`: the file FRIGATE_X of the secrets folder when there is one (as
    Frigate reads it), else the environment variable; a `$` of Frigate's text is a literal one (`$$`)."""
    if isinstance(value, dict):
        return {k: secrets(v, folder) for k, v in value.items()}
    if isinstance(value, list):
        return [secrets(v, folder) for v in value]
    if not isinstance(value, str):
        return value

    def one(m: re.Match) -> str:
        file = folder / m.group(1)
        return f"${{file:{file}}}" if file.is_file() else f"${{{m.group(1)}}}"

    return SECRET.sub(one, value.replace("$", "$$"))


def _secret(value: Any, env: dict[str, str], folder: Path, where: str, report: Report) -> str | None:
    """A user or password of `mqtt` as text (`${…}` filled in here: it goes into the broker's URL, percent-encoded);
    None when it cannot be (said)."""
    text = str(value).replace("$$", "\0")

    def one(m: re.Match) -> str:
        ref = m.group(1)
        if ref.startswith("file:"):
            try:
                return Path(ref[5:]).read_text().rstrip("\r\n")
            except OSError as e:
                report.problem("mqtt", f"{where}: cannot read the secret file {ref[5:]}: {e.strerror or e}")
                raise LookupError from None
        if ref not in env:
            report.problem("mqtt", f"{where}: {ref} is neither set in the environment nor a file in {folder}")
            raise LookupError
        return env[ref]

    try:
        return re.sub(r"\$\{([^}]*)\}", one, text).replace("\0", "$")
    except LookupError:
        return None


def publish_table(mqtt: dict[str, Any], env: dict[str, str], folder: Path, report: Report) -> dict[str, Any] | None:
    """`mqtt` as `[publish]`: `mqtt://user:password@host:port/topic_prefix` (mqtts:// with `tls_ca_certs`, its `ca`)."""
    for key in mqtt:
        if key not in ("enabled", "host", "port", "topic_prefix", "user", "password", "tls_ca_certs"):
            report.note("mqtt", key, "zerocopy makes its own client id per connection" if key == "client_id" else "")
    if mqtt.get("enabled") is False:
        return None
    if not mqtt.get("host"):
        report.problem("mqtt", "host is missing (the broker's name or address)")
        return None
    user = _secret(mqtt["user"], env, folder, "user", report) if mqtt.get("user") is not None else None
    password = _secret(mqtt["password"], env, folder, "password", report) \
        if mqtt.get("password") is not None else None
    auth = "" if user is None else quote(user, safe="") + ("" if password is None else
                                                           ":" + quote(password, safe="")) + "@"
    tls = bool(mqtt.get("tls_ca_certs"))
    host = str(mqtt["host"])
    host = f"[{host}]" if ":" in host else host
    prefix = str(mqtt.get("topic_prefix", "frigate")).strip("/")
    table: dict[str, Any] = {"url": f"{'mqtts' if tls else 'mqtt'}://{auth}{host}:{mqtt.get('port', 1883)}/{prefix}",
                             "frigate_events": True}  # every event on PREFIX/events, as Frigate's
    if tls:
        table["ca"] = str(mqtt["tls_ca_certs"])
    return table


def retain_days(raw: dict[str, Any]) -> list[float]:
    """Every retain setting in days (global and each camera's, above 0): `record.retain.days`, the `retain.days` of
    `record.alerts`/`detections` and `record.events.retain.default` (before 0.14), `snapshots.retain.default`."""
    sections = [raw, *[c for c in (raw.get("cameras") or {}).values() if isinstance(c, dict)]]
    days = []
    for section in sections:
        record = section.get("record") if isinstance(section.get("record"), dict) else {}
        snapshots = section.get("snapshots") if isinstance(section.get("snapshots"), dict) else {}
        found = [(record.get("retain"), "days"), (snapshots.get("retain"), "default"),
                 *[(r.get("retain"), "days") for r in (record.get("alerts"), record.get("detections"))
                   if isinstance(r, dict)],
                 ((record.get("events") or {}).get("retain") if isinstance(record.get("events"), dict) else None,
                  "default")]
        days += [float(r[k]) for r, k in found if isinstance(r, dict) and isinstance(r.get(k), int | float)
                 and not isinstance(r.get(k), bool) and r[k] > 0]
    return days
