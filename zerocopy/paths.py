"""The pipeline paths as compositions of stages, and the order `auto` tries them in.

Every path ends in the same place: a `PreparedFrame` whose inputs fit the shared wrapped model.
Only decode, resize and hand-off differ between them:

| path      | decode                 | preprocess                               | hand-off                         |
|-----------|------------------------|------------------------------------------|----------------------------------|
| zero-copy | VA-API, frames on GPU  | scale_vaapi (+ pad_vaapi)                | VA surface → remote NV12 tensors |
| copy      | VA-API, frames on GPU  | scale_vaapi, hwdownload (small)          | host NV12 arrays                 |
| software  | FFmpeg on the CPU      | bilinear gather from the planes          | host NV12 arrays                 |
| baseline  | OpenCV `grab()`        | full-size BGR (`retrieve()`), cv2.resize | host BGR array                   |
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from zerocopy.decode.base import VideoDecoder
from zerocopy.decode.damage import DamageReport
from zerocopy.decode.live import LivePolicy
from zerocopy.decode.vaapi import VASession
from zerocopy.errors import PathUnavailable
from zerocopy.frames import Geometry, PreparedFrame

PATHS = ("zero-copy", "copy", "software", "baseline")
AUTO_ORDER = ("zero-copy", "copy", "software")
VA_NIREQ = 4  # requests in flight on the VA paths unless --nireq says otherwise (sizes the surface pools)

# prepare(picture) → (model inputs, geometry, object to keep alive until inference ends, picture to draw on)
Prepare = Callable[[Any], tuple[dict[str, Any], Geometry, Any, Any]]


@dataclass
class OpenRequest:
    """What a front needs to know to open an input for a given wrapped model."""

    input_names: list[str]
    width: int
    height: int
    resize: str
    keep_pictures: bool = False
    batch: int = 1
    va: VASession | None = None  # the run's render node and shared VA device (VA paths)
    core: Any = None
    decode_threads: int | None = None  # FFmpeg threads for CPU decoding (None: budget.decode_threads)
    realtime: bool = False  # hold a file's frames to their timestamps, as a camera delivers them
    live: LivePolicy | None = None  # timeouts, reconnecting and back-off for live sources (None: the defaults)


class FrameStream(Protocol):
    rate: float
    expected_frames: int | None
    context: Any  # a remote context the model must be compiled with, or None

    def __iter__(self) -> Iterator[PreparedFrame]: ...
    def damage_report(self) -> DamageReport: ...
    def close(self) -> None: ...


class _Stream:
    """One open input: a decoder's `(picture, decode_ms, pts)` prepared into model inputs."""

    context: Any = None
    bridge: Any = None  # the native bridge, on the VA paths

    def __init__(self, decoder: VideoDecoder, prepare: Prepare):
        self.decoder, self.prepare = decoder, prepare
        self.rate = decoder.rate
        self.expected_frames = decoder.expected_frames
        # its frames come as they happen (a live source, a paced file) rather than as fast as they decode
        self.live = bool(decoder.live or decoder.realtime)
        self._frames = self._generate()
        self._primed: list[PreparedFrame] = []

    def _generate(self) -> Iterator[PreparedFrame]:
        for index, decoded in enumerate(self.decoder.frames()):
            picture, decode_ms, pts = decoded[:3]
            t0 = time.perf_counter()
            inputs, g, keepalive, shown = self.prepare(picture)
            pre_ms = (time.perf_counter() - t0) * 1e3
            yield PreparedFrame(index, pts, g.src_w, g.src_h, g, inputs, decode_ms, pre_ms, picture=shown,
                                keepalive=keepalive, arrived=decoded.arrived)

    def prime(self) -> PreparedFrame | None:
        """Prepare the first frame now, so that a path that cannot handle the input fails at open."""
        if not self._primed:
            first = next(self._frames, None)
            if first is None:
                return None
            self._primed.append(first)
        return self._primed[0]

    def __iter__(self) -> Iterator[PreparedFrame]:
        yield from self._primed
        self._primed = []
        yield from self._frames

    def damage_report(self) -> DamageReport:
        """Complete once the stream is closed (FFmpeg's messages are gathered at close)."""
        return self.decoder.damage

    def frame_ready(self) -> bool:
        """Whether the next frame is decoded already (False: it must still come from the source)."""
        return bool(self._primed) or bool(self.decoder.frames_ready)

    def interrupt(self) -> None:
        """Stop reading, from any thread: a live source's wait for data or for a reconnection ends now."""
        self.decoder.interrupt()

    def close(self) -> None:
        self.decoder.close()
        self._frames.close()


class Front(Protocol):
    """The path-specific stages."""

    name: str
    input_kind: str  # "nv12" | "bgr"
    memory_type: str | None  # "GPU_SURFACE" for remote tensors
    devices: tuple[str, ...]  # where this path may infer, best first
    nireq_cap: int | None  # requests in flight when --nireq is not given (None: the device's optimum)

    def open(self, source: str | Path, req: OpenRequest) -> FrameStream: ...
    def handoff(self, model, stream: FrameStream): ...


class _HostFront:
    """Shared by the paths that hand OpenVINO host arrays."""

    memory_type: str | None = None
    devices: tuple[str, ...] = ("GPU", "CPU")
    nireq_cap: int | None = None

    def handoff(self, model, stream):
        from zerocopy.handoff.host import HostHandoff

        return HostHandoff(model.input_names)


class SoftwareFront(_HostFront):
    """FFmpeg decode on the CPU (on its own thread) → swscale from the planes → host NV12."""

    name = "software"
    input_kind = "nv12"

    def open(self, source, req: OpenRequest) -> FrameStream:
        from zerocopy.decode.pyav import PyAVDecoder
        from zerocopy.resize.planes import PlaneResizer

        # Planes are copied into the request at bind, so a few buffers suffice whatever nireq is.
        resizer = PlaneResizer(req.width, req.height, req.resize, ring=req.batch + 2)
        y_name, uv_name = req.input_names

        def prepare(frame):
            y, uv, g = resizer(frame)
            return {y_name: y, uv_name: uv}, g, None, frame if req.keep_pictures else None

        decoder = PyAVDecoder.on_cpu(source, req.decode_threads, realtime=req.realtime, policy=req.live)
        return _Stream(decoder, prepare)


class BaselineFront(_HostFront):
    """What the classic OpenVINO demo does: OpenCV decode to BGR, `cv2.resize`, BGR input."""

    name = "baseline"
    input_kind = "bgr"

    def open(self, source, req: OpenRequest) -> FrameStream:
        import av

        from zerocopy.decode.live import Paced
        from zerocopy.decode.opencv import OpenCVDecoder
        from zerocopy.resize.bgr import BGRResizer

        decoder = OpenCVDecoder(source)
        resizer = BGRResizer(decoder.cv2, req.width, req.height, req.resize)
        if req.realtime:
            decoder = Paced(decoder)
        (name,) = req.input_names

        def prepare(grabbed):
            bgr = grabbed.bgr()  # the full-size conversion: preprocessing, as in the classic demo
            tensor, g = resizer(bgr)
            shown = av.VideoFrame.from_ndarray(bgr, format="bgr24") if req.keep_pictures else None
            return {name: tensor}, g, None, shown

        return _Stream(decoder, prepare)


def _open_va(path_name: str, source, req: OpenRequest, download: bool):
    """VA-API decoder (on the run's shared VA device) + scale_vaapi graph, for zero-copy and copy."""
    from zerocopy.bridge import BridgeUnavailable, LayoutError, load_bridge
    from zerocopy.decode.vaapi import hw_owned_support, open_vaapi
    from zerocopy.resize.vaapi import VaapiScaler

    try:
        bridge = load_bridge()
    except BridgeUnavailable as e:
        raise PathUnavailable({path_name: f"native bridge: {e}"}) from None
    old_pyav = hw_owned_support()
    if old_pyav:
        raise PathUnavailable({path_name: old_pyav})
    va = req.va if req.va is not None else VASession()
    node = va.open_node(path_name)
    scaler = VaapiScaler(bridge, req.width, req.height, req.resize, download=download, picture=req.keep_pictures)
    decoder = open_vaapi(source, node, path_name, req.realtime, req.live)
    decoder.on_reopen = lambda d: va.share(bridge, d)  # a reconnected source decodes on the run's device too
    try:
        va.share(bridge, decoder)
    except (BridgeUnavailable, LayoutError) as e:
        decoder.close()
        raise PathUnavailable({path_name: f"cannot decode {source} on the run's VA device: {e}"}) from None
    return bridge, decoder, scaler, va


def _va_frame_errors() -> tuple[type[BaseException], ...]:
    """What the first frame through the VA stages may raise when the driver or bridge cannot cope."""
    import av

    from zerocopy.bridge import BridgeUnavailable, LayoutError

    return av.FFmpegError, BridgeUnavailable, LayoutError, RuntimeError, ValueError, OSError


def _prime_va(path_name: str, stream: _Stream, source) -> PreparedFrame:
    from zerocopy.decode.pyav import NothingDecodes
    from zerocopy.decode.vaapi import codec_label

    try:
        first = stream.prime()
    except NothingDecodes as e:
        label = codec_label(stream.decoder)
        stream.close()
        raise PathUnavailable({path_name: f"the GPU cannot decode {label} ({e})"}) from None
    except _va_frame_errors() as e:
        stream.close()
        raise PathUnavailable({path_name: f"VA-API pipeline failed on the first frame: {e}"}) from None
    if first is None:
        damage = stream.damage_report().summary()
        stream.close()
        raise PathUnavailable({path_name: f"VA-API decoded no frame of {source} ({damage})"})
    return first


def _va_prepare(bridge, va, scale: Callable[[Any], tuple[dict[str, Any], Geometry, Any, Any]]) -> Prepare:
    """`scale` behind the adoption of the run's VA device from its first frame."""

    def prepare(frame):
        if va.device is None:
            va.adopt(bridge, frame)
        return scale(frame)

    return prepare


class CopyFront(_HostFront):
    """VA-API decode and scale_vaapi on the GPU, then download the small NV12 frame."""

    name = "copy"
    input_kind = "nv12"
    nireq_cap = VA_NIREQ

    def open(self, source, req: OpenRequest) -> FrameStream:
        from zerocopy.resize.planes import PlaneResizer

        bridge, decoder, scaler, va = _open_va(self.name, source, req, download=True)
        # same size: an exact copy of the planes
        unpack = PlaneResizer(req.width, req.height, "stretch", ring=req.batch + 2)
        y_name, uv_name = req.input_names

        def scale(frame):
            small, shown, g = scaler(frame)
            y, uv, _ = unpack(small)
            return {y_name: y, uv_name: uv}, g, None, shown

        stream = _Stream(decoder, _va_prepare(bridge, va, scale))
        _prime_va(self.name, stream, source)
        return stream


class ZeroCopyFront:
    """VA-API decode, scale_vaapi, and the scaled surface handed to OpenVINO as remote tensors."""

    name = "zero-copy"
    input_kind = "nv12"
    memory_type = "GPU_SURFACE"
    devices = ("GPU",)
    nireq_cap = VA_NIREQ

    def open(self, source, req: OpenRequest) -> FrameStream:
        from zerocopy.handoff.surface import va_context

        bridge, decoder, scaler, va = _open_va(self.name, source, req, download=False)

        def scale(frame):
            surface, shown, g = scaler(frame)
            return {}, g, surface, shown

        stream = _Stream(decoder, _va_prepare(bridge, va, scale))
        first = _prime_va(self.name, stream, source)
        stream.bridge = bridge
        try:
            if va.context is None:  # one remote context per run: every input decodes on this display
                va.context = va_context(req.core, bridge.display_capsule(first.keepalive))
        except PathUnavailable:
            stream.close()
            raise
        stream.context = va.context
        return stream

    def handoff(self, model, stream):
        from zerocopy.handoff.surface import SurfaceHandoff

        return SurfaceHandoff(stream.context, model.input_names, stream.bridge)


@dataclass
class PathChoice:
    """The path that ran, and every reason each better one was refused (`refused`: joined, for reports)."""

    name: str
    reasons: dict[str, list[str]] = field(default_factory=dict)

    @property
    def refused(self) -> dict[str, str]:
        return {path: "; ".join(why) for path, why in self.reasons.items()}


def front_for(name: str) -> Front:
    if name == "software":
        return SoftwareFront()
    if name == "copy":
        return CopyFront()
    if name == "zero-copy":
        return ZeroCopyFront()
    if name == "baseline":
        from zerocopy.decode.opencv import import_cv2

        import_cv2()
        return BaselineFront()
    raise ValueError(f"unknown path {name!r}")
