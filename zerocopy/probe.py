"""What this machine can run: each GPU path's prerequisites, checked for real, with the reason when not.

These are the static checks. A path that passes them can still fail on the first frame (a driver
without surface sharing, a codec the GPU cannot decode); the pipeline reports that the same way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import av
import av.codec.hwaccel
import av.filter
import openvino as ov

from zerocopy.bridge import bridge_status
from zerocopy.decode.vaapi import hw_owned_support, render_nodes
from zerocopy.refusals import Code, Reason, code_of, summary

VA_FILTERS = ("scale_vaapi", "pad_vaapi", "hwdownload")


@dataclass(frozen=True, kw_only=True)
class Facts:
    hwdevices: tuple[str, ...]
    filters: dict[str, bool]
    render_nodes: tuple[str, ...]
    ov_devices: tuple[str, ...]
    bridge: str  # "ok", or why the native bridge cannot be used
    old_pyav: str | None = None  # why this PyAV cannot keep frames on the GPU (no HWAccel(is_hw_owned))

    @property
    def has_gpu(self) -> bool:
        return any(d == "GPU" or d.startswith("GPU.") for d in self.ov_devices)


def gather(ov_devices: list[str] | None = None, check_bridge: bool = True) -> Facts:
    if ov_devices is None:
        ov_devices = ov.Core().available_devices
    bridge = "not checked"
    if check_bridge:
        bridge = bridge_status()[1]
    return Facts(
        hwdevices=tuple(av.codec.hwaccel.hwdevices_available()),
        filters={f: f in av.filter.filters_available for f in VA_FILTERS},
        render_nodes=tuple(n.path for n in render_nodes()),
        ov_devices=tuple(ov_devices),
        bridge=bridge,
        old_pyav=hw_owned_support(),
    )


def va_reasons(facts: Facts, letterbox: bool, download: bool, va_device: str | None = None) -> list[str]:
    """Why VA-API decode + scale_vaapi (+ pad_vaapi, + hwdownload) cannot run here. A node named with
    `va_device` is tried even when /dev/dri lists none (it may live elsewhere)."""
    reasons: list[str] = []
    if facts.old_pyav:
        reasons.append(Reason(Code.PYAV_TOO_OLD, facts.old_pyav))
    if "vaapi" not in facts.hwdevices:
        others = (f"its FFmpeg has {', '.join(facts.hwdevices)} instead, none of which zerocopy uses"
                  if facts.hwdevices else "its FFmpeg has no hardware decoding")
        reasons.append(Reason(Code.NO_VAAPI, "PyAV was built without VA-API, the only hardware decoding zerocopy uses "
                              f"({others})"))
    else:
        need = ["scale_vaapi"] + (["pad_vaapi"] if letterbox else []) + (["hwdownload"] if download else [])
        missing = [f for f in need if not facts.filters.get(f)]
        if missing:
            reasons.append(Reason(Code.NO_VA_FILTER, f"PyAV's FFmpeg has no {', '.join(missing)} filter"))
    if va_device:
        if not os.path.exists(va_device):
            reasons.append(Reason(Code.NO_SUCH_RENDER_NODE, f"the render node {va_device} does not exist"))
    elif not facts.render_nodes:
        reasons.append(Reason(Code.NO_RENDER_NODE, "no /dev/dri render node"))
    if facts.bridge != "ok":
        reasons.append(Reason(Code.NO_BRIDGE, f"native bridge: {facts.bridge}"))
    return reasons


def refusals(facts: Facts, batch: int = 1, letterbox: bool = True, device: str = "auto",
             va_device: str | None = None) -> dict[str, list[str]]:
    """Reason per GPU path that cannot run; a path absent from the result may run."""
    zero = va_reasons(facts, letterbox, download=False, va_device=va_device)
    if not facts.has_gpu:
        zero.append(Reason(Code.NO_GPU, f"OpenVINO sees no GPU (devices: {', '.join(facts.ov_devices) or 'none'})"))
    if device.upper().startswith("CPU"):
        zero.append(Reason(Code.CPU_ASKED, "zero-copy infers on the GPU, and --device CPU was asked for"))
    if batch > 1:
        zero.append(Reason(Code.BATCH, "remote NV12 surfaces cannot be batched from Python "
                           "(InferRequest.set_tensors takes host tensors only); use --batch 1"))
    copy = va_reasons(facts, letterbox, download=True, va_device=va_device)
    return {path: why for path, why in (("zero-copy", zero), ("copy", copy)) if why}


def path_status(facts: Facts, batch: int = 1, letterbox: bool = True,
                va_error: str | None = None, va_device: str | None = None) -> dict[str, dict]:
    """Every path: `{"available": bool, "reasons": [...]}` (doctor's JSON). `va_error`: why the render
    node found (or `va_device`) cannot be opened (checked for real by doctor)."""
    refused = refusals(facts, batch, letterbox, va_device=va_device)
    if va_error:
        for path in ("zero-copy", "copy"):
            node_codes = (Code.NO_RENDER_NODE, Code.NO_SUCH_RENDER_NODE)
            refused[path] = [r for r in refused.get(path, []) if code_of(r) not in node_codes] + [va_error]
    out = {p: _status(refused.get(p, [])) for p in ("zero-copy", "copy")}
    out["software"] = _status([])
    try:
        import cv2  # noqa: F401

        out["baseline"] = _status([])
    except ImportError:
        why = Reason(Code.NO_OPENCV, "OpenCV is not installed (pip install 'zerocopy[baseline]')")
        out["baseline"] = _status([why])
    return out


def _status(reasons: list[str]) -> dict:
    """`available`, the full `reasons`, their stable `codes` and the few words `summary` gives them."""
    return {"available": not reasons, "reasons": list(reasons), "codes": [code_of(r).value for r in reasons],
            "summary": summary({"": reasons}) if reasons else ""}


def verdicts(facts: Facts, batch: int = 1, letterbox: bool = True, va_error: str | None = None) -> dict[str, str]:
    """Every path, 'available' or 'unavailable: reason; reason'."""
    return {p: "available" if st["available"] else "unavailable: " + "; ".join(st["reasons"])
            for p, st in path_status(facts, batch, letterbox, va_error).items()}
