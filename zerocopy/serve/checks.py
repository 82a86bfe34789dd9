"""The small checks every table of `zerocopy serve`'s config uses: problems collected one line each, unknown keys
with a close match suggested, tables and booleans of the right type."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable


class Problems:
    def __init__(self):
        self.lines: list[str] = []

    def __call__(self, where: str, what: str) -> None:
        self.lines.append(f"[{where}] {what}" if where else what)


# Frigate's keys written in serve's TOML (issue 37), table by table: key → (zerocopy's name, Frigate's key in full)
MQTT = "mqtt (host, port, user, password and topic_prefix make one URL)"
_CAMERA = {
    "objects": ("classes", "objects.track"),
    "min_score": ("filters", "objects.filters.LABEL.min_score"),
    "ffmpeg": ("url and record_url", "ffmpeg.inputs with roles detect and record"),
    "inputs": ("url and record_url", "ffmpeg.inputs with roles detect and record"),
    "detect": ("detect_fps", "detect.fps"), "fps": ("detect_fps", "detect.fps"),
    "mask": ("motion_mask", "motion.mask"),
    "events": ("pre_capture and post_capture", "record.events"),
    "retain": ("[storage] max_days", "record.retain.days"), "mqtt": ("publish", "cameras.NAME.mqtt.enabled"),
}
FRIGATE_KEYS: dict[str, dict[str, tuple[str, str]]] = {
    "top": {"mqtt": ("[publish] url", MQTT), "objects": ("[defaults] classes", "objects.track"),
            "detect": ("[defaults] detect_fps", "detect.fps"), "motion": ("[defaults] motion_threshold", "motion"),
            "record": ("[cameras.NAME] record and [storage] max_days", "record"),
            "snapshots": ("[storage] (every event's snapshot is kept there)", "snapshots"),
            "database": ("[storage] path", "database.path")},
    "camera": _CAMERA,
    "zone": {"coordinates": ("points", "coordinates"), "objects": ("labels", "objects"),
             "inertia": ("min_frames", "inertia"), "loitering_time": ("loiter_s", "loitering_time")},
    "line": {"coordinates": ("points", "coordinates"), "objects": ("labels", "objects")},
    "publish": {key: ("url", f"mqtt.{key} (host, port, user, password and topic_prefix make one URL)")
                for key in ("host", "port", "user", "password", "topic_prefix", "client_id")}
    | {"tls_ca_certs": ("ca", "mqtt.tls_ca_certs")},
    "storage": {"days": ("max_days", "record.retain.days"), "retain": ("max_days", "record.retain.days")},
    "homeassistant": {"discovery_prefix": ("prefix", "discovery_prefix")},
}
# serve's own keys that have a new name, table by table: old key → (its new name, what the new one does)
RENAMED: dict[str, dict[str, tuple[str, str]]] = {
    "http": {"snapshots": ("latest", "latest = false keeps no picture for /api/cameras/NAME/latest.jpg; every "
                           "event's snapshot is kept either way, in the [storage] folder")},
}


def did_you_mean(key: str, known: Iterable[str]) -> str:
    """The hint ` (did you mean NAME?)`, NAME the closest of `known` to `key` (difflib's); "" when none is close."""
    close = difflib.get_close_matches(key, list(known), n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def unknown_keys(where: str, keys: list[str], known: list[str], problem: Callable[[str, str], None], what: str,
                 frigate: str = "") -> None:
    """One line for each of `keys`, with the closest of `known` ("did you mean …?"), for a key Frigate writes so
    (`FRIGATE_KEYS[frigate]`) zerocopy's name for it, and for a key serve renamed (`RENAMED[where]`) its new name."""
    for key in keys:
        if (renamed := RENAMED.get(where, {}).get(key)) is not None:
            problem(where, f"{key} is now called {renamed[0]}: {renamed[1]}")
            continue
        if (named := FRIGATE_KEYS.get(frigate, {}).get(key)) is not None:
            hint = f" (did you mean {named[0]}? zerocopy's name for Frigate's {named[1]})"
        else:
            hint = did_you_mean(key, known)
        problem(where, f"unknown key {key!r}{hint}; {what}")


# Frigate's tables where serve takes one value (`[cameras.X.motion]`, `.record`, `.snapshots`): what serve has instead
SNAPSHOTS = ("snapshots: serve keeps every tracked object's snapshot by itself, in the [storage] folder "
             "(snapshots/CAMERA/ID.jpg, kept [storage] max_days; snapshot_interval: how often a lasting object's is "
             "refreshed); [http] latest = false stops latest.jpg")
FRIGATE_TABLES = {
    "motion": "motion is true or false here: Frigate's motion.threshold is motion_threshold, motion.mask motion_mask",
    "record": "record is true or false here: Frigate's record.events.pre_capture and post_capture are pre_capture and "
              "post_capture, record.retain.days is [storage] max_days",
    "snapshots": SNAPSHOTS,
}


def shape_keys(where: str, given: object, options: tuple[str, ...], kind: str,
               problem: Callable[[str, str], None]) -> bool:
    """A zone's or a line's table (`[cameras.X.zones.NAME]`): every unknown key said (True: none)."""
    if not isinstance(given, dict):
        return True
    known = ["points", *options]
    unknown = sorted(set(given) - set(known))
    unknown_keys(where, unknown, known, problem, f"a {kind} takes {', '.join(known)}", frigate=kind)
    return not unknown


def table_of(raw: dict, key: str, problem: Callable[[str, str], None]) -> dict | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        problem("", f"{key} must be a table ([{key}]), not a {type(value).__name__}")
        return None
    return value


def bool_value(table: dict, key: str, where: str, default: bool, problem: Callable[[str, str], None]) -> bool:
    value = table.get(key, default)
    if isinstance(value, dict) and key in FRIGATE_TABLES:
        problem(where, FRIGATE_TABLES[key])
        return default
    if not isinstance(value, bool):
        problem(where, f"{key} must be true or false, not a {type(value).__name__}")
        return default
    return value
