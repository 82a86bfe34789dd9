"""The small luma picture motion is measured on (`detector.luma_size`: 192 pixels on its long side), made by each
path's own scaler, never through a full-size copy:

- software: point samples of the decoded Y plane, read in place: for the 8-bit formats whose first plane is the
  luma (`EIGHT_BIT_LUMA`: what cameras send), the sampled rows then the sampled columns taken with numpy (0.27 ms a
  1080p frame fresh from the decoder on a 2-core EPYC, against 0.57 ms for the same samples through swscale, whose
  frame setup and chroma planes cost more than the samples); any other format (10-bit, packed) through swscale to a
  small `yuv420p` (`POINT`), of which the Y plane is read. The noise point samples keep is what the cells' count is
  for (`detector.py`);
- baseline: point samples of the BGR picture the path converts anyway (the same rows and columns);
- VA paths: a second, tiny `scale_vaapi` graph of the decoded surface (the same chain builder as the model's
  scaler, `resize/vaapi.py`), downloaded at that size (~30 KB of NV12 at 1080p), of which the Y plane is read.

Every maker gives full-range brightness (0 black … 255 white), so `--motion-threshold` means the same on every path
(a limited-range picture, 16–235, goes through a lookup table).
"""

from __future__ import annotations

from typing import Any

import av
import av.filter
import numpy as np
from av.video.reformatter import VideoReformatter

from zerocopy.errors import PathUnavailable
from zerocopy.frames import Geometry
from zerocopy.motion.detector import luma_size
from zerocopy.motion.gate import Luma
from zerocopy.refusals import Code, Reason
from zerocopy.resize.planes import is_full_range
from zerocopy.resize.vaapi import graph_chain, missing_filters, surface_graph

# BT.601 limited-range luma (16–235, what scale_vaapi's NV12 carries) → full range, as a lookup table
FULL_FROM_LIMITED = np.clip(np.round((np.arange(256) - 16) * 255 / 219), 0, 255).astype(np.uint8)


# formats whose first plane is 8-bit luma, one byte a pixel: sampled in place
EIGHT_BIT_LUMA = frozenset({"yuv420p", "yuvj420p", "yuv422p", "yuvj422p", "yuv444p", "yuvj444p", "nv12", "nv21",
                            "nv16", "gray"})


def plane_y(frame: av.VideoFrame, width: int, height: int) -> np.ndarray:
    """The first plane of a small frame in system memory as a `height`×`width` view (its line padding cut)."""
    plane = frame.planes[0]
    return np.frombuffer(plane, np.uint8).reshape(-1, plane.line_size)[:height, :width]


class Samples:
    """Where the luma picture of a `width`×`height` frame samples it: a row and a column per pixel of the picture
    (`luma_size`), at its centre. Kept between frames of one size."""

    def __init__(self) -> None:
        self._key: tuple[int, int] | None = None
        self.rows = self.cols = np.zeros(0, np.intp)

    def of(self, width: int, height: int) -> Samples:
        if (width, height) != self._key:
            self._key = (width, height)
            lw, lh = luma_size(width, height)
            self.rows = ((np.arange(lh) + 0.5) * height / lh).astype(np.intp)
            self.cols = ((np.arange(lw) + 0.5) * width / lw).astype(np.intp)
        return self

    def take(self, picture: np.ndarray) -> np.ndarray:
        """The samples of `picture` (rows first: only the sampled lines are read)."""
        return np.take(np.take(picture, self.rows, axis=0), self.cols, axis=1)


class PlanesLuma:
    """Software path: a decoded `av.VideoFrame` (any pixel format, range and depth) → its luma picture: the Y plane's
    samples read in place (`EIGHT_BIT_LUMA`), else one swscale call to a small yuv420p in the frame's own range."""

    def __init__(self) -> None:
        self._sws = VideoReformatter()  # keeps swscale's context between frames
        self._at = Samples()

    def __call__(self, frame: av.VideoFrame) -> Luma:
        # gray with no range tag is full range (swscale's meaning of gray); tagged, its tag holds
        full = is_full_range(frame) or (frame.format.name.startswith("gray") and frame.color_range != 1)
        at = self._at.of(frame.width, frame.height)
        if frame.format.name in EIGHT_BIT_LUMA:
            plane = frame.planes[0]
            y = at.take(np.frombuffer(plane, np.uint8).reshape(-1, plane.line_size))
        else:
            same = "JPEG" if full else "MPEG"  # no range conversion in swscale: the table below is cheaper
            w, h = len(at.cols), len(at.rows)
            small = self._sws.reformat(frame, width=w, height=h, format="yuv420p", src_color_range=same,
                                       dst_color_range=same, interpolation="POINT", threads=1)
            y = plane_y(small, w, h)
        return Luma(y if full else np.take(FULL_FROM_LIMITED, y), frame.width, frame.height)


class BgrLuma:
    """Baseline path: the full-size BGR picture the path converts anyway → its luma picture, from point samples."""

    def __init__(self) -> None:
        self._at = Samples()

    def __call__(self, bgr: np.ndarray) -> Luma:
        h, w = bgr.shape[:2]
        small = self._at.of(w, h).take(bgr).astype(np.uint16)  # (lh, lw, 3): the sampled lines copied, then pixels
        y = (small[..., 0] * 29 + small[..., 1] * 150 + small[..., 2] * 77 + 128) >> 8  # BT.601, full range
        return Luma(y.astype(np.uint8), w, h)


class VaapiLuma:
    """VA paths: a VA-API frame → its luma picture: buffer (the frame's `hw_frames_ctx`, attached by the bridge)
    → scale_vaapi to the luma size → hwdownload → format=nv12 → buffersink; the Y plane read. Its graph is made on
    the first frame and again when the size changes; a missing filter refuses the path `path`."""

    def __init__(self, bridge, path: str):
        missing = missing_filters("stretch", download=True)
        if missing:
            raise PathUnavailable({path: Reason(
                Code.NO_VA_FILTER, f"PyAV's FFmpeg lacks the {', '.join(missing)} filter(s) (--motion)")})
        self.bridge = bridge
        self._key: tuple[int, int] | None = None
        self._graph = self._src = self._sink = None
        self._size = (0, 0)

    def chain(self, width: int, height: int) -> list[tuple[str, str]]:
        """The filters after the buffer source for frames of `width`×`height`."""
        lw, lh = luma_size(width, height)
        return graph_chain(Geometry.fit(width, height, lw, lh, "stretch"), download=True)

    def graph(self, frame: av.VideoFrame) -> tuple[av.filter.Graph, Any, Any]:
        """The graph for frames like `frame`, not configured yet (configuring needs the driver): the graph, its
        buffer source (holding the frame's `hw_frames_ctx`) and its sink."""
        return surface_graph(self.bridge, frame, self.chain(frame.width, frame.height))

    def _build(self, frame: av.VideoFrame) -> None:
        graph, src, sink = self.graph(frame)
        graph.configure()
        self._graph, self._src, self._sink = graph, src, sink
        self._key = (frame.width, frame.height)
        self._size = luma_size(frame.width, frame.height)

    def __call__(self, frame: av.VideoFrame) -> Luma:
        if (frame.width, frame.height) != self._key:
            self._build(frame)
        self._src.push(frame)
        small = self._sink.pull()
        return Luma(np.take(FULL_FROM_LIMITED, plane_y(small, *self._size)), frame.width, frame.height)
