"""A region model's outputs → what is attached to the box: attributes, keypoints, a presence score; or
a mask over the box's crop, which the region stage composes into the frame's (`person-mask`).

One decoder per kind of region model (`ROI_DECODERS`); each is made once per run for one model's
output shapes and called once per region.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from zerocopy.detections import Attribute
from zerocopy.errors import ModelError
from zerocopy.postprocess.maps import MapReader, to_source
from zerocopy.resize.crops import RoiPlacement


@dataclass(frozen=True)
class RoiResult:
    """What one region model said of one box. `presence` (0–1) is how sure a landmark model is that
    the region holds what it models at all: `--min-presence` drops boxes below it."""

    attributes: tuple[Attribute, ...] = ()
    keypoints: np.ndarray | None = None  # (K, 2) frame pixels
    presence: float | None = None
    mask: np.ndarray | None = None  # a segmentation model's map over the crop (crop.h × crop.w, 0–1)


def sigmoid(x: np.ndarray | float) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(np.asarray(x, np.float64), -80, 80)))


def by_size(shapes: dict[str, tuple[int, ...]]) -> dict[int, str]:
    """Output names by their element count (region models tell their outputs apart by size)."""
    return {int(np.prod(s)): name for name, s in shapes.items()}


class RoiDecoder(ABC):
    """Decodes one region model's outputs; `model` is the name attributes carry."""

    masks = False  # its results carry a mask (`RoiResult.mask`) for the stage to compose
    keypoints = False  # its results carry keypoints (a box holds one set: two such models may not share a label)

    def __init__(self, model: str, input_w: int, input_h: int, shapes: dict[str, tuple[int, ...]],
                 labels: Sequence[str] = ()):
        self.model, self.input_w, self.input_h, self.labels = model, input_w, input_h, tuple(labels)
        self.shapes = shapes

    def output(self, sizes: Sequence[int], what: str) -> str:
        """The output with one of these element counts, or a `ModelError` saying which was expected."""
        found = by_size(self.shapes)
        for n in sizes:
            if n in found:
                return found[n]
        raise ModelError(f"{self.model}: no {what} output (expected {' or '.join(map(str, sizes))} values; "
                         f"the outputs are {list(self.shapes.values())})")

    @abstractmethod
    def __call__(self, outputs: dict[str, np.ndarray], place: RoiPlacement) -> RoiResult:
        """One region's result."""


class FaceLandmarks(RoiDecoder):
    """MediaPipe's face mesh: 468 (x, y, z) points in input pixels and a face-presence logit."""

    keypoints = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.points, self.presence = self.output((1404,), "landmarks"), self.output((1,), "presence")

    def __call__(self, outputs, place):
        presence = float(sigmoid(outputs[self.presence].reshape(-1)[0]))
        points = place.points_to_source(outputs[self.points].reshape(-1, 3))
        return RoiResult((Attribute(self.model, "presence", presence),), points, presence)


class Classifier(RoiDecoder):
    """Any classifier with one output of class scores: its best class and that class's probability
    (softmax, unless the scores already sum to 1)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if len(self.shapes) != 1:
            raise ModelError(f"{self.model}: a classifier has one output of class scores, not {len(self.shapes)}")
        (self.scores,) = self.shapes

    def __call__(self, outputs, place):
        s = outputs[self.scores].reshape(-1).astype(np.float64)
        p = s if (s >= 0).all() and abs(s.sum() - 1) < 1e-3 else np.exp(s - s.max()) / np.exp(s - s.max()).sum()
        best = int(np.argmax(p))
        name = self.labels[best] if best < len(self.labels) else str(best)
        return RoiResult((Attribute(self.model, name, float(p[best])),))


class Segmentation(RoiDecoder):
    """A mask over the region (MediaPipe's pose landmark model: a 256×256 logit map, through a sigmoid as
    its TensorsToSegmentation does), in the crop's pixels. With a presence output (one value, already a
    probability), no mask below 0.5: MediaPipe's graph drops the pose, and its mask, there."""

    MIN_PRESENCE = 0.5
    masks = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.map = MapReader(self.model, self.shapes, logits=True)
        self.presence = by_size(self.shapes).get(1)

    def __call__(self, outputs, place):
        presence = None if self.presence is None else float(outputs[self.presence].reshape(-1)[0])
        if presence is not None and presence < self.MIN_PRESENCE:
            return RoiResult(presence=presence)
        return RoiResult(presence=presence, mask=to_source(self.map(outputs), place.geometry))


class HandLandmarks(RoiDecoder):
    """MediaPipe's hand landmarks: 21 (x, y, z) points in input pixels, a hand-presence score (already a
    probability: MediaPipe thresholds it as it comes), one handedness score, and 21 world points (not
    used). Two outputs share each size, so they are told apart by their order, as MediaPipe's graph
    splits them: points, presence, handedness, world points.

    The handedness score is that of `labels[0]`, for a picture that is not mirrored (MediaPipe's
    hand_landmarks_detector_graph names it "Right"; its older hands solution called it "Left" and
    assumed a mirrored selfie): the attribute is the likelier label with its probability."""

    keypoints = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        points = [n for n, s in self.shapes.items() if int(np.prod(s)) == 63]
        scores = [n for n, s in self.shapes.items() if int(np.prod(s)) == 1]
        if len(points) < 1 or len(scores) != 2 or len(self.labels) != 2:
            raise ModelError(f"{self.model}: a hand landmark model has 63 points, a presence and a handedness "
                             f"output and two labels; the outputs are {list(self.shapes.values())}, "
                             f"the labels {list(self.labels)}")
        self.points, (self.presence, self.handedness) = points[0], scores

    def __call__(self, outputs, place):
        presence = float(np.clip(outputs[self.presence].reshape(-1)[0], 0.0, 1.0))
        first = float(np.clip(outputs[self.handedness].reshape(-1)[0], 0.0, 1.0))
        side = Attribute(self.model, self.labels[0], first) if first >= 0.5 else \
            Attribute(self.model, self.labels[1], 1.0 - first)
        points = place.points_to_source(outputs[self.points].reshape(-1, 3))
        return RoiResult((Attribute(self.model, "presence", presence), side), points, presence)


ROI_DECODERS: dict[str, type[RoiDecoder]] = {
    "face-landmarks": FaceLandmarks,
    "classifier": Classifier,
    "segmentation": Segmentation,
    "hand-landmarks": HandLandmarks,
}


def make_roi_decoder(kind: str, model: str, input_w: int, input_h: int, shapes: dict[str, tuple[int, ...]],
                     labels: Sequence[str] = ()) -> RoiDecoder:
    if kind not in ROI_DECODERS:
        raise ModelError(f"unknown region-model decoding {kind!r}; choose from {', '.join(ROI_DECODERS)}")
    return ROI_DECODERS[kind](model, input_w, input_h, shapes, labels)
