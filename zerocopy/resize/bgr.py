"""Baseline resize: full-size BGR → model-size BGR with `cv2.resize`, in the same geometry as NV12.

The filter follows the software path's rule: area averaging (`INTER_AREA`, what OpenCV recommends
for shrinking) where the picture shrinks by 2 or more — over whole k×k blocks, then bilinear for the
rest of the way — and bilinear (`INTER_LINEAR`) otherwise, so that both paths feed the model an
antialiased picture and their detections agree.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from zerocopy.frames import Geometry, ResizeMode
from zerocopy.resize.planes import uses_area


class ResizedBGR(NamedTuple):
    """A picture resized into the model's BGR input (`BGRResizer`), and where it landed there."""

    tensor: np.ndarray  # [1, h, w, 3] uint8 BGR, the letterbox bars black
    geometry: Geometry


class BGRResizer:
    def __init__(self, cv2, dst_w: int, dst_h: int, mode: ResizeMode, antialias: bool = True):
        self.cv2, self.dst_w, self.dst_h, self.mode, self.antialias = cv2, dst_w, dst_h, mode, antialias

    def __call__(self, bgr: np.ndarray) -> ResizedBGR:
        h, w = bgr.shape[:2]
        g = Geometry.fit(w, h, self.dst_w, self.dst_h, self.mode)
        area = uses_area(w, g.content_w, self.antialias) or uses_area(h, g.content_h, self.antialias)
        cv2 = self.cv2
        k = int(min(w / g.content_w, h / g.content_h)) if area else 1
        if k >= 2:
            # OpenCV's INTER_AREA is fast only at whole-number factors (at others, ~8 ms a 1080p frame
            # here): average k×k blocks first, then finish bilinearly, as a careful baseline would.
            # The last w % k columns and h % k rows are left out: < 0.2 % of a 1080p frame.
            bgr = cv2.resize(bgr[: h - h % k, : w - w % k], None, fx=1 / k, fy=1 / k, interpolation=cv2.INTER_AREA)
        method = cv2.INTER_AREA if area and k < 2 else cv2.INTER_LINEAR
        out = np.zeros((1, g.dst_h, g.dst_w, 3), np.uint8)
        out[0, g.y0 : g.y0 + g.content_h, g.x0 : g.x0 + g.content_w] = cv2.resize(
            bgr, (g.content_w, g.content_h), interpolation=method)
        return ResizedBGR(out, g)
