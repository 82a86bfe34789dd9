"""VA-API decoding through PyAV's hwaccel, frames kept on the GPU; the render node and the VA device
a run decodes on.

Failures here are the machine's, not the input's: a render node that cannot be opened, a driver
that refuses, a codec the GPU cannot decode. Each becomes a `PathUnavailable` naming the node and
FFmpeg's own reason, so `auto` moves on to the next path; only an input that cannot be opened
without VA-API either is an `InputError`.
"""

from __future__ import annotations

import glob
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import av
import av.codec.hwaccel
from av.codec import Codec

from zerocopy.decode.damage import DamageReport
from zerocopy.decode.ffmpeg_log import captured_ffmpeg_log, describe_av_error, ffmpeg_log_line
from zerocopy.decode.live import LivePolicy
from zerocopy.decode.opening import open_input
from zerocopy.decode.pyav import PyAVDecoder
from zerocopy.errors import InputError, PathUnavailable
from zerocopy.refusals import Code, Reason
from zerocopy.sources import is_live

_INTEL = ("i915", "xe")
# The decoder's surface pool is fixed (DPB + 1 + extra_hw_frames). Its frames are held only while
# scale_vaapi reads them: the surfaces that requests in flight hold come from the filter's output
# pool, which grows on demand with VA-API 1.x (FFmpeg's vaapi_vpp sets initial_pool_size 0). So the
# decoder needs room for the frame in our hands and the one in the graph's buffer source only.
DECODER_EXTRA_HW_FRAMES = 2
# With allow_software_fallback=False a codec (or profile) the GPU cannot decode fails on every
# packet and PyAV's decoder reports no frame; give up after this many failures in a row without
# any frame instead of reading the whole input (forever, on a live stream).
MAX_FAILURES_WITHOUT_FRAME = 24
_PROBE_CODECS = ("h264", "hevc", "vp9", "av1", "mpeg2video")


@dataclass(frozen=True)
class RenderNode:
    path: str
    driver: str
    vendor: str

    @property
    def is_intel(self) -> bool:
        return self.driver in _INTEL or self.vendor == "0x8086"


def render_nodes() -> list[RenderNode]:
    """/dev/dri/renderD* with their kernel driver, Intel first."""
    nodes = []
    for path in sorted(glob.glob("/dev/dri/renderD*")):
        sysfs = Path("/sys/class/drm") / os.path.basename(path) / "device"
        try:
            driver = os.path.basename(os.readlink(sysfs / "driver"))
        except OSError:
            driver = "unknown"
        try:
            vendor = (sysfs / "vendor").read_text().strip()
        except OSError:
            vendor = "unknown"
        nodes.append(RenderNode(path, driver, vendor))
    return sorted(nodes, key=lambda n: not n.is_intel)


def pick_render_node(requested: str | None) -> str | None:
    """`--va-device` if given (tried even when /dev/dri lists nothing), else the first Intel render
    node, else the first one."""
    if requested:
        return requested
    nodes = render_nodes()
    return nodes[0].path if nodes else None


def hw_owned_support() -> str | None:
    """None when PyAV's `HWAccel` takes `is_hw_owned` (PyAV ≥ 17), else why the VA paths cannot run."""
    try:
        av.codec.hwaccel.HWAccel(device_type="vaapi", is_hw_owned=True)  # stores settings only: opens no device
    except TypeError:
        return (f"PyAV {av.__version__} lacks HWAccel(is_hw_owned): frames would be copied to system memory; "
                "needs PyAV ≥ 17 on FFmpeg ≥ 8")
    return None


def _hwaccel(node: str):
    return av.codec.hwaccel.HWAccel(device_type="vaapi", device=node, allow_software_fallback=False, is_hw_owned=True)


def _last_message(log: DamageReport) -> str:
    """FFmpeg's last logged error (e.g. "No VA display found for device …"), without the logger name."""
    if not log.decoder_messages:
        return ""
    return next(reversed(log.decoder_messages)).split(": ", 1)[-1].strip().rstrip(".")


def check_device(node: str) -> None:
    """Open the VA device on `node` alone (vaInitialize and all), to tell a device failure from an input one."""
    if not os.path.exists(node):
        raise PathUnavailable({"va": Reason(Code.NO_SUCH_RENDER_NODE, f"the render node {node} does not exist")})
    codecs = []
    for name in _PROBE_CODECS:
        try:
            codecs.append(Codec(name, "r"))
        except (av.FFmpegError, ValueError):
            continue
    codec = next((c for c in codecs if any(cfg.device_type.name == "vaapi" for cfg in c.hardware_configs)), None)
    if codec is None:
        raise PathUnavailable({"va": Reason(Code.NO_VAAPI, "PyAV's FFmpeg has no VA-API decoder")})
    log = DamageReport()
    try:
        with captured_ffmpeg_log(log):
            _hwaccel(node).create(codec)  # the device lives as long as the returned object: dropped at once
    except (av.FFmpegError, OSError, RuntimeError, NotImplementedError) as e:
        detail = ffmpeg_log_line(e) or _last_message(log) or describe_av_error(e)
        raise PathUnavailable({"va": Reason(Code.VA_DEVICE, f"cannot open the VA device {node}: {detail}")}) from None


class VASession:
    """The render node and VA device a run decodes on, shared by all its inputs.

    VASurfaceIDs belong to one VADisplay, and the OpenVINO remote context (so the compiled model)
    is bound to one display. The first input's first frame gives the device; every later input's
    decoder is switched to it before it decodes, so the model is compiled once per run and no
    display is terminated under a live compiled model. `close()` after the model is released.
    """

    def __init__(self, requested: str | None = None):
        self.requested = requested
        self.node: str | None = None
        self.device: Any = None  # the bridge's reference to the shared AVHWDeviceContext
        self.context: Any = None  # the OpenVINO VAContext over its display (zero-copy only)
        self.lock = threading.Lock()  # inputs opened at once join the device one after the other
        self._checked = False

    def open_node(self, path_name: str) -> str:
        """The node to decode on, its device checked once; refusals are `path_name`'s."""
        if self.node is None:
            node = pick_render_node(self.requested)
            if node is None:
                raise PathUnavailable({path_name: Reason(Code.NO_RENDER_NODE,
                                                         "no /dev/dri render node (name one with --va-device)")})
            self.node = node
        if not self._checked:
            try:
                check_device(self.node)
            except PathUnavailable as e:
                raise PathUnavailable({path_name: e.reasons["va"]}) from None
            self._checked = True
        return self.node

    def adopt(self, bridge, frame) -> None:
        """Keep the device behind the run's first VA frame."""
        if self.device is None:
            self.device = bridge.device_of(frame)

    def share(self, bridge, decoder: PyAVDecoder) -> None:
        """Make a freshly opened decoder decode on the run's device (before its first packet)."""
        if self.device is not None:
            bridge.use_device(decoder.stream.codec_context, self.device)

    def close(self) -> None:
        self.context = None
        device, self.device = self.device, None
        if device is not None:
            device.close()


def codec_label(decoder: PyAVDecoder) -> str:
    cc = decoder.stream.codec_context
    profile = getattr(cc, "profile", None)
    return f"{cc.name}{f' ({profile})' if profile else ''}"


def open_vaapi(path: str | Path, node: str, path_name: str, realtime: bool = False,
               policy: LivePolicy | None = None, on_reopen: Callable[[PyAVDecoder], None] | None = None,
               stop: threading.Event | None = None) -> PyAVDecoder:
    """A decoder whose frames stay on the GPU (no fallback to software decoding, no download).

    The device on `node` was checked already; a failure here is either the input's (it cannot be
    opened at all: `InputError`) or the GPU's (`PathUnavailable`).
    """
    try:
        return PyAVDecoder(path, hwaccel=_hwaccel(node), extra_hw_frames=DECODER_EXTRA_HW_FRAMES,
                           give_up_without_frame=MAX_FAILURES_WITHOUT_FRAME, realtime=realtime, policy=policy,
                           on_reopen=on_reopen, stop=stop)
    except InputError as e:
        va_error = str(e)
    except RuntimeError as e:  # PyAV: "Hardware accelerated decode requested but no stream is compatible"
        va_error = str(e)
    policy = policy or LivePolicy()  # a live source is bounded in time here too
    timeout = {"timeout": (policy.open_timeout, policy.read_timeout)} if is_live(path) else {}
    plain = open_input(path, **timeout)  # raises InputError when the input itself is the problem
    try:
        codec = plain.streams.video[0].codec_context.name
    finally:
        plain.close()
    raise PathUnavailable({path_name: Reason(Code.CODEC, f"VA-API cannot decode {codec} from {path} on {node}: "
                                                        f"{va_error}")})
