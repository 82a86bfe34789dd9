"""Sinks: where per-frame detections go. Every path feeds the same sinks."""

from __future__ import annotations

from typing import Protocol

from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame


class Sink(Protocol):
    def begin(self, source: str, rate: float) -> None: ...
    def write(self, frame: PreparedFrame, detections: Detections) -> None: ...
    def end(self) -> None: ...
    def close(self) -> None: ...
