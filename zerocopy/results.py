"""`FrameResult`: what `Detector.run()` yields for each frame."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from zerocopy.detections import Detections

if TYPE_CHECKING:
    from zerocopy.pipeline.events import FrameDone


@dataclass(frozen=True, kw_only=True)
class FrameResult:
    """One decoded frame's detections.

    `pts` is in seconds (not stream ticks), None when the stream has no timestamps. `detections` are
    in source-frame pixels. `names` are the model's class names (one tuple per run), or None.
    `image` is the decoded frame as an owned H×W×3 uint8 **RGB** array when the detector was made
    with `keep_images=True` (OpenCV users: `image[..., ::-1]` is BGR), else None. `input` is the
    source's place in the run's list (0, 1, …; JSON Lines' `input`): it tells apart a source given
    twice. `source` is shown redacted: a URL's password and credential-like query values are `***`.
    `output` is an image-to-image model's result (`Processor`) over the frame: a float32 height×width
    map in [0, 1]; None for a detector. With `track=True`, `detections.tracker_id` holds each box's object
    id and `events` what the input's objects did at this frame (`zerocopy.track.ObjectEvent`: `new`,
    `update`, `end`; the last frame of an input also carries the `end` of every object still open).
    `inferred` is False for a frame `detect_fps` left out (its boxes are the tracks' predictions, or none).
    """

    source: str
    index: int
    pts: float | None
    width: int
    height: int
    detections: Detections
    names: tuple[str, ...] | None
    image: np.ndarray | None = None
    input: int = 0
    output: np.ndarray | None = None
    events: tuple = ()
    inferred: bool = True

    @classmethod
    def of(cls, done: FrameDone, names: tuple[str, ...] | None, keep_image: bool = False) -> FrameResult:
        """The result of a pipeline's `FrameDone` (its picture as an RGB array with `keep_image`)."""
        f = done.frame
        image = f.picture.to_ndarray(format="rgb24") if keep_image and f.picture is not None else None
        return cls(source=done.source, index=f.index, pts=f.pts, width=f.width, height=f.height,
                   detections=done.detections, names=names, image=image, input=done.input, output=done.output,
                   events=done.events, inferred=f.inferred)
