"""Tracking in the run loop (`--track`), a `Stage`: one tracker and one event maker per input, fed each frame's
detections in the input's order; frames `--detect-fps` left out get the tracks' predicted boxes."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import NamedTuple

from zerocopy.config import RunConfig
from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame
from zerocopy.stages.base import InputInfo, StageBase
from zerocopy.track.object_events import ObjectEvent, ObjectEvents
from zerocopy.track.times import HALF_FRAME, media_time, new_time_base, wall_time
from zerocopy.track.tracker import Tracker


class _Last(NamedTuple):
    """An input's last frame: its media time and its Unix time."""

    t: float
    wall: float


class InputTracks(StageBase):
    """The trackers and events of a run's inputs (created as each input begins); its report is itself
    (`summary()`: objects per label and their mean dwell)."""

    name = "tracking"
    on_skipped = True

    def __init__(self, config: RunConfig, names: Sequence[str] | None):
        self.config, self.names = config, names
        self.node = config.node_name
        self._open: dict[int, tuple[Tracker, ObjectEvents, float]] = {}
        self._last: dict[int, _Last] = {}  # per input: its last frame
        self._totals: dict[str, list[float]] = {}  # ended inputs' objects per label: [count, summed dwell]
        # per input: its last inferred frame's boxes with every track's id, confirmed or not (`sighted`)
        self._sighted: dict[int, Detections] = {}

    def begin(self, input: InputInfo) -> None:
        """An input began: its own tracker, at the rate its frames are inferred, and its filters' thresholds (its
        own, else the run's)."""
        c = self.config
        filters = input.settings.filters if input.settings.filters is not None else c.filters
        events = ObjectEvents(self.names, source=input.source, camera=input.camera, node=self.node,
                              min_hits=c.min_hits, max_lost=c.max_lost, update_interval=c.update_interval,
                              thresholds={f.label: f.threshold for f in filters if f.threshold is not None})
        self._open[input.index] = (Tracker(input.inferred_rate, c.max_lost), events, input.rate)

    def __call__(self, frame: PreparedFrame, detections: Detections | None, input: int) -> \
            tuple[Detections, list[ObjectEvent]]:
        """This frame's boxes with their ids (-1: an object not confirmed yet, see `min_hits`), and the
        events they make. `detections` None: the frame was not inferred; its boxes are where the tracks
        predict them, and it makes no event."""
        tracker, events, rate = self._open[input]
        t, wall = media_time(frame, rate), wall_time(frame)
        ended = self._restart(input, frame, t, wall)
        self._last[input] = _Last(t, wall)
        if detections is None:
            predicted, ids = tracker.predict(t)
            ids = events.confirmed(ids)
            return predicted[ids >= 0].with_ids(ids[ids >= 0]), ended
        tracked = detections.with_ids(tracker.update(detections, t))
        self._sighted[input] = tracked
        made = events.update(tracked, t, wall, tracker.born)
        return tracked.with_ids(events.confirmed(tracked.tracker_id)), ended + made

    def sighted(self, input: int) -> Detections | None:
        """The input's last inferred frame's boxes with the id of every track that holds one, confirmed or not
        (-1: none holds it): what a stage that needs an object's path before its `new` reads (lines)."""
        return self._sighted.get(input)

    def _restart(self, input: int, frame: PreparedFrame, t: float, wall: float) -> list[ObjectEvent]:
        """A new time base: the input's timestamps went back (a looping or restarted stream) or jumped ahead
        by more than `max_lost`, or a live input sent nothing for longer than that (an outage; the decoder
        carries timestamps on across a reconnection). Every open object ends at the last frame before it,
        and tracking starts again."""
        tracker, events, rate = self._open[input]
        last = self._last.get(input)
        if last is None:
            return []
        waited = wall - last.wall if frame.arrived is not None else None
        if not new_time_base(t, last.t, back_s=HALF_FRAME / rate, gap_s=self.config.max_lost, waited=waited):
            return []
        tracker.reset()
        self._sighted.pop(input, None)
        return events.finish(last.wall)

    def end(self, input: int) -> list[ObjectEvent]:
        """The input ended (or the run stopped): an `end` for every object still open, at its last frame."""
        found = self._open.pop(input, None)
        if found is None:
            return []
        events = found[1]
        self._sighted.pop(input, None)
        last = self._last.pop(input, None)
        out = events.finish(last.wall if last is not None else time.time())
        for label, (count, dwell) in events.totals.items():
            _add(self._totals, label, count, dwell)
        return out

    def report(self) -> InputTracks:
        return self

    def reset(self) -> None:
        """(Objects are counted over the whole run, warm-up included: nothing to start afresh.)"""

    def summary(self) -> dict:
        """Objects per label (those that had a `new`) and their mean dwell (seconds from first to last
        seen), over every input, the open ones included."""
        totals = {label: list(t) for label, t in self._totals.items()}
        for _, events, _ in self._open.values():
            for label, (count, dwell) in events.totals.items():
                _add(totals, label, count, dwell)
            for label, dwell in events.open_objects():
                _add(totals, label, 1, dwell)
        return {
            "objects": int(sum(t[0] for t in totals.values())),
            "per_label": {label: {"objects": int(n), "mean_dwell_s": round(d / n, 2) if n else 0.0}
                          for label, (n, d) in sorted(totals.items())},
        }


def _add(totals: dict[str, list], label: str, count: int, dwell: float) -> None:
    """`count` objects of `label` and their `dwell` seconds added to `totals` (label → [objects, seconds])."""
    total = totals.setdefault(label, [0, 0.0])
    total[0] += count
    total[1] += dwell
