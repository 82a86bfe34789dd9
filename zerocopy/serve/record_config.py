"""A camera's recording keys in serve's config (docs/serve.md, *Recording*): `record` ("events": its events' clips,
the default where there is a `[storage]` folder, also said `true`; "continuous": every segment kept `retain_days`;
"motion": the segments with motion or objects kept `retain_days`, the others a day; `false`), `record_url` (the
main stream, only demuxed into the camera's packet ring; default: the camera's `url`, on a second connection),
`retain_days` (default: `[storage] max_days`), `pre_capture`, `post_capture` (seconds, default 5) and
`record_buffer_mb` (the ring's size, default 64, or 8 for a camera that writes segments: its clips are made from
them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from zerocopy.record.camera import DEFAULT_POST_S, DEFAULT_PRE_S
from zerocopy.serve.checks import FRIGATE_TABLES

RECORD_KEYS = ("record", "record_url", "retain_days", "pre_capture", "post_capture", "record_buffer_mb")
MODES = ("events", "continuous", "motion")


@dataclass(frozen=True, kw_only=True)
class RecordConfig:
    """How one camera records (`enabled` False: it does not; a config file's cameras do by default, where there is
    storage)."""

    enabled: bool = False
    mode: str = "events"  # one of MODES: clips of its events only, or segments too (all kept, or motion's)
    url: str | None = field(default=None, repr=False)  # secrets filled in: never shown; None: the camera's url
    retain_days: float | None = None  # how long its segments are kept (None: [storage] max_days)
    pre_s: float = DEFAULT_PRE_S
    post_s: float = DEFAULT_POST_S
    buffer_mb: float | None = None  # None: the mode's (`camera.DEFAULT_BUFFER_MB`, or `SEGMENTS_BUFFER_MB`)


def _seconds(cam: dict, key: str, default: float, where: str, problem: Callable[[str, str], None]) -> float:
    value = cam.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 3600:
        problem(where, f"{key} must be a number of seconds from 0 to 3600, not {value!r}")
        return default
    return float(value)


def _mode(cam: dict, where: str, default: bool, problem: Callable[[str, str], None]) -> str | None:
    """`record`: one of `MODES` (`true` is "events"), or None (false)."""
    value = cam.get("record", "events" if default else False)
    if value is True or value in MODES:
        return "events" if value is True else value
    if value is False:
        return None
    problem(where, FRIGATE_TABLES["record"] if isinstance(value, dict) else
            f"record must be \"continuous\", \"motion\", \"events\" or false, not {value!r}")
    return "events" if default else None


def _days(cam: dict, where: str, problem: Callable[[str, str], None]) -> float | None:
    value = cam.get("retain_days")
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 3650):
        problem(where, f"retain_days must be a number of days above 0 (at most 3650), not {value!r}")
        return None
    return None if value is None else float(value)


def check_record(cam: dict[str, Any], where: str, problem: Callable[[str, str], None], storage: bool,
                 check_url: Callable[[str], None], anonymise: bool = False) -> RecordConfig:
    """The camera's recording keys, checked (every problem one line); `check_url` checks a `record_url` as the
    camera's `url` is checked. A camera with `anonymise` does not record: a clip is the camera's own packets,
    copied without decoding, where nothing could be hidden (`record = true` with it is a problem)."""
    mode = _mode(cam, where, not anonymise, problem)
    if mode is not None and anonymise:
        given = "true" if cam.get("record", True) is True else f'"{mode}"'
        problem(where, f"record = {given} with anonymise: a clip is the camera's own packets, copied without "
                "decoding, so nothing in it could be hidden; set record = false (snapshots and latest.jpg are hidden)")
        mode = None
    url = cam.get("record_url")
    if url is not None:
        if not isinstance(url, str) or not url.strip():
            problem(where, "record_url must be the camera's main stream (rtsp://…), not empty")
            url = None
        else:
            url = url.strip()
            check_url(url)
        if not storage:
            problem(where, "record_url needs a [storage] table: clips are kept there")
    buffer_mb = cam.get("record_buffer_mb")
    if buffer_mb is not None and (isinstance(buffer_mb, bool) or not isinstance(buffer_mb, int | float)
                                  or not 1 <= buffer_mb <= 4096):
        problem(where, f"record_buffer_mb must be a number of MB from 1 to 4096, not {buffer_mb!r}")
        buffer_mb = None
    return RecordConfig(enabled=mode is not None and storage, mode=mode or "events", url=url,
                        retain_days=_days(cam, where, problem),
                        pre_s=_seconds(cam, "pre_capture", DEFAULT_PRE_S, where, problem),
                        post_s=_seconds(cam, "post_capture", DEFAULT_POST_S, where, problem),
                        buffer_mb=None if buffer_mb is None else float(buffer_mb))


def record_defaults(table: dict[str, Any], problem: Callable[[str, str], None], storage: bool) -> dict[str, Any]:
    """The recording keys of `[defaults]` (all but `record_url`, a camera's own stream), checked once there: what
    each camera takes unless it says otherwise (an anonymised camera does not record: it takes none). {} when one
    is wrong (said once, here, not for each camera)."""
    if "record_url" in table:
        problem("defaults", "record_url is a camera's own main stream: set it in its [cameras.NAME] table")
    given = {k: v for k, v in table.items() if k in RECORD_KEYS and k != "record_url"}
    said: list[str] = []

    def noted(where: str, what: str) -> None:
        said.append(what)
        problem(where, what)

    check_record(given, "defaults", noted, storage, lambda url: None)
    return {} if said else given
