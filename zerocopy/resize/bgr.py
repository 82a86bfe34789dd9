"""Baseline resize: full-size BGR → model-size BGR with `cv2.resize`, in the same geometry as NV12.

The filter follows the software path's rule: area averaging (`INTER_AREA`, what OpenCV recommends
for shrinking) where the picture shrinks by 2 or more, bilinear (`INTER_LINEAR`) otherwise, so
that both paths feed the model an antialiased picture and their detections agree.
"""

from __future__ import annotations

import numpy as np

from zerocopy.frames import Geometry, ResizeMode
from zerocopy.resize.planes import uses_area


class BGRResizer:
    def __init__(self, cv2, dst_w: int, dst_h: int, mode: ResizeMode, antialias: bool = True):
        self.cv2, self.dst_w, self.dst_h, self.mode, self.antialias = cv2, dst_w, dst_h, mode, antialias

    def __call__(self, bgr: np.ndarray) -> tuple[np.ndarray, Geometry]:
        h, w = bgr.shape[:2]
        g = Geometry.fit(w, h, self.dst_w, self.dst_h, self.mode)
        area = uses_area(w, g.content_w, self.antialias) or uses_area(h, g.content_h, self.antialias)
        out = np.zeros((1, g.dst_h, g.dst_w, 3), np.uint8)
        out[0, g.y0 : g.y0 + g.content_h, g.x0 : g.x0 + g.content_w] = self.cv2.resize(
            bgr, (g.content_w, g.content_h), interpolation=self.cv2.INTER_AREA if area else self.cv2.INTER_LINEAR
        )
        return out, g
