"""One Frigate camera (its own sections over Frigate's global ones) mapped to a `[cameras.NAME]` table of serve's
config: inputs by role, `detect`, `objects`, `zones`, `motion`, `record`. What does not map is a note (one line,
said once); what would change what is detected and cannot map is a problem. docs/frigate.md is the reference."""

from __future__ import annotations

from typing import Any

from zerocopy.catalog import CATALOG
from zerocopy.names import spelled
from zerocopy.serve.frigate_objects import map_objects
from zerocopy.serve.frigate_report import Report, known_labels, masks, polygon

FRIGATE_FPS = 5.0  # Frigate detects 5 frames a second unless told otherwise
RETAIN_MODES = {"all": "continuous", "motion": "motion", "active_objects": "motion"}  # Frigate's record.retain.mode
CAMERA_SECTIONS = ("ffmpeg", "detect", "objects", "motion", "record", "snapshots")
MAPPED = {
    "detect": ("enabled", "width", "height", "fps", "min_initialized", "max_disappeared"),
    "objects": ("track", "filters", "mask"),
    "motion": ("enabled", "threshold", "mask", "mqtt_off_delay"),
    "record": ("enabled", "retain", "events", "alerts", "detections"),
    "snapshots": ("enabled", "retain"),
    "ffmpeg": ("inputs",),
}
WHY = {"contour_area": "zerocopy's motion gate counts changed pixels, not contours",
       "hwaccel_args": "zerocopy picks its own decoding path, VA-API when it can",
       "input_args": "zerocopy opens streams with its own options", "output_args": "zerocopy writes no FFmpeg output",
       "stationary": "zerocopy's tracker keeps still objects as it keeps moving ones"}


def unmapped(section: Any, name: str, where: str, report: Report) -> None:
    """Each key of a section that is not mapped, said once."""
    if isinstance(section, dict):
        for key in section:
            if key not in MAPPED.get(name, ()):
                report.note(f"{where}.{name}" if where else name, key, WHY.get(key, ""))


def merged(base: Any, own: Any) -> Any:
    """Frigate's global section with a camera's own over it, key by key (as Frigate merges them)."""
    if isinstance(base, dict) and isinstance(own, dict):
        return {**base, **{k: merged(base.get(k), v) for k, v in own.items()}}
    return own if own is not None else base


def model_labels(camera: dict[str, Any]) -> tuple[str, ...] | None:
    """The labels of the model a mapped camera runs (None: a file or a labels file, read only when it runs)."""
    model = camera.get("model")
    if camera.get("labels") or model not in CATALOG or not CATALOG[model].labels:
        return None
    return spelled(CATALOG[model].labels)


def camera_table(name: str, own: dict[str, Any], glob: dict[str, Any], extra: dict[str, Any],
                 defaults: dict[str, Any], go2rtc: dict[str, Any], report: Report) -> dict[str, Any]:
    """Frigate's camera `name` (`own`, over the global sections `glob`) as a `[cameras.NAME]` table; `extra`: its
    `zerocopy:` section (zerocopy's own keys, over what is mapped), `defaults`: the `zerocopy:` section's
    `defaults` (the model, with `extra`'s); `go2rtc`: go2rtc's streams, by name."""
    where = f"cameras.{name}"
    for key in own:
        if key not in (*CAMERA_SECTIONS, "enabled", "zones", "zerocopy"):
            report.note(where, key, "no zerocopy twin")
    for section in CAMERA_SECTIONS:
        unmapped(own.get(section), section, where, report)
    sec = {s: merged(glob.get(s), own.get(s)) or {} for s in CAMERA_SECTIONS}
    table: dict[str, Any] = {}
    if own.get("enabled") is False:
        table["enabled"] = False
    _inputs(sec["ffmpeg"].get("inputs"), go2rtc, where, table, report)
    size = _detect(sec["detect"], where, table, report)
    run = {**defaults, **extra}
    labels = model_labels(run)
    model = str(run.get("model"))
    map_objects(sec["objects"], labels, model, size, where, table, report)
    _zones(own.get("zones"), labels, model, size, where, table, report)
    _motion(sec["motion"], size, where, table, report)
    _record(sec["record"], where, table, report)
    if run.get("anonymise"):  # every frame inferred, so that nothing it hides shows between two
        table.pop("detect_fps")
        report.said(f"{where}.detect.fps: not mapped: a camera with anonymise infers every frame")
    if sec["snapshots"].get("enabled") is False:
        report.said(f"{where}.snapshots.enabled: false is not mapped: zerocopy keeps every event's snapshot")
    return {**table, **extra}


def _inputs(inputs: Any, go2rtc: dict[str, Any], where: str, table: dict[str, Any], report: Report) -> None:
    """`ffmpeg.inputs` by role: the `detect` input is the camera's `url`, the `record` one its `record_url`."""
    roles: dict[str, list[str]] = {}
    for item in inputs if isinstance(inputs, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            report.problem(f"{where}.ffmpeg.inputs", "an input is a table with a path and its roles")
            continue
        for key in item:
            if key not in ("path", "roles"):
                report.note(f"{where}.ffmpeg.inputs", key, WHY.get(key, ""))
        for role in item.get("roles") or []:
            roles.setdefault(str(role), []).append(_restreamed(item["path"], go2rtc, where, report))
    for role in set(roles) - {"detect", "record"}:
        report.note(f"{where}.ffmpeg.inputs", f"roles: {role}", "zerocopy uses detect and record")
    if len(roles.get("detect", [])) != 1:
        report.problem(f"{where}.ffmpeg.inputs", "exactly one input has the detect role (the stream zerocopy "
                       f"decodes), not {len(roles.get('detect', []))}")
    else:
        table["url"] = roles["detect"][0]
    if len(roles.get("record", [])) > 1:
        report.problem(f"{where}.ffmpeg.inputs", "at most one input has the record role")
    elif roles.get("record") and roles["record"][0] != table.get("url"):
        table["record_url"] = roles["record"][0]


def _restreamed(path: str, go2rtc: dict[str, Any], where: str, report: Report) -> str:
    """go2rtc's restream of a stream it names (`rtsp://127.0.0.1:8554/NAME`) read at its source: go2rtc is not run."""
    for host in ("127.0.0.1:8554/", "localhost:8554/"):
        if path.startswith(f"rtsp://{host}"):
            stream = path.removeprefix(f"rtsp://{host}").split("?")[0]
            sources = go2rtc.get(stream)
            for source in sources if isinstance(sources, list) else [sources]:
                url = str(source or "").removeprefix("ffmpeg:").split("#")[0]
                if url.startswith(("rtsp://", "rtsps://", "http://", "https://", "rtmp://")):
                    report.said(f"{where}: {path} is go2rtc's restream of {stream}: read at its source instead "
                                "(zerocopy runs no go2rtc)")
                    return url
    return path


def _detect(detect: dict[str, Any], where: str, table: dict[str, Any],
            report: Report) -> tuple[float, float] | None:
    """`detect`: fps (Frigate's default 5), min_initialized, max_disappeared (frames at that fps), enabled; the
    detect size that pixel coordinates are given in (None: the stream's own)."""
    fps = detect.get("fps", FRIGATE_FPS)
    table["detect_fps"] = fps
    if "min_initialized" in detect:
        table["min_hits"] = detect["min_initialized"]
    if isinstance(detect.get("max_disappeared"), int | float) and isinstance(fps, int | float) and fps > 0:
        table["max_lost"] = detect["max_disappeared"] / fps
    if detect.get("enabled") is False:
        table["enabled"] = False
        report.said(f"{where}.detect.enabled: false: the camera is not run (zerocopy records around detected "
                    "objects only)")
    width, height = detect.get("width"), detect.get("height")
    if isinstance(width, int | float) and isinstance(height, int | float) and width > 0 and height > 0:
        return float(width), float(height)
    return None


def _zones(zones: Any, labels: tuple[str, ...] | None, model: str, size: tuple[float, float] | None, where: str,
           table: dict[str, Any], report: Report) -> None:
    """`zones`: coordinates → points, objects → labels, inertia → min_frames, loitering_time → loiter_s."""
    out = {}
    for name, zone in (zones or {}).items() if isinstance(zones, dict) else []:
        here = f"{where}.zones.{name}"
        if not isinstance(zone, dict):
            report.problem(here, "a zone is a table with its coordinates")
            continue
        for key in zone:
            if key in ("filters", "speed_threshold"):
                report.problem(here, f"{key}: not mapped: objects it would leave out would count in the zone")
            elif key not in ("coordinates", "objects", "inertia", "loitering_time"):
                report.note(here, key)
        try:
            spec: dict[str, Any] = {"points": polygon(zone.get("coordinates"), size)}
        except (TypeError, ValueError):
            report.problem(here, "coordinates: x1,y1,x2,y2,… (pixels of the detect size, or fractions)")
            continue
        if zone.get("objects"):
            spec["labels"] = known_labels(zone["objects"], labels, model, f"{here}.objects", report)
            if not spec["labels"]:
                report.said(f"{here}: none of its objects is a label of the model {model}: the zone is left out")
                continue
        if "inertia" in zone:
            spec["min_frames"] = zone["inertia"]
        if zone.get("loitering_time"):
            spec["loiter_s"] = zone["loitering_time"]
        out[str(name)] = spec
    if out:
        table["zones"] = out


def _motion(motion: dict[str, Any], size: tuple[float, float] | None, where: str, table: dict[str, Any],
            report: Report) -> None:
    """`motion`: enabled → motion, threshold → motion_threshold, mask → motion_mask, mqtt_off_delay →
    motion_off_delay."""
    for key, name in (("enabled", "motion"), ("threshold", "motion_threshold"), ("mqtt_off_delay", "motion_off_delay")):
        if key in motion:
            table[name] = motion[key]
    if motion.get("mask"):
        try:
            table["motion_mask"] = masks(motion["mask"], size)
        except (TypeError, ValueError):
            report.problem(f"{where}.motion", "mask: x1,y1,x2,y2,… (pixels of the detect size, or fractions)")


def _record(record: dict[str, Any], where: str, table: dict[str, Any], report: Report) -> None:
    """`record`: enabled (Frigate's default: off) → record, as `retain.mode` says (all: "continuous"; motion,
    active_objects: "motion"; none, or no mode: "events"); pre/post_capture of `events` (before 0.14) or
    `alerts`/`detections` (0.14 on: the longer of the two) → pre_capture/post_capture."""
    retain = record.get("retain") if isinstance(record.get("retain"), dict) else {}
    days = retain.get("days")
    mode = RETAIN_MODES.get(retain.get("mode", "all"), "events") if days else "events"  # (Frigate: days 0, none kept)
    table["record"] = mode if record.get("enabled", False) is True else record.get("enabled", False)
    if mode != "events" and isinstance(days, int | float) and not isinstance(days, bool):
        table["retain_days"] = days
    if mode != "events" and retain.get("mode") == "active_objects":
        report.said(f"{where}.record.retain.mode: active_objects is kept as motion (the segments with motion or "
                    "objects kept retain.days, the rest a day)")
    for key in ("pre_capture", "post_capture"):
        values = [s[key] for s in (record.get(k) for k in ("events", "alerts", "detections"))
                  if isinstance(s, dict) and isinstance(s.get(key), int | float)]
        if values:
            table[key] = max(values)
    for name in ("events", "alerts", "detections"):
        for key in record.get(name) or {} if isinstance(record.get(name), dict) else {}:
            if key not in ("pre_capture", "post_capture", "retain"):
                report.note(f"{where}.record.{name}", key)
