"""Regions: the detector run again on squares around what moves and what was found, Frigate's answer to far objects.

The whole frame squeezed into a 300×300 input makes a person at 13 % of a 1080p frame's height 36 pixels tall, and
`objects` misses them (docs/regions.md). On each inferred frame where motion is measured (`--motion`, serve's
cameras), squares around the motion detector's boxes and around the boxes the frame before ended with (tracked
objects where they were: they move little in a fifth of a second) are cut at least the model's input size, so a far
person fills a good part of the input, and the detector runs on them beside the whole frame; their boxes are mapped
back and merged with the whole frame's as the tiles' are (`tiles.CropPasses`: the same crops, runs and merge).

Which squares (`choose_regions`), as Frigate's `calculate_region` and `get_cluster_region` do: each box's square is
`GROW` times its longer side, at least the model's input, kept inside the frame; squares that overlap become one
around both boxes, while that one still shows its content at least twice as large as the whole frame does (its side
at most `LARGEST` of the frame's long side); a larger square is left to the whole frame. At most `MOST` squares a
frame, the smallest first (the whole frame sees those least). None when motion covers more than `WHOLE_FRAME` of the
picture (the whole frame looks at it), nor when nothing moves and nothing was found.

The second compiled copy of the detector is made when a frame with motion first comes (the path's first frame,
during its trial, when its input measures motion): a run without motion compiles nothing more.

Per camera, what it did is said as a record (`roi.region_state.RegionState`: serve's `/metrics`); the run report's
`regions` section (`RegionTimes`) is the whole run's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame
from zerocopy.infer.model import WrappedModel
from zerocopy.motion.detector import Motion
from zerocopy.resize.crops import SIZE_STEP, Crop
from zerocopy.roi.region_state import RegionState, RegionSums
from zerocopy.roi.stage import RoiTimes
from zerocopy.roi.tiles import CropPasses
from zerocopy.stages.base import Activation, InputInfo
from zerocopy.stages.motion import REFRESH_S
from zerocopy.track.times import media_time

GROW = 1.35  # a box's square is this times its longer side (Frigate's multiplier for clusters of motion)
LARGEST = 0.5  # a square wider than this share of the frame's long side: the whole frame sees it well enough
MOST = 4  # squares a frame at most
WHOLE_FRAME = 0.5  # motion over this share of the picture: the whole frame's inference looks at it
COVER_CELL = 8  # the covered share is counted on a grid of cells this many pixels a side


def square_around(box: Sequence[float], side: int, width: int, height: int) -> Crop:
    """The square (even edges, a multiple of `SIZE_STEP` a side) at least `side` and `GROW` times the box's longer
    side, centred on the box and shifted to lie inside the `width`×`height` frame (as large as its short side at
    most)."""
    x1, y1, x2, y2 = (float(v) for v in box)
    s = max(float(side), GROW * max(x2 - x1, y2 - y1))
    s = min(int(math.ceil(s / SIZE_STEP)) * SIZE_STEP, min(width, height) & ~1)
    x0 = min(max(0.0, (x1 + x2 - s) / 2), width - s)
    y0 = min(max(0.0, (y1 + y2 - s) / 2), height - s)
    return Crop(int(x0) & ~1, int(y0) & ~1, s, s)


def _overlap(a: Crop, b: Crop) -> bool:
    return a.x0 < b.x0 + b.w and b.x0 < a.x0 + a.w and a.y0 < b.y0 + b.h and b.y0 < a.y0 + a.h


def choose_regions(boxes: np.ndarray, width: int, height: int, side: int, most: int = MOST) -> list[Crop]:
    """The squares to run the detector on around `boxes` ((N, 4) frame pixels: what moves, what was found) in a
    `width`×`height` frame, `side` the model's input side in frame pixels (see the module): merged where they
    overlap, those too large to be worth it left out, the smallest first, at most `most`."""
    largest = LARGEST * max(width, height)
    groups = [(np.asarray(b, np.float64), square_around(b, side, width, height)) for b in np.reshape(boxes, (-1, 4))]
    merged = True
    while merged:  # each merge leaves one group fewer: it ends
        merged = False
        for i in range(len(groups)):
            for j in range(i + 1, len(groups)):
                (a, ra), (b, rb) = groups[i], groups[j]
                if not _overlap(ra, rb):
                    continue
                both = np.concatenate([np.minimum(a[:2], b[:2]), np.maximum(a[2:], b[2:])])
                square = square_around(both, side, width, height)
                if square.w <= largest:
                    groups[i], merged = (both, square), True
                    del groups[j]
                    break
            if merged:
                break
    squares = sorted((r for _, r in groups if r.w <= largest), key=lambda r: (r.w, r.y0, r.x0))
    return list(dict.fromkeys(squares))[:most]


def squares(motion: Motion, before: np.ndarray | None, width: int, height: int, side: int) -> list[Crop]:
    """A frame's squares (`choose_regions`): around its `motion` boxes (fractions of the frame) and the boxes its
    input's frame before ended with (`before`, frame pixels); none when motion covers more than `WHOLE_FRAME` of
    the picture or the whole scene changed."""
    if motion.fraction > WHOLE_FRAME or motion.whole_scene:
        return []
    moving = np.asarray(motion.boxes, np.float64).reshape(-1, 4) * np.array([width, height, width, height])
    boxes = moving if before is None else np.concatenate([np.asarray(before, np.float64).reshape(-1, 4), moving])
    return choose_regions(boxes, width, height, side) if len(boxes) else []


def covered(crops: Sequence[Crop], width: int, height: int) -> float:
    """The share of the frame the crops cover together (counted in `COVER_CELL` cells)."""
    if not crops:
        return 0.0
    n = COVER_CELL
    grid = np.zeros((-(-height // n), -(-width // n)), bool)
    for c in crops:
        grid[c.y0 // n: -(-(c.y0 + c.h) // n), c.x0 // n: -(-(c.x0 + c.w) // n)] = True
    return float(grid.mean())


@dataclass(kw_only=True)
class RegionTimes(RoiTimes):
    """The tiles' times, with what regions add: the inferred frames where motion was measured (`frames`), how many
    squares each needed (mean, most) and the share of the frame they covered (mean over those frames)."""

    frames: int = 0
    most: int = 0
    covered: float = 0.0  # summed over `frames`
    counts: dict[int, int] = field(default_factory=dict)  # frames by their number of squares

    def chose(self, crops: Sequence[Crop], width: int, height: int) -> float:
        """A frame's squares counted; the share of the frame they cover."""
        share = covered(crops, width, height)
        self.frames += 1
        self.most = max(self.most, len(crops))
        self.covered += share
        self.counts[len(crops)] = self.counts.get(len(crops), 0) + 1
        return share

    def summary(self) -> dict[str, Any]:
        n = max(1, self.frames)
        return {"frames": self.frames,
                "per_frame": {"mean": round(sum(k * v for k, v in self.counts.items()) / n, 3), "max": self.most},
                "frames_by_count": {str(k): v for k, v in sorted(self.counts.items())},
                "covered": round(self.covered / n, 4), "inferences_added": self.regions, **super().summary()}

    def reset(self) -> None:
        super().reset()
        self.frames, self.most, self.covered, self.counts = 0, 0, 0.0, {}


class Regions(CropPasses):
    """The detector on squares around each inferred frame's motion and the boxes of the input's frame before (see
    the module): a stage, before the class filter (where the tiles would be), compiled on the first frame with
    motion."""

    name = "regions"
    title = "regions"

    def __init__(self, wrapped: WrappedModel):
        super().__init__(wrapped)
        self.times: RegionTimes = RegionTimes()
        self._at: Activation | None = None
        self._before: dict[int, np.ndarray] = {}  # each input's boxes on its last inferred frame
        self._inputs: dict[int, _Said] = {}  # each open input's camera, and when its `RegionState` was last said
        self._sums: dict[str, RegionSums] = {}  # each camera's, over its openings

    def activate(self, at: Activation) -> None:
        self._at = at

    def _ready(self) -> None:
        if self.feed is None:
            assert self._at is not None, "activate first"
            super().activate(self._at)

    def prime(self, frame: PreparedFrame) -> None:
        """Compiled now when the path's first frame measures motion: a path that cannot run it fails its trial."""
        if frame.motion is not None and frame.source is not None:
            self._ready()

    def begin(self, input: InputInfo) -> None:
        self._before.pop(input.index, None)
        self._sums.setdefault(input.camera, RegionSums())
        self._inputs[input.index] = _Said(camera=input.camera, rate=input.rate)

    def end(self, input: int) -> list:
        self._before.pop(input, None)
        said = self._inputs.pop(input, None)
        if said is None or not self._sums[said.camera].frames:
            return []
        return [RegionState.of(said.camera, self._sums[said.camera])]

    def __call__(self, frame: PreparedFrame, detections: Detections | None, input: int) -> \
            tuple[Detections | None, list]:
        if detections is None or frame.motion is None or frame.source is None:
            return detections, []
        crops = squares(frame.motion, self._before.get(input), frame.width, frame.height,
                        max(self.wrapped.width, self.wrapped.height))
        share = self.times.chose(crops, frame.width, frame.height)
        if crops:
            self._ready()
            detections = self.passes(frame, detections, crops)
        self._before[input] = detections.xyxy.copy()
        return detections, self._state(input, frame, len(crops), share)

    def _state(self, input: int, frame: PreparedFrame, squares: int, share: float) -> list:
        """The frame's squares added to its camera's sums; their `RegionState` if due (`REFRESH_S`)."""
        said = self._inputs.get(input)
        if said is None:
            return []
        sums = self._sums[said.camera]
        sums.add(squares, share)
        t = media_time(frame, said.rate)
        if said.t <= t < said.t + REFRESH_S:
            return []
        said.t = t
        return [RegionState.of(said.camera, sums)]

    def release(self) -> None:
        self._at = None
        self._before.clear()
        self._inputs.clear()
        super().release()


@dataclass(kw_only=True)
class _Said:
    """An open input's camera and rate, and the media time its camera's `RegionState` was last said at."""

    camera: str
    rate: float
    t: float = -math.inf
