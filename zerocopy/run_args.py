"""The checks of `Detector.run()`'s arguments: each bad one is a `ConfigError` naming it."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from zerocopy.errors import ConfigError
from zerocopy.names import NAME_RULE, is_name
from zerocopy.sources import expand_inputs

Source = str | Path


def source_list(sources: Source | Iterable[Source]) -> list[str]:
    """The inputs of a run: a path, a URL or a folder, or a list of them (each a `str` or `PathLike`)."""
    accepts = "a path, a URL or a folder (str or os.PathLike), or a list of them"
    if isinstance(sources, str | os.PathLike):
        items = [sources]
    elif isinstance(sources, bytes | bytearray) or not isinstance(sources, Iterable):
        raise ConfigError("sources", f"sources must be {accepts}, not {sources!r}")
    else:
        items = list(sources)
    bad = [s for s in items if not isinstance(s, str | os.PathLike) or not os.fspath(s)]
    if bad or not items:
        raise ConfigError("sources", f"sources must be {accepts}, not {bad[0] if bad else items!r}")
    return expand_inputs([os.fspath(s) for s in items])


def check_cameras(cameras: Any, inputs: list[str]) -> list[str] | None:
    """The camera names of a run's inputs, one per input (after folders are expanded), checked."""
    if cameras is None:
        return None
    names = [cameras] if isinstance(cameras, str) else list(cameras) if isinstance(cameras, Iterable) else None
    if names is None or not all(is_name(n) for n in names):
        raise ConfigError("cameras", f"cameras must be names (each {NAME_RULE}), not {cameras!r}")
    if len(names) != len(inputs):
        raise ConfigError("cameras", f"cameras must name each of the {len(inputs)} inputs, not {len(names)}")
    return names


def check_run_options(max_frames: Any, on_error: Any, parallel: Any) -> None:
    if max_frames is not None and (isinstance(max_frames, bool) or not isinstance(max_frames, int) or max_frames < 1):
        raise ConfigError("max_frames", f"max_frames must be an integer ≥ 1 (or None: every frame), not {max_frames!r}")
    if on_error not in ("raise", "skip"):
        raise ConfigError("on_error", f"on_error must be 'raise' or 'skip', not {on_error!r}")
    if not isinstance(parallel, bool):
        raise ConfigError("parallel", f"parallel must be True or False, not {parallel!r}")
