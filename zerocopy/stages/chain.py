"""A run's stages in their order, applied to each frame (`StageChain`), and how a failure of a stage that crops
is said (as the path's, before it is committed; as the run's after)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple

from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame
from zerocopy.stages.base import Activation, InputInfo, Stage, StageReport

# A stage that crops failed: (the stage, what it raised) -> what to raise instead (`Pipeline.stage_failed`)
OnCropFailure = Callable[[Stage, Exception], Exception]


class Chained(NamedTuple):
    """A frame after every stage of a `StageChain`."""

    detections: Detections
    events: list  # what the stages made of it (object events), in order
    untimed: float  # seconds spent in the stages that do not time themselves (counted as postprocessing)


class StageChain:
    """The stages after inference, in order. Each inferred frame's detections go through every stage; a frame
    `--detect-fps` left out (detections None) through those with `on_skipped` only. The decoded frame
    (`frame.source`) is let go once the last stage that crops has run."""

    def __init__(self, stages: Sequence[Stage] = ()):
        self.stages = list(stages)
        names = [s.name for s in self.stages]
        if len(set(names)) != len(names):
            raise ValueError(f"two stages share a name: {names}")
        crops = [i for i, s in enumerate(self.stages) if s.crops]
        self._last_crop = crops[-1] if crops else -1

    @property
    def crops(self) -> bool:
        """Whether a stage cuts regions from the decoded frame (the path then keeps it until that stage ran)."""
        return self._last_crop >= 0

    def get(self, name: str) -> Stage | None:
        return next((s for s in self.stages if s.name == name), None)

    def activate(self, at: Activation) -> None:
        for stage in self.stages:
            stage.activate(at)

    def prime(self, frame: PreparedFrame, on_crop_failure: OnCropFailure) -> None:
        """Each stage tried on the path's first frame (during its trial)."""
        for stage in self.stages:
            try:
                stage.prime(frame)
            except Exception as e:
                if not stage.crops:
                    raise
                raise on_crop_failure(stage, e) from None

    def begin(self, input: InputInfo) -> None:
        for stage in self.stages:
            stage.begin(input)

    def end(self, input: int) -> tuple:
        events: list = []
        for stage in self.stages:
            events = stage.amend(events, input) + stage.end(input)
        return tuple(events)

    def __call__(self, frame: PreparedFrame, detections: Detections | None, input: int,
                 on_crop_failure: OnCropFailure) -> Chained:
        """The detections after every stage, the events they made, and the seconds spent in the stages that do
        not time themselves."""
        events: list = []
        untimed = 0.0
        skipped = detections is None  # (a stage before may give it boxes: the tracks' predictions)
        for i, stage in enumerate(self.stages):
            if not skipped or stage.on_skipped:
                t0 = time.perf_counter()
                try:
                    detections, made = stage(frame, detections, input)
                except Exception as e:
                    if not stage.crops:
                        raise
                    raise on_crop_failure(stage, e) from None
                events = stage.amend(events, input) + made
                if not stage.own_times:
                    untimed += time.perf_counter() - t0
            elif events:  # not run on a frame left out, but it may add to what the stages before made of it
                events = stage.amend(events, input)
            if i == self._last_crop:
                frame.source = None  # cropped from: the decoded frame can go
        if self._last_crop < 0:
            frame.source = None
        return Chained(detections if detections is not None else Detections.empty(), events, untimed)

    def busy(self, input: int, t: float | None = None) -> bool:
        """Whether a stage needs this input's frame at media time `t` (None: the next) inferred whatever the motion
        gate sees (any thread)."""
        return any(stage.busy(input, t) for stage in self.stages)

    def ends_due(self, input: int) -> float:
        """The media time from which a stage waits for an inferred frame of this input (any thread)."""
        return min((stage.ends_due(input) for stage in self.stages), default=math.inf)

    def release(self) -> None:
        for stage in self.stages:
            stage.release()

    def reports(self) -> dict[str, StageReport]:
        """Each stage's report that has one, by the stage's name."""
        return {s.name: r for s in self.stages if (r := s.report()) is not None}
