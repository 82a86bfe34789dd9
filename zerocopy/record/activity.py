"""What a camera's detection saw, by wall time, for its recording's index: when its motion gate saw motion and when
each tracked object was in view (serve's `ClipSink` tells it every record of the camera; `segments.SegmentWriter`
asks what happened during each segment)."""

from __future__ import annotations

import threading

KEPT_S = 600.0  # what is older than this (before the newest thing told) is forgotten


class Activity:
    """Thread-safe: detection's thread tells (`motion`, `object`), the segment writer's thread asks (`during`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._motion: list[list[float]] = []  # [on, off] (off: inf while it goes on), oldest first
        self._objects: dict[str, list[float]] = {}  # id → [first seen, last seen]
        self._newest = 0.0

    def motion(self, active: bool, wall: float) -> None:
        """The motion gate's state from `wall` (Unix time) on."""
        with self._lock:
            going = bool(self._motion) and self._motion[-1][1] == float("inf")
            if active and not going:
                self._motion.append([wall, float("inf")])
            elif not active and going:
                self._motion[-1][1] = wall
            self._forget(wall)

    def object(self, ident: str, first: float, last: float) -> None:
        """A tracked object in view from `first` to `last` (Unix times; its events' start and frame times)."""
        with self._lock:
            seen = self._objects.setdefault(ident, [first, last])
            seen[0], seen[1] = min(seen[0], first), max(seen[1], last)
            self._forget(last)

    def during(self, start: float, end: float) -> tuple[bool, int]:
        """(whether there was motion, how many objects were in view) from `start` to `end`."""
        with self._lock:
            motion = any(on <= end and off >= start for on, off in self._motion)
            objects = sum(1 for first, last in self._objects.values() if first <= end and last >= start)
        return motion, objects

    def _forget(self, now: float) -> None:
        self._newest = max(self._newest, now)
        cutoff = self._newest - KEPT_S
        while self._motion and self._motion[0][1] < cutoff:
            self._motion.pop(0)
        if len(self._objects) > 64:
            for ident in [i for i, (_, last) in self._objects.items() if last < cutoff]:
                del self._objects[ident]
