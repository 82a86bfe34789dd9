"""Regions of a decoded frame → a region model's inputs, in the memory the path works in.

The host paths crop here: `PlanesRoiFeed` copies the region's rows out of the decoder's own planes
(only the region: a few tens of KB) and swscale resizes it to the model's NV12 input, as the software
path's frame resizer does; `BgrRoiFeed` is the baseline's cv2 crop and resize. The VA paths crop on
the GPU (`resize.vaapi_roi`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import av
import numpy as np

from zerocopy.roi.crops import Crop, RoiPlacement

# what a feed gives per region: the model's inputs, where the region landed in them, what must stay alive
Fed = tuple[dict[str, Any], RoiPlacement, Any]


class RoiFeed(Protocol):
    def __call__(self, source: Any, crops: Sequence[Crop]) -> list[Fed]:
        """Each region of `source` (the decoded frame the path kept: `PreparedFrame.source`)."""
        ...


def crop_planes(frame: av.VideoFrame, crop: Crop) -> av.VideoFrame:
    """A new frame holding `crop` of `frame` (any planar or semi-planar format), tagged with the colour
    matrix the whole frame is read with (a small crop would otherwise be guessed BT.601)."""
    from zerocopy.resize.planes import source_matrix

    sub = av.VideoFrame(crop.w, crop.h, frame.format.name)
    for src_plane, dst_plane, comp in zip(frame.planes, sub.planes, _plane_scales(frame), strict=True):
        sx, sy, size = comp
        src = np.frombuffer(src_plane, np.uint8).reshape(-1, src_plane.line_size)
        dst = np.frombuffer(dst_plane, np.uint8).reshape(-1, dst_plane.line_size)
        x0, y0 = (crop.x0 >> sx) * size, crop.y0 >> sy
        w = dst_plane.width * size
        dst[: dst_plane.height, :w] = src[y0 : y0 + dst_plane.height, x0 : x0 + w]
    sub.colorspace = source_matrix(frame.colorspace, frame.width, frame.height)
    sub.color_range = frame.color_range
    return sub


def _plane_scales(frame: av.VideoFrame) -> list[tuple[int, int, int]]:
    """Per plane: (log2 horizontal subsampling, log2 vertical subsampling, bytes per sample position)."""
    out = []
    for index, plane in enumerate(frame.planes):
        sx = round(frame.width / plane.width).bit_length() - 1
        sy = round(frame.height / plane.height).bit_length() - 1
        out.append((sx, sy, _bytes_per(frame, index)))
    return out


def _bytes_per(frame: av.VideoFrame, index: int) -> int:
    """Bytes per sample position of a plane: 1 (8-bit), 2 (16-bit, or 8-bit interleaved UV), 4 (16-bit UV)."""
    bits = max(c.bits for c in frame.format.components)
    comps = sum(1 for c in frame.format.components if c.plane == index)
    return (2 if bits > 8 else 1) * comps


class PlanesRoiFeed:
    """Software path: crop from the decoder's planes, swscale to the model's NV12 input."""

    def __init__(self, model):
        from zerocopy.resize.planes import PlaneResizer

        self.resizer = PlaneResizer(model.width, model.height, model.spec.resize)
        self.names = model.input_names

    def __call__(self, frame: av.VideoFrame, crops: Sequence[Crop]) -> list[Fed]:
        out = []
        y_name, uv_name = self.names
        for crop in crops:
            y, uv, g = self.resizer(crop_planes(frame, crop))
            out.append(({y_name: y, uv_name: uv}, RoiPlacement(crop, g), None))
        return out


class BgrRoiFeed:
    """Baseline: crop the full-size BGR picture and `cv2.resize` it, as the classic demo would."""

    def __init__(self, model):
        from zerocopy.decode.opencv import import_cv2
        from zerocopy.resize.bgr import BGRResizer

        self.resizer = BGRResizer(import_cv2(), model.width, model.height, model.spec.resize)
        (self.name,) = model.input_names

    def __call__(self, bgr: np.ndarray, crops: Sequence[Crop]) -> list[Fed]:
        out = []
        for crop in crops:
            x0, y0, x1, y1 = crop.xyxy
            tensor, g = self.resizer(bgr[y0:y1, x0:x1])
            out.append(({self.name: tensor}, RoiPlacement(crop, g), None))
        return out
