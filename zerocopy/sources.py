"""What the inputs are: folders expanded into their videos, and each source's kind (a file, a network
URL, a V4L2 camera), which decides how it is opened and read."""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

from zerocopy.errors import InputError

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


# Query keys whose values are credentials (camera vendors and streaming servers use all of these).
_SECRET_KEY = re.compile(r"pass|pwd|token|secret|key|auth|sig|session|credential|jwt|ticket", re.IGNORECASE)
_PARAM = re.compile(r"(?P<sep>[?&;])(?P<key>[^=&;#?/]+)=(?P<value>[^&;#]*)")
_SRT_PASSWORD = re.compile(r"([,:])p=[^,&#]*")
_URL_IN_TEXT = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>]+")
MASK = "***"
MIN_MASKED = 3  # a secret value at least this long is masked wherever it appears (shorter ones would mask words)

# Values this process filled in from the environment or from files (`zerocopy serve`'s `${NAME}`, `${file:PATH}`),
# by how many `masking()` blocks hold each: `redact` and `redact_text` mask every one of them wherever it appears.
_secret_holds: Counter[str] = Counter()
_secrets: tuple[str, ...] = ()  # the same values, longest first (one masked inside another is masked whole)
_secrets_lock = threading.Lock()


@contextlib.contextmanager
def masking(values: Iterable[str]) -> Iterator[None]:
    """While the block runs, every value of `values` (`MIN_MASKED` characters or more) is masked (`***`) in all
    that `redact` and `redact_text` show: the events' and the report's `source`, `/api/*`, errors, the log. For
    secrets filled in anywhere in a source (a user, a password, a path, a query) or elsewhere, which no rule of
    `redact` could tell from the rest."""
    global _secrets
    held = [v for v in set(values) if len(v) >= MIN_MASKED]
    with _secrets_lock:
        _secret_holds.update(held)
        _secrets = tuple(sorted(_secret_holds, key=len, reverse=True))
    try:
        yield
    finally:
        with _secrets_lock:
            _secret_holds.subtract(held)
            for value in [v for v, n in _secret_holds.items() if n <= 0]:  # held by no block any more
                del _secret_holds[value]
            _secrets = tuple(sorted(_secret_holds, key=len, reverse=True))


def mask_secrets(text: str) -> str:
    """`text` with every value held by `masking` replaced by `***`."""
    for value in _secrets:
        text = text.replace(value, MASK)
    return text


def redact(source: str) -> str:
    """`source` as it may be shown or written anywhere: a URL's password (or a bare token before the
    `@`, even one holding an unencoded `/` or `@`), the values of credential-like parameters in its
    query or path (`?token=…`, `;password=…`: `token`, `password`, `key`, `auth`, …) and an SRT
    stream id's `p=` masked; anything else unchanged. The real source is still what gets opened. This
    is the one place that decides what a secret in a source looks like; values held by `masking` (filled
    in from the environment or files) are masked wherever they are in it."""
    source = mask_secrets(source)
    m = _URL.match(source)
    if m is None:
        return source
    scheme, rest = source[: m.end()], source[m.end():]
    # the authority ends at the first / ? # after the last @ (a password may hold an unencoded / or @); an @
    # right after a / begins a path segment (npm's /@scope/name), never ends a password
    at = min((i for i in (rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    while (at := rest.rfind("@", 0, at)) > 0 and rest[at - 1] == "/":
        pass
    cut = min((i for i in (rest.find("/", at + 1), rest.find("?", at + 1), rest.find("#", at + 1)) if i >= 0),
              default=len(rest))
    authority, tail = rest[:cut], rest[cut:]
    userinfo, at_sign, host = authority.rpartition("@")
    if at_sign:
        user, colon, _ = userinfo.partition(":")
        authority = f"{user}:{MASK}@{host}" if colon else f"{MASK}@{host}"
    tail = _PARAM.sub(lambda p: f"{p['sep']}{p['key']}={MASK}" if _SECRET_KEY.search(p["key"]) else p[0], tail)
    if m.group(1).lower() == "srt":  # streamid=#!::u=name,p=secret (the SRT access control syntax)
        tail = _SRT_PASSWORD.sub(rf"\g<1>p={MASK}", tail)
    return scheme + authority + tail


_HOST_PORT = re.compile(r"^[\w.-]+:\d+(/|$)")


def schemeless_url(text: str) -> str | None:
    """`text` redacted, if it is a network address written without its scheme (`admin:pw@cam/live`,
    `cam.lan:554/stream`); None for anything else."""
    if url_scheme(text) is not None or not ("@" in text.split("/")[0] or _HOST_PORT.match(text)):
        return None
    return redact("rtsp://" + text)[len("rtsp://"):]


def redact_text(text: str) -> str:
    """Every URL inside `text` (an error message, FFmpeg's log line) redacted as `redact` does, and every value
    held by `masking` masked wherever it is."""
    def one(m: re.Match) -> str:
        url = m.group(0).rstrip(":,.;)]")  # the punctuation of the sentence around it
        return redact(url) + m.group(0)[len(url):]

    text = mask_secrets(text)
    return _URL_IN_TEXT.sub(one, text) if "://" in text else text


_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]+")
NAME_RULE = "a name of letters, digits, - and _"  # camera and node names: each becomes an MQTT topic level


def is_name(text: object) -> bool:
    """Whether `text` is a camera or node name: non-empty, only letters, digits, `-` and `_`."""
    return isinstance(text, str) and text != "" and not _NAME_CHARS.search(text)


def camera_name(source: str | Path) -> str:
    """A name for an input in events and MQTT topics (`--name` overrides it): a file's stem, a URL's last
    path part (or its host), a device's name; only letters, digits, `-` and `_`."""
    text = str(source)
    m = _URL.match(text)
    if m is not None:
        from urllib.parse import urlsplit

        parts = urlsplit(redact(text))
        tail = [p for p in parts.path.split("/") if p]
        raw = Path(tail[-1]).stem if tail else (parts.hostname or m.group(1))
    else:
        raw = Path(text).stem or Path(text).name
    return as_name(raw, "input")


def as_name(text: str, fallback: str) -> str:
    """`text` made a name (`is_name`): each run of other characters becomes `_`; `fallback` if none is left."""
    return _NAME_CHARS.sub("_", text).strip("_") or fallback
