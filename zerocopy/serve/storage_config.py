"""`zerocopy serve`'s `[storage]` table: the folder where events and their files are kept and for how long, checked
whole like the rest of the config, the folder's writability included (docs/serve.md, *Events and storage*)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zerocopy.serve.checks import unknown_keys

STORAGE_KEYS = ("path", "max_gb", "max_days")
DEFAULT_MAX_GB = 10.0
DEFAULT_MAX_DAYS = 10.0
CAMERA_MBIT_S = 4.0  # a typical camera's main stream, what `short_cap` weighs the cap against


@dataclass(frozen=True, kw_only=True)
class StorageConfig:
    path: str  # the folder, absolute (made at start if missing)
    max_gb: float = DEFAULT_MAX_GB  # the events' files and segments are kept below this many GB (10^9 bytes),
    # oldest removed first
    max_days: float = DEFAULT_MAX_DAYS  # an event and its files are removed this many days after it started

    @property
    def max_bytes(self) -> int:
        return int(self.max_gb * 1e9)


def short_cap(storage: StorageConfig | None, cameras: Sequence[Any]) -> str | None:
    """The line `--check` and the start say when `cameras` (serve's, checked) record segments (`record =
    "continuous"` or `"motion"`) and `max_gb` is the default: the cap holds only hours of them. None otherwise."""
    recording = [c.name for c in cameras if c.enabled and c.record.enabled and c.record.mode in ("continuous",
                                                                                                "motion")]
    if storage is None or not recording or storage.max_gb != DEFAULT_MAX_GB:
        return None
    hours = storage.max_bytes * 8 / (CAMERA_MBIT_S * 1e6) / 3600
    return (f"[storage] max_gb is the default {DEFAULT_MAX_GB:g} GB, shared by the events' files and the recordings "
            f"of {', '.join(recording)}: at {CAMERA_MBIT_S:g} Mbit/s it holds about {hours:.1f} hours of one camera "
            "(the oldest removed first); raise max_gb to keep more")


def default_folder(env: dict[str, str]) -> Path:
    """Where events are kept without `[storage] path`: systemd's `StateDirectory=` ($STATE_DIRECTORY), else
    $XDG_DATA_HOME/zerocopy, else ~/.local/share/zerocopy."""
    if env.get("STATE_DIRECTORY"):
        return Path(env["STATE_DIRECTORY"].split(":")[0])
    if env.get("XDG_DATA_HOME"):
        return Path(env["XDG_DATA_HOME"]) / "zerocopy"
    return (Path(env["HOME"]) if env.get("HOME") else Path.home()) / ".local" / "share" / "zerocopy"


def folder_problem(folder: Path) -> str | None:
    """Why events could not be kept in `folder` (made if missing), or None."""
    probe = folder
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is not a folder"
    if not os.access(probe, os.W_OK | os.X_OK):
        made = "" if probe == folder else f" (where {folder} would be made)"
        return f"{probe} is not writable by this user{made}"
    return None


def check_storage(table: dict | None, env: dict[str, str], base: Path,
                  problem: Callable[[str, str], None]) -> StorageConfig:
    """`[storage]` checked (absent: every default); `path` relative to the config's folder (`base`)."""
    table = table or {}
    unknown_keys("storage", sorted(set(table) - set(STORAGE_KEYS)), list(STORAGE_KEYS), problem,
                 f"[storage] takes {', '.join(STORAGE_KEYS)}", frigate="storage")
    path = table.get("path")
    if path is not None and (not isinstance(path, str) or not path.strip()):
        problem("storage", "path must be a folder's path (e.g. path = \"/var/lib/zerocopy\")")
        path = None
    folder = base / os.path.expanduser(path.strip()) if path is not None else default_folder(env)
    if (why := folder_problem(folder)) is not None:
        problem("storage", f"path: events cannot be kept: {why}" + ("" if path is not None else
                " (the default; set [storage] path)"))
    max_gb = _positive(table, "max_gb", DEFAULT_MAX_GB, "GB (10^9 bytes) of files", problem)
    max_days = _positive(table, "max_days", DEFAULT_MAX_DAYS, "days", problem)
    return StorageConfig(path=str(folder), max_gb=max_gb, max_days=max_days)


def _positive(table: dict, key: str, default: float, unit: str, problem: Callable[[str, str], None]) -> float:
    value: Any = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        problem("storage", f"{key} must be a number of {unit} > 0, not {value!r}")
        return default
    return float(value)
