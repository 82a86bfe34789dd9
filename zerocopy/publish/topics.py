"""The topic levels a label becomes. Camera, zone, line and node names are checked when given (letters, digits, `-`
and `_`: `names.is_name`); a label comes from a model's labels file and may hold anything, so it is made a level
here (`topic_label`), by every topic that holds one: the counts, the snapshots and Home Assistant's discovery."""

from __future__ import annotations

import re

from zerocopy.analytics.specs import RESERVED

# what cannot be in one topic level (`/` separates levels, `+` and `#` are wildcards, NUL is refused by brokers),
# and control characters, which no reader of a topic wants
_NOT_IN_LEVEL = re.compile(r"[/+#\x00-\x1f\x7f]+")
UNNAMED_LABEL = "label"  # a label that leaves nothing once made a level


def topic_label(label: str) -> str:
    """`label` as one topic level: lower case (as Frigate's), each run of `/`, `+`, `#`, NUL or control characters
    written `_`, without `_` or spaces at either end; never empty; one of a camera's own levels (`events`, `lines`,
    `snapshot`, …: `analytics.specs.RESERVED`) ends in `_`. `front/door` is `front_door`, `Snap#` `snap`."""
    level = _NOT_IN_LEVEL.sub("_", label.lower()).strip("_ ") or UNNAMED_LABEL
    return f"{level}_" if level in RESERVED else level


def count_topic(camera: str, zone: str | None, label: str) -> str:
    """The retained count of `label` in view of `camera` (`zone` None) or in `zone`, under the prefix:
    `CAMERA/LABEL` or `CAMERA/ZONE/LABEL`."""
    return "/".join([camera, *([zone] if zone else []), topic_label(label)])


def snapshot_topic(camera: str, label: str) -> str:
    """The retained latest snapshot of an object of `label` in `camera`, under the prefix: `CAMERA/LABEL/snapshot`."""
    return f"{camera}/{topic_label(label)}/snapshot"
