"""Baseline resize: full-size BGR → model-size BGR with `cv2.resize`, in the same geometry as NV12."""

from __future__ import annotations

import numpy as np

from zerocopy.frames import Geometry, ResizeMode


class BGRResizer:
    def __init__(self, cv2, dst_w: int, dst_h: int, mode: ResizeMode):
        self.cv2, self.dst_w, self.dst_h, self.mode = cv2, dst_w, dst_h, mode

    def __call__(self, bgr: np.ndarray) -> tuple[np.ndarray, Geometry]:
        h, w = bgr.shape[:2]
        g = Geometry.fit(w, h, self.dst_w, self.dst_h, self.mode)
        out = np.zeros((1, g.dst_h, g.dst_w, 3), np.uint8)
        out[0, g.y0 : g.y0 + g.content_h, g.x0 : g.x0 + g.content_w] = self.cv2.resize(
            bgr, (g.content_w, g.content_h), interpolation=self.cv2.INTER_LINEAR
        )
        return out, g
