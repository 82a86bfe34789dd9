"""Tracking in the run loop (`--track`): one tracker and one event maker per input, fed each frame's
detections in the input's order; frames `--detect-fps` left out get the tracks' predicted boxes."""

from __future__ import annotations

import socket
import time
from collections.abc import Sequence

from zerocopy.config import RunConfig
from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame
from zerocopy.track import ObjectEvent, ObjectEvents, Tracker


def default_node() -> str:
    """This machine's name in events: the host name (its first label)."""
    return socket.gethostname().split(".")[0] or "zerocopy"


def wall_time(frame: PreparedFrame) -> float:
    """The Unix time at which `frame` came out of its decoder (now, if the decoder did not say)."""
    now = time.time()
    return now - (time.perf_counter() - frame.arrived) if frame.arrived is not None else now


def media_time(frame: PreparedFrame, rate: float) -> float:
    """The frame's time in its input, in seconds: its timestamp, or its index over the frame rate."""
    return frame.pts if frame.pts is not None else frame.index / (rate or 30.0)


class InputTracks:
    """The trackers and events of a run's inputs (created as each input begins)."""

    def __init__(self, config: RunConfig, names: Sequence[str] | None, cameras: Sequence[str]):
        self.config, self.names, self.cameras = config, names, list(cameras)
        self.node = config.node or default_node()
        self._open: dict[int, tuple[Tracker, ObjectEvents, float]] = {}
        self._last: dict[int, tuple[float, float]] = {}  # per input: its last frame's media and Unix times
        self._ended: list[ObjectEvents] = []

    def begin(self, input: int, source: str, rate: float) -> None:
        c = self.config
        camera = self.cameras[input] if input < len(self.cameras) else f"input-{input}"
        tracker = Tracker(min_hits=c.min_hits, max_lost=c.max_lost)
        events = ObjectEvents(self.names, source=source, camera=camera, node=self.node, min_hits=c.min_hits,
                              max_lost=c.max_lost, update_interval=c.update_interval)
        self._open[input] = (tracker, events, rate)

    def frame(self, input: int, frame: PreparedFrame, detections: Detections | None) -> \
            tuple[Detections, list[ObjectEvent]]:
        """This frame's boxes with their ids, and the events they make. `detections` None: the frame was
        not inferred; its boxes are where the tracks predict them, and it makes no event."""
        tracker, events, rate = self._open[input]
        t = media_time(frame, rate)
        self._last[input] = (t, wall_time(frame))
        if detections is None:
            predicted, ids = tracker.predict(t)
            return predicted.with_ids(ids), []
        ids = tracker.update(detections, t)
        tracked = detections.with_ids(ids)
        return tracked, events.update(tracked, ids, t, self._last[input][1])

    def end(self, input: int) -> list[ObjectEvent]:
        """The input ended (or the run stopped): an `end` for every object still open, at its last frame."""
        found = self._open.pop(input, None)
        if found is None:
            return []
        self._ended.append(found[1])
        t, wall = self._last.pop(input, (0.0, time.time()))
        return found[1].finish(t, wall)

    def summary(self) -> dict:
        """Objects per label and their mean dwell (seconds from first to last seen), over every input."""
        per_label: dict[str, list[float]] = {}
        for events in self._ended + [e for _, e, _ in self._open.values()]:
            for label, dwell in events.dwells():
                per_label.setdefault(label, []).append(dwell)
        return {
            "objects": sum(len(d) for d in per_label.values()),
            "per_label": {label: {"objects": len(d), "mean_dwell_s": round(sum(d) / len(d), 2)}
                          for label, d in sorted(per_label.items())},
        }
