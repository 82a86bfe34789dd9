"""The stages of the labels rule (`postprocess.LabelChoice`): an input's own classes narrowing what is detected,
the hidden labels blurred in every picture, and what is reported narrowed to the classes shown."""

from __future__ import annotations

import numpy as np

from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame
from zerocopy.postprocess import LabelChoice
from zerocopy.sinks.draw import Hidden
from zerocopy.stages.base import InputInfo, StageBase


class _PerInput(StageBase):
    """Each input's own classes (label indices), from its `InputInfo`, as `kept(classes)` makes them (once per
    input, not per frame)."""

    def __init__(self, labels: LabelChoice):
        self.labels = labels
        self.own: dict[int, tuple[int, ...] | None] = {}

    def kept(self, classes: tuple[int, ...]) -> tuple[int, ...] | None:
        return classes

    def begin(self, input: InputInfo) -> None:
        if input.classes is not None:
            self.own[input.index] = self.kept(input.classes)
        else:
            self.own.pop(input.index, None)


class DetectedClasses(_PerInput):
    """An input with classes of its own keeps those, and the labels detected to be hidden or cropped (the run's
    classes were applied by the output decoding already), before region models run on the boxes."""

    name = "detected-classes"

    def kept(self, classes: tuple[int, ...]) -> tuple[int, ...] | None:
        return self.labels.detected(classes)

    def __call__(self, frame: PreparedFrame, detections: Detections | None, input: int) -> \
            tuple[Detections | None, list]:
        own = self.own.get(input)
        if own is None or detections is None or not len(detections):
            return detections, []
        return detections[np.isin(detections.labels, own)], []


class Anonymise(StageBase):
    """The boxes of the hidden labels (`anonymise`) pixelated, blurred or filled in the frame's picture before any
    output sees it, and said on the frame (`PreparedFrame.hidden`) for the pictures made of it later (snapshots
    from the decoded frame). Every frame is inferred with `anonymise` (`RunConfig` refuses `detect_fps` and
    `motion` with it): none goes out with nothing hidden."""

    name = "anonymise"

    def __init__(self, labels: LabelChoice, style: str):
        self.hidden, self.style = np.asarray(labels.hidden, np.int32), style

    def __call__(self, frame: PreparedFrame, detections: Detections | None, input: int) -> \
            tuple[Detections | None, list]:
        boxes = detections[np.isin(detections.labels, self.hidden)] if detections is not None else Detections.empty()
        if len(boxes):
            frame.hidden = Hidden(boxes, self.style)
            if frame.picture is not None:
                frame.picture = frame.hidden.picture(frame.picture)
        return detections, []


class ShownClasses(_PerInput):
    """What is reported: the input's own classes, else the run's; never the labels detected only to be hidden or
    cropped."""

    name = "classes"

    def __call__(self, frame: PreparedFrame, detections: Detections | None, input: int) -> \
            tuple[Detections | None, list]:
        shown = self.own.get(input, self.labels.shown)
        if shown is None or detections is None or not len(detections):
            return detections, []
        return detections[np.isin(detections.labels, shown)], []
