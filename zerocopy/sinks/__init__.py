"""Sinks: where per-frame detections go. Every path feeds the same sinks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame


class Sink(Protocol):
    """Where results go. `input` numbers the run's inputs (0, 1, …): with `--parallel` several are open
    at once and their frames interleave, each input's in its own order."""

    def begin(self, source: str, rate: float, input: int = 0) -> None: ...
    def write(self, frame: PreparedFrame, detections: Detections, input: int = 0) -> None: ...
    def end(self, input: int = 0) -> None: ...
    def close(self) -> None: ...

    def on_events(self, events: Sequence[Any], input: int = 0) -> None:
        """The object events of `--track` (`track.ObjectEvent`: new, update, end), as they happen."""
        ...


class NullSink:
    """A sink that keeps nothing: the base of sinks that only observe (meters, probes)."""

    def begin(self, source: str, rate: float, input: int = 0) -> None:
        pass

    def write(self, frame: PreparedFrame, detections: Detections, input: int = 0) -> None:
        pass

    def end(self, input: int = 0) -> None:
        pass

    def on_events(self, events: Sequence[Any], input: int = 0) -> None:
        pass

    def close(self) -> None:
        pass

