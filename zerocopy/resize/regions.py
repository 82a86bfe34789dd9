"""Regions of a decoded frame → a region model's inputs, in the memory the path works in.

The host paths crop here: `PlanesRoiFeed` gives swscale a view of the region in the decoder's own
planes (no copy) and resizes it straight into the model's input; `BgrRoiFeed` is the baseline's cv2
crop and resize. The VA paths crop on the GPU (`resize.vaapi_roi`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol

import av
import numpy as np
from av.video.reformatter import ColorRange, Colorspace, Interpolation, VideoReformatter

from zerocopy.decode.opencv import import_cv2
from zerocopy.frames import Geometry
from zerocopy.resize.bgr import BGRResizer
from zerocopy.resize.crops import Crop, RoiPlacement
from zerocopy.resize.planes import SWS_MATRIX, interpolation, is_full_range, source_matrix

# The software feed reads one sample a cache line of a region's rows before swscale does: the decoded frame
# is out of cache by then (the detector's resize and inference came between), and swscale, reading row by
# row 1280+ bytes apart, waits on each row's lines in turn (measured: 0.03 ms of a ~0.14 ms region). Not
# for regions of more than PREFETCH_MAX bytes of luma: the first lines would leave the cache before swscale
# came to them (a whole 1080p frame: 10 % slower with it; a 960×540 region still 20 % faster).
PREFETCH_BYTES = 64  # a cache line
PREFETCH_MAX = 1 << 19

BGR24 = av.VideoFormat("bgr24")

class Fed(NamedTuple):
    """What a feed gives per region."""

    inputs: dict[str, Any]  # the region model's inputs by name (host arrays, or remote tensors over a surface)
    place: RoiPlacement  # where the region landed in them (the way back to frame pixels)
    keepalive: Any = None  # what must stay alive until the region's inference ends (a VA surface)


class RoiFeed(Protocol):
    def __call__(self, source: Any, crops: Sequence[Crop]) -> list[Fed]:
        """Each region of `source` (the decoded frame the path kept: `PreparedFrame.source`)."""
        ...


class PlaneShape(NamedTuple):
    """How one plane of a frame samples the picture."""

    x_shift: int  # its width is the picture's >> x_shift (1 for 4:2:0 chroma)
    y_shift: int  # its height is the picture's >> y_shift
    per_pixel: int  # samples per pixel (2 for interleaved UV)


class PlaneLayout(NamedTuple):
    """The planes of a software frame's format and size (`plane_layout`)."""

    dtype: np.dtype  # the sample type (uint8, or uint16 past 8 bits)
    planes: tuple[PlaneShape, ...]


# (format, width, height) → its layout
_LAYOUTS: dict[tuple[str, int, int], PlaneLayout] = {}


def plane_layout(frame: av.VideoFrame) -> PlaneLayout:
    """The sample type of `frame`'s planes and the shape of each, computed once per format and size."""
    key = (frame.format.name, frame.width, frame.height)
    found = _LAYOUTS.get(key)
    if found is None:
        components = frame.format.components
        dtype = np.dtype(np.uint16 if max(c.bits for c in components) > 8 else np.uint8)
        found = _LAYOUTS[key] = PlaneLayout(dtype, tuple(
            PlaneShape(round(frame.width / plane.width).bit_length() - 1,
                       round(frame.height / plane.height).bit_length() - 1,
                       sum(1 for c in components if c.plane == index))
            for index, plane in enumerate(frame.planes)))
    return found


def plane_views(frame: av.VideoFrame) -> list[np.ndarray]:
    """Each plane of a software frame as a 2-D array of its samples (rows of `line_size` bytes)."""
    dtype = plane_layout(frame).dtype
    return [np.frombuffer(plane, dtype).reshape(-1, plane.line_size // dtype.itemsize) for plane in frame.planes]


def region_planes(views: list[np.ndarray], shapes: tuple[PlaneShape, ...], crop: Crop) -> tuple[np.ndarray, ...]:
    """`crop` of each plane (`plane_views`, `plane_layout`'s shapes): views with the source's row stride, no pixel
    copied, that keep the source's buffers alive; `av.VideoFrame.from_dlpack` makes them a frame."""
    x0, y0, x1, y1 = crop.x0, crop.y0, crop.x0 + crop.w, crop.y0 + crop.h
    return tuple(view[y0 >> p.y_shift : y1 >> p.y_shift,
                      (x0 >> p.x_shift) * p.per_pixel : (x1 >> p.x_shift) * p.per_pixel]
                 for view, p in zip(views, shapes, strict=True))


class _Scaling(NamedTuple):
    """How regions of one size and format are scaled (`PlanesRoiFeed`'s contexts)."""

    reformat: Callable[..., av.VideoFrame]  # a swscale context's own `reformat`
    args: dict  # its arguments: the content's size, BGR, the source's matrix and range, the filter
    geometry: Geometry  # where such a region lands in the model's input


class PlanesRoiFeed:
    """Software path: a view of the region in the decoder's planes, swscaled straight to the model's BGR
    input (`Front.roi_input_kind`).

    BGR rather than NV12: swscale converts BT.709 sources to BT.601 NV12 (what OpenVINO's NV12 input
    decodes) on a slow path, ~0.21 ms for a 256² region against ~0.09 ms for the (SIMD) conversion to
    BGR, measured on this 2-core machine. One swscale context per region size (the last `CONTEXTS`
    sizes): making one costs about as much as the resize (`crops.SIZE_STEP` makes sizes repeat).

    Per region, besides swscale: the region's source lines are fetched first (`PREFETCH_BYTES`), and a
    region that fills the input (a square one for a square model; every one when stretched) is handed on
    in swscale's own new frame, not copied (a fresh buffer each call, kept alive by the array: it stays
    valid while the region is in flight); only a letterboxed one is copied into a zeroed tensor.
    """

    CONTEXTS = 32

    def __init__(self, model):
        self.width, self.height, self.mode = model.width, model.height, model.spec.resize
        (self.name,) = model.input_names
        self._contexts: OrderedDict[tuple, _Scaling] = OrderedDict()

    def _context(self, frame: av.VideoFrame, crop: Crop) -> _Scaling:
        key = (crop.w, crop.h, frame.format.name, frame.colorspace, frame.color_range)
        found = self._contexts.pop(key, None)
        if found is None:
            g = Geometry.fit(crop.w, crop.h, self.width, self.height, self.mode)
            # (PyAV's own types rather than names: not looked up again on every call)
            args = {"width": g.content_w, "height": g.content_h, "format": BGR24, "threads": 1,
                    "src_colorspace": Colorspace[SWS_MATRIX[source_matrix(frame.colorspace, frame.width,
                                                                           frame.height)]],
                    "src_color_range": ColorRange.JPEG if is_full_range(frame) else ColorRange.MPEG,
                    "interpolation": Interpolation[interpolation(crop.w, crop.h, g.content_w, g.content_h)]}
            found = _Scaling(VideoReformatter().reformat, args, g)
        self._contexts[key] = found
        if len(self._contexts) > self.CONTEXTS:
            self._contexts.popitem(last=False)
        return found

    def __call__(self, frame: av.VideoFrame, crops: Sequence[Crop]) -> list[Fed]:
        out = []
        views = plane_views(frame)
        layout = plane_layout(frame)
        fmt, line = frame.format.name, PREFETCH_BYTES // layout.dtype.itemsize
        for crop in crops:
            scaling = self._context(frame, crop)
            g = scaling.geometry
            planes = region_planes(views, layout.planes, crop)
            if crop.w * crop.h * layout.dtype.itemsize <= PREFETCH_MAX:
                for plane in planes:  # one sample a cache line, all loads at once: swscale then reads from cache
                    plane[:, ::line].max()
            # (untagged: `args` give swscale the whole frame's matrix and range; a small crop would be guessed BT.601)
            small = scaling.reformat(av.VideoFrame.from_dlpack(planes, format=fmt, width=crop.w, height=crop.h),
                                     **scaling.args).to_ndarray()
            if g.is_full:  # the region fills the input: the new frame's own buffer is the tensor (not reused)
                tensor = (small if small.flags.c_contiguous else np.ascontiguousarray(small))[None]
            else:
                tensor = np.zeros((1, self.height, self.width, 3), np.uint8)
                tensor[0, g.y0 : g.y0 + g.content_h, g.x0 : g.x0 + g.content_w] = small
            out.append(Fed({self.name: tensor}, RoiPlacement(crop, g)))
        return out


class BgrRoiFeed:
    """Baseline: crop the full-size BGR picture and `cv2.resize` it, as the classic demo would."""

    def __init__(self, model):
        self.resizer = BGRResizer(import_cv2(), model.width, model.height, model.spec.resize)
        (self.name,) = model.input_names

    def __call__(self, bgr: np.ndarray, crops: Sequence[Crop]) -> list[Fed]:
        out = []
        for crop in crops:
            x0, y0, x1, y1 = crop.xyxy
            resized = self.resizer(bgr[y0:y1, x0:x1])
            out.append(Fed({self.name: resized.tensor}, RoiPlacement(crop, resized.geometry)))
        return out
