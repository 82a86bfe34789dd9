"""Regions of a decoded VA-API frame → a region model's NV12 input, without leaving the GPU.

FFmpeg's VA-API filters read the input frame's crop fields as their source rectangle
(`ff_vaapi_vpp_init_params` in libavfilter/vaapi_vpp.c sets the VPP `input_region` from
`crop_left/top/right/bottom` and clears the output frame's), and a buffer source queues its own
reference made by `av_frame_ref`, whose `frame_copy_props` copies the crop fields and nothing in
the buffer source applies or checks them (checked on FFmpeg 5.1 and 9.0 by the bridge's self-test).
So a region is a new reference to the decoded surface with its crop fields set — made and pushed by
the bridge (`Bridge.push_region`), so the decoded frame itself is never touched — through a
`scale_vaapi` (+ `pad_vaapi`) graph at the region model's size. zero-copy hands the scaled surface
over as remote NV12 tensors (no pixel reaches the host); copy downloads the small region only.
`scale_vaapi` never passes a frame through untouched here (it would ignore the crop): the colour
options of `SCALE_OPTIONS` rule FFmpeg's passthrough out.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import av
import av.filter

from zerocopy.errors import InferenceError, PathUnavailable, openvino_reason
from zerocopy.frames import Geometry, ResizeMode
from zerocopy.refusals import Code, Reason
from zerocopy.resize.crops import Crop, RoiPlacement, central_crop
from zerocopy.resize.planes import PlaneResizer
from zerocopy.resize.regions import Fed
from zerocopy.resize.vaapi import graph_chain, missing_filters

ROI_GRAPHS = 8  # scale_vaapi graphs kept per region model (each holds a VA context and an output pool)
QUANTUM = 8  # letterboxed content sizes are multiples of this: a bounded set of graphs


def roi_geometry(crop: Crop, dst_w: int, dst_h: int, mode: ResizeMode) -> Geometry:
    """Where a region lands in the model input.

    A VA graph's output size is fixed when it is configured, and a letterboxed region's content size
    follows its aspect: square regions (face-mesh's) all fit the whole input, but regions clipped at
    the frame's edge take every aspect, and a moving face would need a new graph almost every frame.
    So the content's shorter side is rounded to `QUANTUM` pixels (at most 4 px of 192 stretched: 2 %),
    which bounds the geometries per model size (≤ 2 × size / QUANTUM) so a small cache of graphs keeps
    the ones in use. The Geometry says what was produced, so keypoints map back exactly.
    """
    g = Geometry.fit(crop.w, crop.h, dst_w, dst_h, mode)
    if g.is_full:
        return g
    cw = min(dst_w, max(QUANTUM, round(g.content_w / QUANTUM) * QUANTUM)) if g.content_w < dst_w else dst_w
    ch = min(dst_h, max(QUANTUM, round(g.content_h / QUANTUM) * QUANTUM)) if g.content_h < dst_h else dst_h
    return Geometry(src_w=crop.w, src_h=crop.h, dst_w=dst_w, dst_h=dst_h, x0=((dst_w - cw) // 2) & ~1,
                    y0=((dst_h - ch) // 2) & ~1, content_w=cw, content_h=ch)


@dataclass(frozen=True, kw_only=True)
class GraphLayout:
    """What a region's graph depends on: where the content goes in the input (not the region's own size,
    which the crop fields carry). A key of the graphs kept."""

    dst_w: int  # the model input's size
    dst_h: int
    x0: int  # where the content starts in it
    y0: int
    content_w: int  # the content's size (the rest: letterbox bars)
    content_h: int


def layout(g: Geometry) -> GraphLayout:
    """The layout of `g`'s graph."""
    return GraphLayout(dst_w=g.dst_w, dst_h=g.dst_h, x0=g.x0, y0=g.y0, content_w=g.content_w, content_h=g.content_h)


class _Graph:
    """buffer (the decoder's hw_frames_ctx, attached by the bridge) → scale_vaapi → [pad_vaapi] →
    [hwdownload → format=nv12] → buffersink, for frames of one size and frames context."""

    def __init__(self, bridge, frame: av.VideoFrame, g: Geometry, download: bool):
        self.graph = av.filter.Graph()
        sw = frame.sw_format  # created with the software format; the bridge switches it to VAAPI
        self.src = self.graph.add_buffer(width=frame.width, height=frame.height,
                                         format=sw.name if sw is not None else frame.format.name,
                                         time_base=frame.time_base or Fraction(1, 25))
        bridge.attach_hw_frames(self.src, frame)
        chain = graph_chain(g, download)
        nodes = [self.graph.add(name, args) if args else self.graph.add(name) for name, args in chain]
        self.src.link_to(nodes[0])
        for a, b in zip(nodes, nodes[1:], strict=False):
            a.link_to(b)
        self.graph.configure()
        self.sink = nodes[-1]


class VaapiRoiFeed:
    """`RoiFeed` of the VA paths: each region cropped and scaled by the GPU; on `zero-copy` handed over
    as remote NV12 tensors on the run's VA context, on `copy` downloaded (model size) into host planes.

    Made when the region model is activated (before the run commits): what can be checked without a
    frame refuses the path then (`PathUnavailable`, `Code.ROI_CROP`); `prime` tries a frame's region
    likewise. A region failing later (the run committed) is an `InferenceError` saying why.
    """

    def __init__(self, path: str, bridge, model, context: Any = None, download: bool = False):
        self.path, self.download = path, download
        mode: ResizeMode = model.spec.resize
        missing = missing_filters(mode, download)
        if missing:
            raise self._refusal(f"PyAV's FFmpeg lacks the {', '.join(missing)} filter(s)")
        if bridge is None:
            raise self._refusal("the native bridge is not loaded")
        if not download and context is None:
            raise self._refusal("no VA remote context to hand regions to")
        self.bridge, self.context = bridge, context
        self.dst_w, self.dst_h, self.mode = model.width, model.height, mode
        self.y_name, self.uv_name = model.input_names
        self._graphs: OrderedDict[tuple, _Graph] = OrderedDict()
        self._unpack = None
        if download:
            self._unpack = PlaneResizer(self.dst_w, self.dst_h, "stretch")  # same size: a copy; fresh planes

    def _refusal(self, why: str) -> PathUnavailable:
        return PathUnavailable({self.path: Reason(Code.ROI_CROP, f"cropping regions on the GPU: {why}")})

    @property
    def graphs(self) -> int:
        return len(self._graphs)

    def _graph(self, frame: av.VideoFrame, g: Geometry) -> _Graph:
        key = (self.bridge.frames_context_id(frame), frame.width, frame.height, layout(g))
        graph = self._graphs.get(key)
        if graph is None:
            graph = self._graphs[key] = _Graph(self.bridge, frame, g, self.download)
            while len(self._graphs) > ROI_GRAPHS:
                self._graphs.popitem(last=False)  # its surfaces still held by requests stay valid (refcounted)
        self._graphs.move_to_end(key)
        return graph

    def _one(self, frame: av.VideoFrame, crop: Crop) -> Fed:
        g = roi_geometry(crop, self.dst_w, self.dst_h, self.mode)
        graph = self._graph(frame, g)
        self.bridge.push_region(graph.src, frame, crop.crop_fields(frame.width, frame.height))
        small = graph.sink.pull()
        place = RoiPlacement(crop, g)
        if self._unpack is not None:
            planes = self._unpack(small)
            return Fed({self.y_name: planes.y, self.uv_name: planes.uv}, place)
        y, uv = self.context.create_tensor_nv12(g.dst_h, g.dst_w, self.bridge.surface_id(small))
        return Fed({self.y_name: y, self.uv_name: uv}, place, keepalive=(small, y, uv))

    def crop(self, frame: av.VideoFrame, crops: Sequence[Crop]) -> list[Fed]:
        """The regions, or the first failure as it was raised."""
        return [self._one(frame, crop) for crop in crops]

    def __call__(self, frame: av.VideoFrame, crops: Sequence[Crop]) -> list[Fed]:
        try:
            return self.crop(frame, crops)
        except _FAILURES as e:
            raise InferenceError(f"{self.path}: cropping a region on the GPU failed: {_why(e)}") from None

    def prime(self, frame: av.VideoFrame) -> list[Fed]:
        """The middle of `frame` cropped as a region would be, every failure a refusal of the path."""
        try:
            return self.crop(frame, [central_crop(frame.width, frame.height)])
        except _FAILURES as e:
            raise self._refusal(f"a region of the first frame failed: {_why(e)}") from None


# graph refused (av.FFmpegError, ValueError), the bridge (BridgeUnavailable, LayoutError: RuntimeErrors), OpenVINO
# (RuntimeError, TypeError: create_tensor_nv12 without a GPU, or on a context that cannot take the surface)
_FAILURES = (av.FFmpegError, RuntimeError, TypeError, ValueError, OSError)


def _why(e: BaseException) -> str:
    return openvino_reason(e) if isinstance(e, RuntimeError) else (str(e) or type(e).__name__)
