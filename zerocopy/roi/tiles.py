"""`--tiles N`: the detector run again on square tiles of the frame, its boxes merged with the whole frame's.

A square detector squeezes a 16:9 frame 1.8× across and shrinks it (300×300 from 640×360: a person at a
fifth of the frame height becomes 60 px tall and half as wide as it should be); `objects` then misses
people and cats at 20 % of the height and cups at 30 % (docs/models.md). Square tiles keep the aspect
and magnify: N rows of them, overlapping by at least `OVERLAP` of their side, so an object smaller than
the overlap is whole in some tile (SAHI's slicing, with its whole-frame pass kept for large objects).

Tiles are cut on each path as region models' crops are (`resize.regions`, `resize.vaapi_roi`: swscale from the
decoded planes, cv2 on the baseline's picture, the VA scaler reading the surface's crop fields), and run
on a second compiled copy of the detector, up to 4 tiles in flight at once.

Merging, per label: a box a tile cut off at one of its inner edges (not the frame's) is dropped when a box
of another pass reaches on across that cut and holds a good part of it (the object is whole there), else
joined with the other tile's piece facing it across their shared strip; then the boxes of every pass go
through one NMS at the model's own overlap.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame
from zerocopy.infer.model import WrappedModel
from zerocopy.postprocess.nms import nms
from zerocopy.resize.crops import Crop, RoiPlacement
from zerocopy.roi.stage import CroppingStage, RegionRunner, RoiTimes
from zerocopy.stages.base import Activation

OVERLAP = 0.2  # neighbouring tiles share at least this share of their side
EDGE = 0.02  # a box edge this close (share of the tile side) to a tile's inner edge: cut off by the tile
PIECE = 0.4  # a cut box with this share of its area inside a whole box reaching across the cut: a piece of it
LINED_UP = 0.5  # two tiles' pieces facing each other across their shared strip, overlapping this much (IoU) along it


def _starts(length: int, side: int) -> list[int]:
    """Even tile starts along one axis, evenly spread from 0 to `length - side`, overlapping ≥ `OVERLAP`."""
    last = (length - side) & ~1
    if last <= 0:
        return [0]
    n = math.ceil(last / (side * (1 - OVERLAP))) + 1
    return sorted({(round(i * last / (n - 1)) & ~1) for i in range(n)})


@lru_cache(maxsize=16)
def tile_crops(width: int, height: int, rows: int) -> tuple[Crop, ...]:
    """`rows` rows of square tiles across the frame's short side (columns along a portrait frame), each
    overlapping its neighbours by ≥ `OVERLAP`; () when one tile would be the whole frame."""
    short = min(width, height) & ~1
    side = short if rows == 1 else min(short, math.ceil(short / (rows - (rows - 1) * OVERLAP) / 2) * 2)
    if side >= (width & ~1) and side >= (height & ~1):
        return ()
    return tuple(Crop(x, y, side, side) for y in _starts(height, side) for x in _starts(width, side))


class _InFrame:
    """A tile's geometry (model input → tile) carried on to frame pixels: what postprocessors call."""

    def __init__(self, place: RoiPlacement):
        self.place = place

    def to_source(self, xyxy_norm: np.ndarray) -> np.ndarray:
        c = self.place.crop
        return self.place.geometry.to_source(xyxy_norm) + np.array([c.x0, c.y0, c.x0, c.y0], np.float32)


def cut_by(crop: Crop, boxes: np.ndarray, width: int, height: int) -> np.ndarray:
    """Which sides (left, top, right, bottom) of each box (frame pixels, found in `crop`) lie on one of the
    tile's edges inside the frame: the tile cut the object there. (N, 4) booleans."""
    m = EDGE * max(crop.w, crop.h)
    x0, y0, x1, y1 = crop.xyxy
    return np.stack([(boxes[:, 0] <= x0 + m) & (x0 > 0), (boxes[:, 1] <= y0 + m) & (y0 > 0),
                     (boxes[:, 2] >= x1 - m) & (x1 < width - 1), (boxes[:, 3] >= y1 - m) & (y1 < height - 1)], 1)


def _held(a: np.ndarray, b: np.ndarray) -> float:
    """The share of box `a`'s area inside box `b`."""
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    area = max((a[2] - a[0]) * (a[3] - a[1]), 1e-9)
    return float(w * h / area)


def _reaches_across(whole: np.ndarray, piece: np.ndarray, sides: np.ndarray, margin: float) -> bool:
    """Whether `whole` reaches (within `margin`) every side the tile cut `piece` at, or past it: the piece can be
    part of it. (An object may also just end at a tile's edge: then the whole box ends there too.)"""
    return bool((not sides[0] or whole[0] <= piece[0] + margin) and (not sides[1] or whole[1] <= piece[1] + margin)
                and (not sides[2] or whole[2] >= piece[2] - margin) and (not sides[3] or whole[3] >= piece[3] - margin))


def _span_iou(a0: float, a1: float, b0: float, b1: float) -> float:
    inter = max(0.0, min(a1, b1) - max(a0, b0))
    return inter / max(max(a1, b1) - min(a0, b0), 1e-9)


def _facing(a: np.ndarray, sa: np.ndarray, b: np.ndarray, sb: np.ndarray) -> bool:
    """Whether two pieces are one object cut by two tiles: one cut on its right (bottom), the other on its left
    (top), overlapping across the strip the tiles share, and lined up along it."""
    for lo, hi, across in ((0, 2, (1, 3)), (1, 3, (0, 2))):  # side by side, then one above the other
        for p, sp, q, sq in ((a, sa, b, sb), (b, sb, a, sa)):
            if sp[hi] and sq[lo] and q[lo] < p[hi] and p[lo] < q[lo] and p[hi] < q[hi] \
                    and _span_iou(p[across[0]], p[across[1]], q[across[0]], q[across[1]]) >= LINED_UP:
                return True
    return False


def merge(passes: list[tuple[Detections, np.ndarray]], iou: float, margin: float = 0.0) -> Detections:
    """One set of boxes from several passes over a frame: each pass's boxes and their cut sides (`cut_by`; the
    whole frame's first, cut nowhere). Until nothing changes, the best-scored piece first: a piece a tile cut
    off goes when an uncut box reaches its cuts and holds `PIECE` of it (the object is whole there), else the
    pieces of other tiles facing it across their shared strip join it (one box, cut only where both were: an
    object taller than the strip is cut in both rows of tiles, and its four pieces make one whole box). Then
    one NMS at `iou` (the model's own overlap). `margin`: how near (px) a whole box must come to a cut."""
    if not passes or not sum(len(d) for d, _ in passes):
        return Detections.empty()
    xyxy = np.concatenate([d.xyxy for d, _ in passes]).astype(np.float32)
    scores = np.concatenate([d.scores for d, _ in passes]).astype(np.float32)
    labels = np.concatenate([d.labels for d, _ in passes]).astype(np.int32)
    sides = np.concatenate([np.asarray(c, bool).reshape(-1, 4) for _, c in passes])
    alive = np.ones(len(xyxy), bool)

    def whole_elsewhere(i: int) -> bool:
        whole = np.flatnonzero(alive & ~sides.any(1) & (labels == labels[i]))
        return any(_held(xyxy[i], xyxy[j]) >= PIECE and _reaches_across(xyxy[j], xyxy[i], sides[i], margin)
                   for j in whole)

    changed = True
    while changed:  # each change removes a box: it ends
        changed = False
        pieces = np.flatnonzero(alive & sides.any(1))
        for i in pieces[np.argsort(-scores[pieces], kind="stable")]:
            if not alive[i] or not sides[i].any():
                continue
            if whole_elsewhere(i):
                alive[i], changed = False, True
                continue
            for j in np.flatnonzero(alive & sides.any(1) & (labels == labels[i])):
                if j != i and _facing(xyxy[i], sides[i], xyxy[j], sides[j]):  # the other tile's piece: one box
                    xyxy[i, :2] = np.minimum(xyxy[i, :2], xyxy[j, :2])
                    xyxy[i, 2:] = np.maximum(xyxy[i, 2:], xyxy[j, 2:])
                    scores[i] = max(scores[i], scores[j])
                    sides[i] &= sides[j]
                    alive[j], changed = False, True
    idx = np.flatnonzero(alive)
    kept, _ = nms(xyxy[idx], scores[idx], iou, labels[idx])
    keep = idx[np.sort(kept)]
    return Detections(xyxy[keep], scores[keep], labels[keep])


class CropPasses(RegionRunner, CroppingStage):
    """The run's detector again on crops of each inferred frame (`wrapped`: wrapped for the path's region input,
    with the run's threshold and classes), its boxes mapped back to the frame and merged with the whole frame's:
    what tiles and regions share. A stage; `times` its report."""

    def __init__(self, wrapped: WrappedModel):
        super().__init__(wrapped)
        self.times = RoiTimes()

    def activate(self, at: Activation) -> None:
        self.start(at.device, at.context, at.ov_config, at.feed(self.wrapped), at.models)

    def passes(self, frame: PreparedFrame, dets: Detections, crops: Sequence[Crop]) -> Detections:
        """The whole frame's boxes (`dets`) merged with those the detector finds in `crops` (cut and run at
        once); the stage's time on the frame into `times`."""
        assert self.wrapped.postprocessor is not None, "start first"
        t0 = time.perf_counter()
        fed, outputs = self.cut_and_run(frame.source, crops, self.times)
        post = self.wrapped.postprocessor
        passes = [(dets, np.zeros((len(dets), 4), bool))]
        for out, region in zip(outputs, fed, strict=True):
            found = post(out, _InFrame(region.place))  # type: ignore[arg-type]
            passes.append((found, cut_by(region.place.crop, found.xyxy, frame.width, frame.height)))
        merged = merge(passes, post.nms_iou, EDGE * max(c.w for c in crops))
        self.times.add_frame(time.perf_counter() - t0, len(crops))
        return merged


class Tiler(CropPasses):
    """The detector on `rows` rows of tiles of each inferred frame: a stage, tried on the first frame's own boxes
    during the path's trial."""

    name = "tiles"
    title = "tiles"

    def __init__(self, wrapped: WrappedModel, rows: int):
        super().__init__(wrapped)
        self.rows = rows

    def apply(self, frame: PreparedFrame, dets: Detections) -> Detections:
        """The whole frame's boxes (`dets`) merged with the tiles'."""
        crops = tile_crops(frame.width, frame.height, self.rows)
        if not crops or frame.source is None:
            return dets
        return self.passes(frame, dets, crops)
