"""What the inputs are: folders expanded into their videos, and each source's kind (a file, a network
URL, a V4L2 camera), which decides how it is opened and read."""

from __future__ import annotations

import os
import re
from pathlib import Path

from zerocopy.errors import InputError
from zerocopy.redaction import redact

VIDEO_SUFFIXES = {".mp4", ".m4v", ".mov", ".mkv", ".webm", ".avi", ".ts", ".mts", ".m2ts", ".mpg", ".mpeg",
                  ".flv", ".wmv", ".h264", ".264", ".h265", ".265", ".hevc", ".ivf", ".y4m",
                  # still images: FFmpeg reads each as a one-frame video, as when one is named alone
                  ".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff"}


def expand_inputs(inputs: list[str]) -> list[str]:
    """Folders become their video and image files (by suffix, sorted, not recursive); other inputs
    stay as given."""
    out: list[str] = []
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            videos = sorted(str(p) for p in path.iterdir() if p.is_file() and p.suffix.lower() in VIDEO_SUFFIXES)
            if not videos:
                raise InputError(f"{item}: a directory with no video or image files")
            out += videos
        else:
            out.append(item)
    return out


NETWORK_SCHEMES = ("rtsp", "rtsps", "http", "https", "udp", "tcp", "rtmp", "rtmps", "rtmpt", "rtmpe", "rtmpte",
                   "rtmpts", "srt", "rtp", "mmsh", "mmst", "tls")
_URL = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")


def url_scheme(source: str | Path) -> str | None:
    """`rtsp` for `rtsp://…`; None for a path."""
    m = _URL.match(str(source))
    return m.group(1).lower() if m else None


def is_network(source: str | Path) -> bool:
    return url_scheme(source) in NETWORK_SCHEMES


def is_device(source: str | Path) -> bool:
    """A V4L2 capture device: `/dev/videoN`, or one of udev's `/dev/v4l/by-id|by-path/…` links to it. Judged on
    the path with its `.`, `..` and repeated slashes resolved (`/dev/v4l/../../etc/passwd` is `/etc/passwd`, a
    file), never on how it begins."""
    if url_scheme(source) is not None:
        return False
    s = os.path.normpath(str(source))
    return (os.path.dirname(s) == "/dev" and os.path.basename(s).startswith("video")) or s.startswith("/dev/v4l/")


def is_live(source: str | Path) -> bool:
    """Whether `source` is read as it comes (a network URL or a camera) rather than from a file."""
    return is_network(source) or is_device(source)


def source_kind(source: str | Path) -> str:
    """"network", "device" or "file"."""
    return "network" if is_network(source) else "device" if is_device(source) else "file"


_HOST_PORT = re.compile(r"^[\w.-]+:\d+(/|$)")


def schemeless_url(text: str) -> str | None:
    """`text` redacted, if it is a network address written without its scheme (`admin:pw@cam/live`,
    `cam.lan:554/stream`); None for anything else."""
    if url_scheme(text) is not None or not ("@" in text.split("/")[0] or _HOST_PORT.match(text)):
        return None
    return redact("rtsp://" + text)[len("rtsp://"):]
