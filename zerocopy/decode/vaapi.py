"""VA-API decoding through PyAV's hwaccel, frames kept on the GPU, and the render node to use."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path

from zerocopy.decode.pyav import PyAVDecoder

_INTEL = ("i915", "xe")


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
    """`--va-device` if given, else the first Intel render node, else the first one."""
    if requested:
        return requested
    nodes = render_nodes()
    return nodes[0].path if nodes else None


def open_vaapi(path: str | Path, device: str, extra_hw_frames: int) -> PyAVDecoder:
    """A decoder whose frames stay on the GPU (no fallback to software decoding, no download)."""
    from av.codec.hwaccel import HWAccel

    hwaccel = HWAccel(device_type="vaapi", device=device, allow_software_fallback=False, is_hw_owned=True)
    return PyAVDecoder(path, hwaccel=hwaccel, extra_hw_frames=extra_hw_frames)
