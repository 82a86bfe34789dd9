"""Which region of the frame a box becomes for a region model, and the way back to frame pixels.

Regions are axis-aligned: the box grown by the model's factor about its centre (MediaPipe's graphs
grow face boxes ×1.5 and palm boxes ×2.6), made square when the model wants a square (its side
then rounded up to a multiple of `SIZE_STEP`), then clipped to the frame. Every edge is even, so that an
NV12 crop keeps its chroma aligned (and a VA-API crop's source rectangle is the same on every
path). A clipped region is no longer square: it is letterboxed into the model's input, which keeps
its aspect, as MediaPipe pads a crop that leaves the frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from zerocopy.frames import Geometry, ResizeMode

MIN_SIDE = 8  # a region smaller than this (in frame pixels, after clipping) is not worth a model run
# Square region sizes are rounded up to a multiple of this: a box that moves or grows by a few pixels keeps
# its region size, so the resizer set up for that size (swscale's context: ~0.1 ms to make) is used again.
SIZE_STEP = 16


@dataclass(frozen=True)
class Crop:
    """A region of a frame in its pixels: left/top corner and size, all even."""

    x0: int
    y0: int
    w: int
    h: int

    @property
    def xyxy(self) -> tuple[int, int, int, int]:
        return self.x0, self.y0, self.x0 + self.w, self.y0 + self.h

    def crop_fields(self, frame_w: int, frame_h: int) -> tuple[int, int, int, int]:
        """FFmpeg's AVFrame crop_left/top/right/bottom for this region of a `frame_w`×`frame_h` frame."""
        return self.x0, self.y0, frame_w - self.x0 - self.w, frame_h - self.y0 - self.h


def crop_for(box: np.ndarray, frame_w: int, frame_h: int, expand: float = 1.0, square: bool = False) -> Crop | None:
    """The region a box (x1, y1, x2, y2 in frame pixels) becomes, or None when too little of it is left."""
    x1, y1, x2, y2 = (float(v) for v in box)
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    w, h = (x2 - x1) * expand, (y2 - y1) * expand
    if square:  # (letterboxed models: a little more context is harmless; a stretched text line's is not)
        w = h = max(w, h)
        w = h = np.ceil(w / SIZE_STEP) * SIZE_STEP
    left = max(0, int(np.floor((cx - w / 2) / 2)) * 2)
    top = max(0, int(np.floor((cy - h / 2) / 2)) * 2)
    right = min(frame_w - frame_w % 2, int(np.ceil((cx + w / 2) / 2)) * 2)
    bottom = min(frame_h - frame_h % 2, int(np.ceil((cy + h / 2) / 2)) * 2)
    if right - left < MIN_SIDE or bottom - top < MIN_SIDE:
        return None
    return Crop(left, top, right - left, bottom - top)


def central_crop(width: int, height: int) -> Crop:
    """The middle half of a frame (even edges): a region to try a path's cropping on."""
    w, h = max(2, (width // 2) & ~1), max(2, (height // 2) & ~1)
    return Crop((width // 4) & ~1, (height // 4) & ~1, w, h)


@dataclass(frozen=True)
class RoiPlacement:
    """A region and where it lands in the region model's input (`geometry`, crop → input)."""

    crop: Crop
    geometry: Geometry

    @classmethod
    def fit(cls, crop: Crop, dst_w: int, dst_h: int, mode: ResizeMode) -> RoiPlacement:
        return cls(crop, Geometry.fit(crop.w, crop.h, dst_w, dst_h, mode))

    def points_to_source(self, points: np.ndarray) -> np.ndarray:
        """(K, 2+) points in the model input's pixels → (K, 2) frame pixels (not clipped: a landmark
        may lie outside the region, as a hand's fingertips do)."""
        g = self.geometry
        p = np.asarray(points, np.float32).reshape(len(points), -1)[:, :2].copy()
        p[:, 0] = (p[:, 0] - g.x0) * (g.src_w / g.content_w) + self.crop.x0
        p[:, 1] = (p[:, 1] - g.y0) * (g.src_h / g.content_h) + self.crop.y0
        return p
