"""What this machine can run: each GPU path's prerequisites, checked for real, with the reason when not."""

from __future__ import annotations

import glob
from dataclasses import dataclass

import av
import av.codec.hwaccel
import av.filter


@dataclass(frozen=True)
class Facts:
    hwdevices: tuple[str, ...]
    has_scale_vaapi: bool
    render_nodes: tuple[str, ...]
    ov_devices: tuple[str, ...]


def gather(ov_devices: list[str] | None = None) -> Facts:
    if ov_devices is None:
        import openvino as ov

        ov_devices = ov.Core().available_devices
    return Facts(
        hwdevices=tuple(av.codec.hwaccel.hwdevices_available()),
        has_scale_vaapi="scale_vaapi" in av.filter.filters_available,
        render_nodes=tuple(sorted(glob.glob("/dev/dri/renderD*"))),
        ov_devices=tuple(ov_devices),
    )


def va_reasons(facts: Facts) -> list[str]:
    """Why VA-API decode + scale_vaapi cannot run here (empty when they can)."""
    reasons = []
    if "vaapi" not in facts.hwdevices:
        reasons.append(f"PyAV was built without VA-API (its FFmpeg offers: {', '.join(facts.hwdevices) or 'none'})")
    elif not facts.has_scale_vaapi:
        reasons.append("PyAV's FFmpeg has no scale_vaapi filter")
    if not facts.render_nodes:
        reasons.append("no /dev/dri render node")
    return reasons


def gpu_reasons(facts: Facts) -> list[str]:
    if not any(d == "GPU" or d.startswith("GPU.") for d in facts.ov_devices):
        return [f"OpenVINO sees no GPU (devices: {', '.join(facts.ov_devices) or 'none'})"]
    return []


def refusals(facts: Facts) -> dict[str, str]:
    """Reason per GPU path that cannot run; a path absent from the result could run."""
    out = {}
    zero = va_reasons(facts) + gpu_reasons(facts)
    copy = va_reasons(facts)
    not_built = "the VA-API hand-off is not part of this release yet"
    out["zero-copy"] = "; ".join(zero or [not_built])
    out["copy"] = "; ".join(copy or [not_built])
    return out
