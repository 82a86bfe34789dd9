"""The VA-API paths: decode on the GPU and `scale_vaapi` there, then either hand the scaled surface to
OpenVINO as remote NV12 tensors (`zero-copy`) or download the small frame (`copy`).

Every failure on the way to the first prepared frame (no bridge, a PyAV too old, a node that cannot
be opened, a codec the GPU cannot decode, a graph the driver refuses) is a `PathUnavailable` with a
coded `Reason`, so `auto` moves on to the next path and says why.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import av

from zerocopy.bridge import BridgeUnavailable, LayoutError, load_bridge
from zerocopy.decode.pyav import NothingDecodes
from zerocopy.decode.vaapi import codec_label, hw_owned_support, open_vaapi
from zerocopy.errors import PathUnavailable
from zerocopy.frames import PreparedFrame
from zerocopy.handoff.surface import SurfaceHandoff, va_context
from zerocopy.motion.luma import VaapiLuma
from zerocopy.paths.base import FrameStream, OpenRequest, Prepare, Prepared, PreparedStream
from zerocopy.paths.host import HostFront
from zerocopy.probe import refusals
from zerocopy.refusals import Code, Reason
from zerocopy.resize.planes import PlaneResizer
from zerocopy.resize.vaapi import VaapiScaler
from zerocopy.resize.vaapi_roi import VaapiRoiFeed

T = TypeVar("T")
VA_NIREQ = 4  # requests in flight on the VA paths unless --nireq says otherwise (sizes the surface pools)


class _VAFront:
    """What both VA paths share: their static checks and how an input is opened and primed."""

    name = ""
    nireq_cap: int | None = VA_NIREQ
    download = False
    roi_input_kind = "nv12"  # regions are cropped and scaled on the GPU, to NV12 like the frames

    def refusals(self, facts, config) -> list[str]:
        letterbox = config.resize == "letterbox"
        return refusals(facts(), config.batch, letterbox, config.device, config.va_device).get(self.name, [])

    def _open(self, source, req: OpenRequest) -> tuple[Any, PreparedStream, PreparedFrame]:
        """VA-API decoder (on the run's shared VA device) + scale_vaapi graph; the first frame prepared."""
        try:
            bridge = load_bridge()
        except BridgeUnavailable as e:
            raise PathUnavailable({self.name: Reason(Code.NO_BRIDGE, f"native bridge: {e}")}) from None
        old_pyav = hw_owned_support()
        if old_pyav:
            raise PathUnavailable({self.name: Reason(Code.PYAV_TOO_OLD, old_pyav)})
        model, config, va = req.model, req.config, req.va
        node = va.open_node(self.name)
        scaler = VaapiScaler(bridge, model.width, model.height, model.spec.resize, download=self.download,
                             picture=req.keep_images)
        luma = VaapiLuma(bridge, self.name) if config.motion else None  # --motion: a second, tiny graph
        # a reconnected source decodes on the run's device too
        decoder = open_vaapi(source, node, self.name, config.realtime, config.live_policy,
                             on_reopen=lambda d: va.share(bridge, d), stop=req.stop)
        with va.lock:  # inputs opened at once: the first to decode gives the run's device, the rest join it
            try:
                va.share(bridge, decoder)
            except (BridgeUnavailable, LayoutError) as e:
                decoder.close()
                raise PathUnavailable({self.name: Reason(
                    Code.VA_DEVICE, f"cannot decode {source} on the run's VA device: {e}")}) from None
            prepare = _adopting(bridge, va, self._scale(scaler, req))
            motion = req.motion(_adopting(bridge, va, luma)) if luma is not None else None
            # a frame --detect-fps leaves out goes through no VPP, unless its picture is drawn (its graph makes it)
            stream = PreparedStream(decoder, prepare, bridge=bridge, detect_fps=req.config.detect_fps, motion=motion,
                                    show=(lambda frame: prepare(frame).shown) if req.keep_images else None)
            return bridge, stream, prime(self.name, stream, source)

    def _scale(self, scaler, req: OpenRequest) -> Prepare:
        raise NotImplementedError

    def roi_feed(self, model, stream):
        """Regions cropped by the GPU from the decoded surface (`resize/vaapi_roi.py`): remote tensors on
        zero-copy (on the stream's VA context, which the region model is compiled on), downloaded on copy."""
        return VaapiRoiFeed(self.name, stream.bridge, model, stream.context, download=self.download)


def prime(name: str, stream: PreparedStream, source) -> PreparedFrame:
    """The first frame through a VA path's stages now (while the input is opened), every failure a
    refusal of the path `name`."""
    try:
        first = stream.prime()
    except NothingDecodes as e:
        label = codec_label(stream.decoder)
        stream.close()
        raise PathUnavailable({name: Reason(Code.CODEC, f"the GPU cannot decode {label} ({e})")}) from None
    except (av.FFmpegError, BridgeUnavailable, LayoutError, RuntimeError, ValueError, OSError) as e:
        stream.close()
        raise PathUnavailable({name: Reason(
            Code.VA_FIRST_FRAME, f"VA-API pipeline failed on the first frame: {e}")}) from None
    if first is None:
        damage = stream.damage_report().summary()
        stream.close()
        raise PathUnavailable({name: Reason(Code.VA_FIRST_FRAME, f"VA-API decoded no frame of {source} ({damage})")})
    return first


def _adopting(bridge, va, scale: Callable[[Any], T]) -> Callable[[Any], T]:
    """`scale` (the model's scaler, or the motion's luma picture) behind the adoption of the run's VA device from
    its first frame."""

    def prepare(frame):
        if va.device is None:
            va.adopt(bridge, frame)
        return scale(frame)

    return prepare


class CopyFront(_VAFront, HostFront):
    """VA-API decode and scale_vaapi on the GPU, then download the small NV12 frame."""

    name = "copy"
    input_kind = "nv12"
    download = True

    def _scale(self, scaler, req: OpenRequest) -> Prepare:
        model = req.model
        unpack = PlaneResizer(model.width, model.height, "stretch", ring=req.unbound)  # same size: a copy
        y_name, uv_name = model.input_names

        def scale(frame):
            scaled = scaler(frame)
            y, uv, _ = unpack(scaled.frame)
            return Prepared(inputs={y_name: y, uv_name: uv}, geometry=scaled.geometry, shown=scaled.shown,
                            source=frame if req.keep_source else None)

        return scale

    def open(self, source, req: OpenRequest) -> FrameStream:
        return self._open(source, req)[1]


class ZeroCopyFront(_VAFront):
    """VA-API decode, scale_vaapi, and the scaled surface handed to OpenVINO as remote tensors."""

    name = "zero-copy"
    input_kind = "nv12"
    memory_type = "GPU_SURFACE"
    devices = ("GPU",)

    def _scale(self, scaler, req: OpenRequest) -> Prepare:
        def scale(frame):
            scaled = scaler(frame)
            return Prepared(inputs={}, geometry=scaled.geometry, keepalive=scaled.frame, shown=scaled.shown,
                            source=frame if req.keep_source else None)

        return scale

    def open(self, source, req: OpenRequest) -> FrameStream:
        bridge, stream, first = self._open(source, req)
        va = req.va
        try:
            with va.lock:
                if va.context is None:  # one remote context per run: every input decodes on this display
                    va.context = va_context(req.model.core, bridge.display_capsule(first.keepalive))
        except PathUnavailable:
            stream.close()
            raise
        stream.context = va.context
        return stream

    def handoff(self, model, stream):
        return SurfaceHandoff(stream.context, model.input_names, stream.bridge)
