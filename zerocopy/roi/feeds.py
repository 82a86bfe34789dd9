"""Regions of a decoded frame → a region model's inputs, in the memory the path works in.

The host paths crop here: `PlanesRoiFeed` gives swscale a view of the region in the decoder's own
planes (no copy) and resizes it straight into the model's input; `BgrRoiFeed` is the baseline's cv2
crop and resize. The VA paths crop on the GPU (`resize.vaapi_roi`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Protocol

import av
import numpy as np
from av.video.reformatter import VideoReformatter

from zerocopy.frames import Geometry
from zerocopy.resize.planes import SWS_MATRIX, interpolation, is_full_range, source_matrix
from zerocopy.roi.crops import Crop, RoiPlacement

# what a feed gives per region: the model's inputs, where the region landed in them, what must stay alive
Fed = tuple[dict[str, Any], RoiPlacement, Any]


class RoiFeed(Protocol):
    def __call__(self, source: Any, crops: Sequence[Crop]) -> list[Fed]:
        """Each region of `source` (the decoded frame the path kept: `PreparedFrame.source`)."""
        ...


def plane_views(frame: av.VideoFrame) -> list[np.ndarray]:
    """Each plane of a software frame as a 2-D array of its samples (rows of `line_size` bytes)."""
    out = []
    for plane in frame.planes:
        dtype = np.uint16 if max(c.bits for c in frame.format.components) > 8 else np.uint8
        out.append(np.frombuffer(plane, dtype).reshape(-1, plane.line_size // np.dtype(dtype).itemsize))
    return out


def crop_view(frame: av.VideoFrame, crop: Crop, views: list[np.ndarray] | None = None) -> av.VideoFrame:
    """A frame whose planes are `crop` of `frame`'s own (no pixel copied: DLPack views with the source's
    row stride; they keep the source's buffers alive), tagged with the colour matrix the whole frame is
    read with (a small crop would otherwise be guessed BT.601)."""
    planes = []
    for index, (plane, view) in enumerate(zip(frame.planes, views or plane_views(frame), strict=True)):
        sx = round(frame.width / plane.width).bit_length() - 1
        sy = round(frame.height / plane.height).bit_length() - 1
        per = sum(1 for c in frame.format.components if c.plane == index)  # 2 for interleaved UV
        x0, x1 = (crop.x0 >> sx) * per, ((crop.x0 + crop.w) >> sx) * per
        planes.append(view[crop.y0 >> sy : (crop.y0 + crop.h) >> sy, x0:x1])
    sub = av.VideoFrame.from_dlpack(tuple(planes), format=frame.format.name, width=crop.w, height=crop.h)
    sub.colorspace = source_matrix(frame.colorspace, frame.width, frame.height)
    sub.color_range = frame.color_range
    return sub


class PlanesRoiFeed:
    """Software path: a view of the region in the decoder's planes, swscaled straight to the model's BGR
    input (`Front.roi_input_kind`).

    BGR rather than NV12: swscale converts BT.709 sources to BT.601 NV12 (what OpenVINO's NV12 input
    decodes) on a slow path, ~0.21 ms for a 256² region against ~0.09 ms for the (SIMD) conversion to
    BGR, measured on this 2-core machine. One swscale context per region size (the last `CONTEXTS`
    sizes): making one costs about as much as the resize (`crops.SIZE_STEP` makes sizes repeat).
    """

    CONTEXTS = 32

    def __init__(self, model):
        self.width, self.height, self.mode = model.width, model.height, model.spec.resize
        (self.name,) = model.input_names
        self._contexts: OrderedDict[tuple, tuple[VideoReformatter, dict, Geometry]] = OrderedDict()

    def _context(self, frame: av.VideoFrame, crop: Crop) -> tuple[VideoReformatter, dict, Geometry]:
        key = (crop.w, crop.h, frame.format.name, frame.colorspace, frame.color_range)
        found = self._contexts.pop(key, None)
        if found is None:
            g = Geometry.fit(crop.w, crop.h, self.width, self.height, self.mode)
            args = {"width": g.content_w, "height": g.content_h, "format": "bgr24", "threads": 1,
                    "src_colorspace": SWS_MATRIX[source_matrix(frame.colorspace, frame.width, frame.height)],
                    "src_color_range": "JPEG" if is_full_range(frame) else "MPEG",
                    "interpolation": interpolation(crop.w, crop.h, g.content_w, g.content_h)}
            found = (VideoReformatter(), args, g)
        self._contexts[key] = found
        if len(self._contexts) > self.CONTEXTS:
            self._contexts.popitem(last=False)
        return found

    def __call__(self, frame: av.VideoFrame, crops: Sequence[Crop]) -> list[Fed]:
        out = []
        views = plane_views(frame)
        for crop in crops:
            sws, args, g = self._context(frame, crop)
            small = sws.reformat(crop_view(frame, crop, views), **args).to_ndarray()
            tensor = np.zeros((1, self.height, self.width, 3), np.uint8)
            tensor[0, g.y0 : g.y0 + g.content_h, g.x0 : g.x0 + g.content_w] = small
            out.append(({self.name: tensor}, RoiPlacement(crop, g), None))
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
