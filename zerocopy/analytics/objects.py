"""What zones and lines share: a stage after tracking that keeps, per input, the tracked objects' last events
(to build its own from) and the frame's times, places its shapes on the first frame (clipped to it, said once),
and adds its events once it has seen the frame's tracked boxes and the events tracking made of them (`amend`)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zerocopy.analytics.geometry import place
from zerocopy.detections import Detections
from zerocopy.errors import ConfigError
from zerocopy.frames import PreparedFrame
from zerocopy.stages.base import InputInfo, StageBase
from zerocopy.track import ObjectEvent
from zerocopy.track.times import media_time, wall_time

log = logging.getLogger("zerocopy")


def check_labels(what: str, labels: Sequence[str], names: Sequence[str] | None) -> None:
    """A `ConfigError` for a label the model does not have (compared case-insensitively)."""
    if not names:
        return
    known = {n.lower() for n in names}
    unknown = [label for label in labels if label.lower() not in known]
    if unknown:
        raise ConfigError(what.split()[0] + "s", f"{what}: the model has no label {unknown[0]!r} (its labels: "
                          f"{', '.join(names[:12])}{', ...' if len(names) > 12 else ''})")


@dataclass(kw_only=True)
class InputState:
    """One input as an analytic stage keeps it."""

    info: InputInfo
    specs: list  # its zones or lines
    shapes: list[np.ndarray] = field(default_factory=list)  # each spec's points in pixels, once placed
    last: dict[int, ObjectEvent] = field(default_factory=dict)  # each tracked object's last event
    t: float = 0.0  # the frame's media time
    wall: float = 0.0  # and its Unix time


class ObjectStage(StageBase):
    """A stage on tracked objects with shapes of its own per input (`specs_of`); subclasses say what a frame's
    boxes do (`see`) and what that makes (`made`, called from `amend` with the frame's object events known)."""

    kind = "shape"  # "zone" or "line", in messages

    def __init__(self, names: Sequence[str] | None, run_specs: Sequence = ()):
        """`run_specs`: the run's own shapes (each input's own are `specs_of` it), their labels checked now."""
        self.names = list(names or [])
        self._check(run_specs)
        self._inputs: dict[int, InputState] = {}
        self.used = False  # an input had shapes of this kind: the run report has its section

    def _check(self, specs: Sequence) -> None:
        for spec in specs:
            check_labels(f"{self.kind} {spec.name}", spec.labels, self.names)

    def specs_of(self, input: InputInfo) -> list:
        raise NotImplementedError

    def begin(self, input: InputInfo) -> None:
        specs = self.specs_of(input)
        self._check(specs)
        if specs:
            self._inputs[input.index] = InputState(info=input, specs=specs)
            self.used = True

    def label(self, index: int) -> str:
        return self.names[index] if 0 <= index < len(self.names) else str(index)

    def __call__(self, frame: PreparedFrame, detections: Detections | None, input: int) -> tuple[Any, list]:
        st = self._inputs.get(input)
        if st is None or detections is None:
            return detections, []
        if not st.shapes:
            self._place(st, frame.width, frame.height)
        st.t, st.wall = media_time(frame, st.info.rate), wall_time(frame)
        tracked = self.tracked(detections, input)
        if tracked.tracker_id is not None and len(tracked):
            keep = np.asarray(tracked.tracker_id) >= 0
            if keep.any():
                self.see(st, tracked[keep])
        return detections, []

    def tracked(self, detections: Detections, input: int) -> Detections:
        """The boxes `see` is given (those with an id ≥ 0): the frame's confirmed objects."""
        return detections

    def _place(self, st: InputState, width: int, height: int) -> None:
        placed = [place(spec.points, width, height) for spec in st.specs]
        st.shapes = [p.xy for p in placed]
        outside = [spec.name for spec, p in zip(st.specs, placed, strict=True) if p.clipped]
        if outside:
            log.warning("%s: %s %s reach%s outside its %dx%d frame: clipped to it", st.info.camera,
                        f"{self.kind}s" if len(outside) > 1 else self.kind, ", ".join(outside),
                        "" if len(outside) > 1 else "es", width, height)

    def see(self, st: InputState, tracked: Detections) -> None:
        """The frame's tracked boxes (every `tracker_id` ≥ 0; see `tracked`)."""
        raise NotImplementedError

    def annotate(self, st: InputState, event: ObjectEvent) -> ObjectEvent:
        """An event tracking made, with what this stage adds to it."""
        return event

    def made(self, st: InputState) -> list:
        """This stage's own events for the frame, once tracking's are known (`st.last`)."""
        return []

    def forget(self, st: InputState, tracker_id: int) -> None:
        """An object ended."""

    def amend(self, events: list, input: int) -> list:
        st = self._inputs.get(input)
        if st is None:
            return events
        out, ended = [], []
        for e in events:
            if isinstance(e, ObjectEvent):
                e = self.annotate(st, e)
                st.last[e.tracker_id] = e
                if e.type == "end":
                    ended.append(e.tracker_id)
            out.append(e)
        for tid in ended:
            self.forget(st, tid)
            st.last.pop(tid, None)
        return out + self.made(st)

    def end(self, input: int) -> list:
        self._inputs.pop(input, None)
        return []

    def report(self) -> Any:
        """Itself (`summary()`, `reset()`), once an input had shapes of its kind."""
        return self if self.used else None
