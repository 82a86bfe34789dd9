"""The keys a Frigate 0.14–0.16 config may hold, by section: a key Frigate knows that zerocopy does not map is said
(a note), a key Frigate itself would refuse (a misspelling: `fsp`, `objets`, `enabeld`) is a problem with the nearest
key it knows, so that a typo never silently turns a setting off."""

from __future__ import annotations

import difflib
import re

KNOWN: dict[str, tuple[str, ...]] = {
    "": ("mqtt", "tls", "proxy", "auth", "database", "logger", "environment_vars", "birdseye", "detectors", "model",
         "genai", "audio", "ffmpeg", "detect", "objects", "record", "snapshots", "go2rtc", "live", "motion", "review",
         "semantic_search", "face_recognition", "lpr", "classification", "ui", "telemetry", "notifications",
         "camera_groups", "cameras", "timestamp_style", "version", "safe_mode", "zerocopy"),
    "camera": ("name", "enabled", "ffmpeg", "detect", "objects", "motion", "record", "snapshots", "zones", "audio",
               "birdseye", "live", "mqtt", "onvif", "review", "semantic_search", "timestamp_style", "ui", "webui_url",
               "best_image_timeout", "type", "lpr", "face_recognition", "notifications", "genai", "friendly_name",
               "zerocopy"),
    "mqtt": ("enabled", "host", "port", "topic_prefix", "client_id", "stats_interval", "user", "password",
             "tls_ca_certs", "tls_client_cert", "tls_client_key", "tls_insecure", "qos"),
    "detect": ("enabled", "height", "width", "fps", "min_initialized", "max_disappeared", "stationary",
               "annotation_offset"),
    "objects": ("track", "filters", "mask", "genai"),
    "motion": ("enabled", "threshold", "lightning_threshold", "improve_contrast", "contour_area", "delta_alpha",
               "frame_alpha", "frame_height", "mask", "mqtt_off_delay"),
    "record": ("enabled", "sync_recordings", "expire_interval", "retain", "alerts", "detections", "events", "export",
               "preview"),
    "record.events": ("pre_capture", "post_capture", "objects", "required_zones", "retain"),
    "record.alerts": ("pre_capture", "post_capture", "retain"),
    "record.detections": ("pre_capture", "post_capture", "retain"),
    "snapshots": ("enabled", "clean_copy", "timestamp", "bounding_box", "crop", "height", "required_zones", "retain",
                  "quality"),
    "ffmpeg": ("path", "global_args", "hwaccel_args", "input_args", "output_args", "retry_interval",
               "apple_compatibility", "gpu", "inputs"),
    "ffmpeg.inputs": ("path", "roles", "global_args", "hwaccel_args", "input_args"),
    "zone": ("coordinates", "distances", "filters", "inertia", "loitering_time", "speed_threshold", "objects",
             "friendly_name"),
}
_CAMERA = re.compile(r"^cameras\.[^.]+")
_ZONE = re.compile(r"\.zones\.[^.]+$")


def section_of(where: str) -> str:
    """The section of Frigate's reference a place in the file is (`cameras.front.detect` → `detect`,
    `cameras.front` → `camera`, `cameras.front.zones.porch` → `zone`)."""
    if _ZONE.search(where):
        return "zone"
    inner = _CAMERA.sub("", where).lstrip(".")
    return "camera" if where and not inner else inner


def unknown(where: str, key: str) -> str | None:
    """None for a key Frigate knows at `where` (or a section this table does not list); else the problem: the key is
    not Frigate's, with the nearest one that is."""
    known = KNOWN.get(section_of(where))
    if known is None or key in known or key.startswith("roles: "):
        return None
    near = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    if near:
        return f"unknown key {key!r} (did you mean {near[0]}?)"
    return f"unknown key {key!r}; Frigate's {section_of(where) or 'top level'} takes {', '.join(known)}"
