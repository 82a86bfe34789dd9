"""`scale_vaapi` (and `pad_vaapi` for letterboxing) in a PyAV filter graph fed by VA-API frames.

PyAV cannot give a buffer source the decoder's `hw_frames_ctx`, which `scale_vaapi` needs, so the
native bridge attaches it before the graph is configured. The graph is built on the first frame
and rebuilt when the frame size changes. Output: NV12 at the model's size, BT.601 limited range
(FFmpeg's name for that matrix is `smpte170m`), the same geometry as the software path.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, NamedTuple

import av
import av.filter

from zerocopy.errors import PathUnavailable
from zerocopy.frames import Geometry, ResizeMode
from zerocopy.refusals import Code, Reason

# mode=hq: the driver's high-quality (filtered, so antialiased) scaling — scale_vaapi's default, said
# out loud because the model's small input needs it (the software path area-averages likewise)
SCALE_OPTIONS = "mode=hq:format=nv12:out_color_matrix=smpte170m:out_range=limited"


PICTURE_CHAIN = [("hwdownload", ""), ("format", "nv12|p010le"), ("buffersink", "")]


def graph_chain(g: Geometry, download: bool) -> list[tuple[str, str]]:
    """The filters after the buffer source, as (name, args).

    No `extra_hw_frames` here: with VA-API 1.x the VPP filters' output pools start empty and grow on
    demand (FFmpeg's vaapi_vpp sets initial_pool_size 0, and ff_filter_init_hw_frames then ignores
    extra_hw_frames), so the surfaces requests in flight hold never run out.
    """
    chain = [("scale_vaapi", f"w={g.content_w}:h={g.content_h}:{SCALE_OPTIONS}")]
    if not g.is_full:
        chain.append(("pad_vaapi", f"width={g.dst_w}:height={g.dst_h}:x={g.x0}:y={g.y0}:color=black"))
    if download:
        chain += [("hwdownload", ""), ("format", "nv12")]
    chain.append(("buffersink", ""))
    return chain


def buffer_source(graph: av.filter.Graph, bridge, frame: av.VideoFrame) -> av.filter.context.FilterContext:
    """A buffer source for VA-API frames like `frame`, with its `hw_frames_ctx` attached by the bridge.

    FFmpeg refuses a hardware format at buffer init without hw_frames_ctx, and PyAV initialises on creation:
    it is created with the software format, then the bridge switches it to VAAPI."""
    sw = getattr(frame, "sw_format", None)
    src = graph.add_buffer(width=frame.width, height=frame.height, format=getattr(sw, "name", sw) or "nv12",
                           time_base=frame.time_base or Fraction(1, 25))
    bridge.attach_hw_frames(src, frame)
    return src


def link_chain(graph: av.filter.Graph, head, chain: list[tuple[str, str]], pad: int = 0):
    """The filters of `chain` (as (name, args)) added to `graph` after output `pad` of `head`; the last of them."""
    nodes = [graph.add(name, args) if args else graph.add(name) for name, args in chain]
    head.link_to(nodes[0], pad, 0)
    for a, b in zip(nodes, nodes[1:], strict=False):
        a.link_to(b)
    return nodes[-1]


def surface_graph(bridge, frame: av.VideoFrame, chain: list[tuple[str, str]]) -> tuple[av.filter.Graph, Any, Any]:
    """A graph for VA-API frames like `frame`, not configured yet (configuring needs the driver): the graph, its
    buffer source (holding the frame's `hw_frames_ctx`) and the last filter of `chain` after it."""
    graph = av.filter.Graph()
    src = buffer_source(graph, bridge, frame)
    return graph, src, link_chain(graph, src, chain)


def missing_filters(mode: ResizeMode, download: bool) -> list[str]:
    need = ["scale_vaapi"] + (["pad_vaapi"] if mode == "letterbox" else []) + (["hwdownload"] if download else [])
    return [f for f in need if f not in av.filter.filters_available]


class Scaled(NamedTuple):
    """What `VaapiScaler` makes of a VA-API frame."""

    frame: av.VideoFrame  # the model-size NV12 frame: a VA surface, or in system memory with `download`
    shown: av.VideoFrame | None  # the full-size downloaded picture (`picture`), else None
    geometry: Geometry  # where the picture sits in the model input


class VaapiScaler:
    """VA-API frame → NV12 VA-API frame (or, with `download`, a small NV12 frame in system memory).

    With `picture`, a second branch downloads the full-size frame too, for sinks that draw on it.
    """

    def __init__(self, bridge, dst_w: int, dst_h: int, mode: ResizeMode, download: bool, picture: bool = False):
        missing = missing_filters(mode, download or picture)
        if missing:
            raise PathUnavailable({"copy" if download else "zero-copy": Reason(
                Code.NO_VA_FILTER, f"PyAV's FFmpeg lacks the {', '.join(missing)} filter(s)")})
        self.bridge, self.dst_w, self.dst_h, self.mode = bridge, dst_w, dst_h, mode
        self.download, self.picture = download, picture
        self._key: tuple[int, int] | None = None
        self._src = self._sink = self._picture_sink = self._graph = None
        self.geometry: Geometry | None = None

    def _build(self, frame: av.VideoFrame) -> None:
        g = Geometry.fit(frame.width, frame.height, self.dst_w, self.dst_h, self.mode)
        graph = av.filter.Graph()
        src = buffer_source(graph, self.bridge, frame)
        head = src
        if self.picture:
            head = graph.add("split")
            src.link_to(head)
            self._picture_sink = link_chain(graph, head, PICTURE_CHAIN, pad=1)
        sink = link_chain(graph, head, graph_chain(g, self.download))
        graph.configure()
        self._graph, self._src, self._sink, self.geometry = graph, src, sink, g
        self._key = (frame.width, frame.height)

    def __call__(self, frame: av.VideoFrame) -> Scaled:
        """The scaled frame, the full-size downloaded picture or None, and the geometry."""
        if (frame.width, frame.height) != self._key:
            self._build(frame)
        self._src.push(frame)
        out = self._sink.pull()
        shown = self._picture_sink.pull() if self._picture_sink is not None else None
        assert self.geometry is not None
        return Scaled(frame=out, shown=shown, geometry=self.geometry)


class SurfaceDownload:
    """One VA-API frame → the same picture in system memory (NV12, or P010 for 10-bit video): buffer (the frame's
    `hw_frames_ctx`, attached by the bridge) → hwdownload → format → buffersink. A full-size download, so for the
    few frames that need their pixels (a snapshot's), never every frame. Its graph is made on the first frame and
    again when the size or the frames context (the decoder's pool of surfaces) changes."""

    def __init__(self, bridge):
        self.bridge = bridge
        self._key: tuple[int, int, int] | None = None
        self._src = self._sink = self._graph = None

    def graph(self, frame: av.VideoFrame) -> tuple[av.filter.Graph, Any, Any]:
        """The graph for frames like `frame`, not configured yet: the graph, its buffer source and its sink."""
        return surface_graph(self.bridge, frame, PICTURE_CHAIN)

    def __call__(self, frame: av.VideoFrame) -> av.VideoFrame:
        key = (self.bridge.frames_context_id(frame), frame.width, frame.height)
        if key != self._key:
            graph, src, sink = self.graph(frame)
            graph.configure()
            self._graph, self._src, self._sink, self._key = graph, src, sink, key
        self._src.push(frame)
        return self._sink.pull()
