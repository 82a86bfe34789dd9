"""CPU resize of a decoded frame straight to NV12 at the model's size, by FFmpeg's swscale.

One `sws_scale_frame` call reads the decoder's own planes and writes the model-size NV12 in BT.601
limited range (what OpenVINO's NV12 input expects), so no full-size copy is made. Where the picture
shrinks by 2 or more along an axis the filter is area averaging (`SWS_AREA`, as
`cv2.resize(INTER_AREA)`: plain bilinear sampling would alias, and a face of ~10 model pixels would
then hinge on where the taps fall); below that, bilinear.

Why swscale and not numpy: PyAV releases the GIL around `sws_scale_frame`, so the resizes of several
streams run on every core at once. The numpy resizer it replaced (separable box sums, ~20 array
calls a frame) held the GIL between its calls: with ten 1080p streams it capped the whole pipeline
near 1.5 cores of 2, and it took 2.1 ms of CPU a frame for a 448×256 input against 1.05–1.25 ms here
(colour conversion included).
"""

from __future__ import annotations

from typing import NamedTuple

import av
import numpy as np
from av.video.reformatter import VideoReformatter

from zerocopy.frames import Geometry, ResizeMode

# From this shrink factor on, an axis is area-averaged instead of bilinearly sampled.
AREA_FROM = 2.0

# FFmpeg's AVColorSpace → the name PyAV's reformatter knows it by (swscale's SWS_CS_*).
SWS_MATRIX = {1: "ITU709", 4: "FCC", 5: "ITU601", 6: "ITU601", 7: "SMPTE240M", 9: "BT2020", 10: "BT2020"}


class NV12(NamedTuple):
    """A picture as the model's NV12 input takes it: uint8 BT.601 limited range, batch 1."""

    y: np.ndarray  # [1, h, w, 1]
    uv: np.ndarray  # [1, h/2, w/2, 2], interleaved


class ResizedNV12(NamedTuple):
    """A decoded frame resized into the model's NV12 input (`PlaneResizer`), and where it landed there."""

    y: np.ndarray  # [1, h, w, 1]
    uv: np.ndarray  # [1, h/2, w/2, 2], interleaved
    geometry: Geometry


def source_matrix(colorspace: int, width: int, height: int) -> int:
    """The AVColorSpace to read a frame with; unspecified streams are guessed by size, as players do."""
    if colorspace in SWS_MATRIX:
        return colorspace
    return 1 if (height >= 720 or width >= 1280) else 6


def uses_area(n_src: int, n_out: int, antialias: bool = True) -> bool:
    """Whether an axis of `n_src` samples resized to `n_out` is area-averaged (else bilinear)."""
    return antialias and n_src >= AREA_FROM * n_out


def interpolation(src_w: int, src_h: int, out_w: int, out_h: int, antialias: bool = True) -> str:
    """swscale's filter for this resize. `antialias=False`: 2-tap bilinear at every factor
    (`FAST_BILINEAR`, which does not widen its footprint when shrinking: aliasing, for comparisons)."""
    if not antialias:
        return "FAST_BILINEAR"
    return "AREA" if uses_area(src_w, out_w) or uses_area(src_h, out_h) else "BILINEAR"


def is_full_range(frame: av.VideoFrame) -> bool:
    return frame.color_range == 2 or frame.format.name.startswith("yuvj")


class PlaneResizer:
    """Decoded `av.VideoFrame` (any pixel format, any matrix, 8 to 16 bits) → `ResizedNV12`: Y [1,h,w,1] and
    UV [1,h/2,w/2,2] uint8 NV12 in BT.601 limited range, plus its `Geometry`.

    With `ring=n` the outputs come from n preallocated buffer pairs, reused in turn (their letterbox
    bars are filled once): a frame's planes stay valid until n more frames have been resized, so n
    must exceed the frames that can be in flight at once. `ring=0` allocates fresh planes each call.
    Streams without a colour matrix are read as players do (BT.709 from 720 lines or 1280 columns on,
    else BT.601); gray frames as full range whatever their tag, as swscale reads them (and as
    OpenCV reads a gray picture for the baseline). One resizer serves one thread.
    """

    def __init__(self, dst_w: int, dst_h: int, mode: ResizeMode, ring: int = 0, antialias: bool = True):
        if dst_w % 2 or dst_h % 2:
            raise ValueError(f"NV12 needs an even input size, got {dst_w}x{dst_h}")
        self.dst_w, self.dst_h, self.mode, self.ring = dst_w, dst_h, mode, ring
        self.antialias = antialias
        self._sws = VideoReformatter()  # keeps swscale's context (and its filters) between frames
        self._key: tuple | None = None
        self._args: dict = {}
        self._geometry: Geometry | None = None
        self._buffers: list[NV12] = []
        self._next = 0

    def geometry_for(self, width: int, height: int) -> Geometry:
        return Geometry.fit(width, height, self.dst_w, self.dst_h, self.mode)

    def plan(self, frame: av.VideoFrame) -> None:
        g = self._geometry = self.geometry_for(frame.width, frame.height)
        full = is_full_range(frame)
        self._args = {
            "width": g.content_w, "height": g.content_h, "format": "nv12",
            "src_colorspace": SWS_MATRIX[source_matrix(frame.colorspace, frame.width, frame.height)],
            "src_color_range": "JPEG" if full else "MPEG",
            "dst_colorspace": "ITU601", "dst_color_range": "MPEG",
            "interpolation": interpolation(frame.width, frame.height, g.content_w, g.content_h, self.antialias),
            "threads": 1,  # one resize per stream thread: the streams are the parallelism
        }
        self._buffers = [self._blank() for _ in range(self.ring)]

    def __call__(self, frame: av.VideoFrame) -> ResizedNV12:
        key = (frame.format.name, frame.width, frame.height, frame.colorspace, frame.color_range)
        if key != self._key:
            self.plan(frame)
            self._key = key
        g = self._geometry
        assert g is not None
        small = self._sws.reformat(frame, **self._args)
        if self._buffers:
            out = self._buffers[self._next]
            self._next = (self._next + 1) % len(self._buffers)
        else:
            out = self._blank()
        cw, ch = g.content_w, g.content_h
        y_plane, uv_plane = small.planes
        y = np.frombuffer(y_plane, np.uint8).reshape(-1, y_plane.line_size)
        uv = np.frombuffer(uv_plane, np.uint8).reshape(-1, uv_plane.line_size)
        out.y[0, g.y0 : g.y0 + ch, g.x0 : g.x0 + cw, 0] = y[:ch, :cw]
        uy, ux = g.y0 // 2, g.x0 // 2
        out.uv[0, uy : uy + ch // 2, ux : ux + cw // 2] = uv[: ch // 2, :cw].reshape(ch // 2, cw // 2, 2)
        return ResizedNV12(out.y, out.uv, g)

    def _blank(self) -> NV12:
        """Black NV12 planes (Y 16, UV 128): the letterbox bars."""
        return NV12(np.full((1, self.dst_h, self.dst_w, 1), 16, np.uint8),
                    np.full((1, self.dst_h // 2, self.dst_w // 2, 2), 128, np.uint8))
