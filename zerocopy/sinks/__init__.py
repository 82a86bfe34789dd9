"""Sinks: where per-frame detections go. Every path feeds the same sinks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

from zerocopy.detections import Detections
from zerocopy.errors import ZeroCopyError
from zerocopy.frames import PreparedFrame


class Sink(Protocol):
    """Where results go. `input` numbers the run's inputs (0, 1, …): with `--parallel` several are open
    at once and their frames interleave, each input's in its own order."""

    def begin(self, source: str, rate: float, input: int = 0) -> None: ...
    def write(self, frame: PreparedFrame, detections: Detections, input: int = 0) -> None: ...
    def end(self, input: int = 0) -> None: ...
    def close(self) -> None: ...


class NullSink:
    """A sink that keeps nothing: the base of sinks that only observe (meters, probes)."""

    def begin(self, source: str, rate: float, input: int = 0) -> None:
        pass

    def write(self, frame: PreparedFrame, detections: Detections, input: int = 0) -> None:
        pass

    def end(self, input: int = 0) -> None:
        pass

    def close(self) -> None:
        pass


def check_writable(option: str, target: str | None) -> None:
    """Fail before any work if an output cannot be written ('-' is stdout)."""
    if not target or target == "-":
        return
    path = Path(target)
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise ZeroCopyError(f"cannot write {option} {target}: it is a directory")
    if not folder.is_dir():
        raise ZeroCopyError(f"cannot write {option} {target}: no such directory {folder}")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ZeroCopyError(f"cannot write {option} {target}: permission denied")
