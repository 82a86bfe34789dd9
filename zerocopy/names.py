"""Camera and node names: each becomes an MQTT topic level (and a name in events), so only letters, digits, `-`
and `_`; an input's default name comes from its source. Labels: one spelling everywhere (`spelled`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

from zerocopy.redaction import redact
from zerocopy.sources import url_scheme

_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]+")
NAME_RULE = "a name of letters, digits, - and _"  # camera and node names: each becomes an MQTT topic level


def spelled(labels: Iterable[str]) -> tuple[str, ...]:
    """A detector's labels as zerocopy spells them everywhere (results, JSON Lines, events, MQTT topics, serve's API,
    metrics, page and store): lower case, as Frigate's (`Person` → `person`)."""
    return tuple(label.lower() for label in labels)


def is_name(text: object) -> bool:
    """Whether `text` is a camera or node name: non-empty, only letters, digits, `-` and `_`."""
    return isinstance(text, str) and text != "" and not _NAME_CHARS.search(text)


def camera_name(source: str | Path) -> str:
    """A name for an input in events and MQTT topics (`--name` overrides it): a file's stem, a URL's last
    path part (or its host), a device's name; only letters, digits, `-` and `_`."""
    text = str(source)
    scheme = url_scheme(text)
    if scheme is not None:
        parts = urlsplit(redact(text))
        tail = [p for p in parts.path.split("/") if p]
        raw = Path(tail[-1]).stem if tail else (parts.hostname or scheme)
    else:
        raw = Path(text).stem or Path(text).name
    return as_name(raw, "input")


def as_name(text: str, fallback: str) -> str:
    """`text` made a name (`is_name`): each run of other characters becomes `_`; `fallback` if none is left."""
    return _NAME_CHARS.sub("_", text).strip("_") or fallback
