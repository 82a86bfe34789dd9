"""`zerocopy doctor`: what this machine offers each path, checked for real, and a verdict per path.

The JSON form is stable: keys are only ever added. Every probe catches its own failure and reports
it as data; doctor itself always exits 0.
"""

from __future__ import annotations

import io
import os
import platform
import sys
from typing import Any

import av
import av.codec.hwaccel
import av.filter
import numpy as np
import openvino as ov
from av.codec.hwaccel import HWAccel

from zerocopy import __version__
from zerocopy.bridge import bridge_status
from zerocopy.bridge.loader import BridgeUnavailable, find_headers, pyav_pkgconfig_dir
from zerocopy.bridge.selftest import run_selftest
from zerocopy.decode.ffmpeg_log import ffmpeg_log_line
from zerocopy.decode.vaapi import RenderNode, check_device, render_nodes
from zerocopy.errors import PathUnavailable
from zerocopy.probe import VA_FILTERS, gather, path_status
from zerocopy.refusals import Code

SCHEMA = 2  # 2: each path is {"available": bool, "reasons": [...]} (was "available"/"unavailable: …")

# What each hardware device type an FFmpeg can be built with is, for someone reading doctor's output: being
# built in says what FFmpeg could drive, not what this machine has. zerocopy's GPU paths use VA-API alone.
HW_TYPES = {
    "vaapi": "VA-API, what zerocopy's GPU paths decode and scale with",
    "qsv": "Intel Quick Sync through oneVPL; zerocopy does not use it (on Intel it uses VA-API)",
    "cuda": "NVIDIA; not used by zerocopy",
    "drm": "DRM frame sharing; not used on its own",
    "amf": "AMD; not used by zerocopy",
    "vulkan": "Vulkan; not used by zerocopy",
    "vdpau": "older NVIDIA/AMD video; not used by zerocopy",
    "opencl": "OpenCL frames; not used by zerocopy",
}

# The one command that changes a refusal, by its code, most fundamental first (the first one found is shown).
SETUP_GPU = "make setup-gpu   (PyAV with VA-API, and the native bridge; docs/hardware.md)"
OPENCL = "sudo apt-get install intel-opencl-icd   (Intel's OpenCL runtime, which OpenVINO's GPU plugin needs)"
RENDER_GROUP = 'sudo usermod -aG render "$USER"   (then log in again; the render node needs it)'
VA_DRIVER = ("sudo apt-get install intel-media-va-driver-non-free   (Intel's VA-API driver; `vainfo` checks it; "
             "Debian: non-free, Ubuntu: multiverse)")
NO_NODE = ("sudo modprobe i915   (or xe: the Intel GPU's kernel driver makes /dev/dri/renderD128; "
           "in a container, pass it in: --device /dev/dri)")


def _pyav() -> dict[str, Any]:
    return {
        "version": av.__version__,
        "ffmpeg": {k: ".".join(map(str, v)) for k, v in av.library_versions.items()},
        "hwdevices": list(av.codec.hwaccel.hwdevices_available()),
        "va_filters": {f: f in av.filter.filters_available for f in VA_FILTERS},
    }


def _tiny_h264() -> io.BytesIO:
    buf = io.BytesIO()
    with av.open(buf, "w", format="mp4") as out:
        s = out.add_stream("libx264", rate=25)
        s.width, s.height, s.pix_fmt = 64, 64, "yuv420p"
        for i in range(2):
            frame = av.VideoFrame.from_ndarray(np.full((64, 64, 3), 40 * i, np.uint8), format="rgb24")
            frame.pts = i
            out.mux(s.encode(frame))
        out.mux(s.encode(None))
    buf.seek(0)
    return buf


def _va_display(node: str, pyav: dict) -> dict[str, Any]:
    """Decode a tiny H.264 clip on the node with frames kept on the GPU: the whole VA stack must work."""
    if "vaapi" not in pyav["hwdevices"]:
        return {"ok": False, "detail": "not tried: PyAV was built without VA-API"}
    try:
        hw = HWAccel(device_type="vaapi", device=node, allow_software_fallback=False, is_hw_owned=True)
        with av.open(_tiny_h264(), hwaccel=hw) as c:
            frame = next(c.decode(video=0))
        ok = frame.format.name == "vaapi"
        return {"ok": ok, "detail": f"decoded a test frame as {frame.format.name}"}
    except Exception as e:
        detail = ffmpeg_log_line(e) or (str(e).splitlines()[0] if str(e) else "")
        return {"ok": False, "detail": f"{type(e).__name__}: {detail}"}


def _openvino() -> dict[str, Any]:
    core = ov.Core()
    devices = core.available_devices
    out: dict[str, Any] = {"version": ov.get_version(), "devices": devices, "device_names": {}}
    for d in devices:
        try:
            out["device_names"][d] = core.get_property(d, "FULL_DEVICE_NAME")
        except RuntimeError as e:
            out["device_names"][d] = f"unknown ({str(e).splitlines()[0]})"
    out["gpu"] = next((out["device_names"][d] for d in devices if d.startswith("GPU")), None)
    return out


def _opencl() -> dict[str, Any]:
    try:
        import pyopencl as cl
    except ImportError:
        return {"available": False, "detail": "pyopencl is not installed (pip install 'zerocopy[gpu]')",
                "platforms": []}
    try:
        platforms = cl.get_platforms()
    except Exception as e:
        return {"available": False, "detail": f"no OpenCL platform: {e} (install the GPU's OpenCL runtime, "
                "e.g. intel-opencl-icd)", "platforms": []}
    listed = []
    for p in platforms:
        devices = []
        for d in p.get_devices():
            ext = d.extensions.split()
            devices.append({"name": d.name, "type": cl.device_type.to_string(d.type), "vendor": d.vendor,
                            "va_api_media_sharing": "cl_intel_va_api_media_sharing" in ext})
        listed.append({"name": p.name, "version": p.version, "devices": devices})
    return {"available": True, "detail": f"{len(listed)} platform(s)", "platforms": listed}


def _bridge() -> dict[str, Any]:
    out: dict[str, Any] = {}
    try:
        h = find_headers(pyav_pkgconfig_dir())
        out["headers"] = {"origin": h.origin, "libavutil": ".".join(map(str, h.avutil)),
                          "libavfilter": ".".join(map(str, h.avfilter)), "include_dirs": list(h.include_dirs)}
    except BridgeUnavailable as e:
        out["headers"] = {"error": str(e)}
    bridge, status = bridge_status()
    out["status"] = status
    if bridge is not None:
        out["selftest"] = [c.__dict__ for c in run_selftest(bridge.ffi, bridge.lib)]
    return out


def collect(va_device: str | None = None) -> dict[str, Any]:
    """Everything doctor reports; `va_device`: a render node to check besides /dev/dri/renderD* (and first)."""
    pyav = _pyav()
    found = render_nodes()
    if va_device and va_device not in [n.path for n in found]:
        found.insert(0, RenderNode(va_device, "unknown", "unknown"))
    nodes = [{"path": n.path, "driver": n.driver, "vendor": n.vendor, "intel": n.is_intel,
              "access": os.access(n.path, os.R_OK | os.W_OK), "va_display": _va_display(n.path, pyav)}
             for n in found]
    ov_info = _openvino()
    facts = gather(ov_info["devices"], check_bridge=True)
    va_error = None
    if "vaapi" in pyav["hwdevices"] and nodes:
        try:
            check_device(nodes[0]["path"])
        except PathUnavailable as e:
            va_error = e.reasons["va"][0]
    paths = path_status(facts, va_error=va_error, va_device=va_device)
    for status in paths.values():
        status["fix"] = fix(status, nodes)
    info = {
        "schema": SCHEMA,
        "zerocopy": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "pyav": pyav,
        "render_nodes": nodes,
        "openvino": ov_info,
        "opencl": _opencl(),
        "native_bridge": _bridge(),
        "paths": paths,
    }
    info["best"] = best(info)
    return info


def fix(status: dict[str, Any], nodes: list[dict[str, Any]]) -> str | None:
    """The one command that would change a refused path's verdict (the first of its reasons that has one)."""
    codes = [Code(c) for c in status["codes"]]
    if not codes:
        return None
    if {Code.PYAV_TOO_OLD, Code.NO_VAAPI, Code.NO_VA_FILTER} & set(codes):
        return SETUP_GPU
    if Code.NO_RENDER_NODE in codes:
        return NO_NODE
    if Code.NO_SUCH_RENDER_NODE in codes:
        return "ls /dev/dri   (and name a render node that exists with --va-device)"
    if Code.VA_DEVICE in codes:
        return RENDER_GROUP if any(not n["access"] for n in nodes) else VA_DRIVER
    if Code.NO_BRIDGE in codes:
        return SETUP_GPU
    if Code.NO_GPU in codes:
        return RENDER_GROUP if any(n["intel"] and not n["access"] for n in nodes) else OPENCL
    if Code.NO_OPENCV in codes:
        return "make setup   (installs OpenCV, the baseline's decoder, into the venv)"
    return None


def best(info: dict[str, Any]) -> dict[str, Any]:
    """The best way this machine runs, in words, and how to get the next better one (the middle path:
    decoding on the CPU, inferring on the GPU, when the VA paths are refused but OpenVINO has a GPU)."""
    paths, gpu = info["paths"], info["openvino"]["gpu"]
    intel = [n for n in info["render_nodes"] if n["intel"]]
    if paths["zero-copy"]["available"]:
        return {"path": "zero-copy", "device": "GPU", "words": "decoding, scaling and inferring on the GPU, "
                "no copies (zero-copy)", "next": None}
    if paths["copy"]["available"]:
        return {"path": "copy", "device": "GPU" if gpu else "CPU",
                "words": "decoding and scaling on the GPU, inferring on the " + ("GPU" if gpu else "CPU") + " (copy)",
                "next": paths["zero-copy"]["fix"]}
    if gpu:
        return {"path": "software", "device": "GPU",
                "words": f"decoding on the CPU, inferring on the GPU ({gpu}): the software path with --device GPU, "
                "which --device auto picks", "next": paths["copy"]["fix"]}
    if intel:  # an Intel GPU OpenVINO cannot use yet: the user may not open it, or its OpenCL runtime is missing
        return {"path": "software", "device": "CPU",
                "words": "decoding and inferring on the CPU; inferring on this Intel GPU is one step away",
                "next": RENDER_GROUP if any(not n["access"] for n in intel) else OPENCL}
    return {"path": "software", "device": "CPU",
            "words": "decoding and inferring on the CPU (OpenVINO sees no GPU and there is no Intel render node)",
            "next": None}


def hardware_types_line(hwdevices: list[str]) -> str:
    """PyAV's hardware device types, said so that `qsv` is not read as "Quick Sync is available here"."""
    if not hwdevices:
        return "  hardware types built into its FFmpeg: none (zerocopy's GPU paths need vaapi, VA-API)"
    listed = ", ".join(hwdevices)
    head = f"  hardware types built into its FFmpeg: {listed} (what it could drive, not what this machine has)"
    if "vaapi" in hwdevices:
        return head + "; zerocopy's GPU paths use vaapi, which is there"
    others = [f"{t}: {HW_TYPES[t]}" for t in hwdevices if t in HW_TYPES]
    return (head + "; zerocopy's GPU paths use VA-API (vaapi) only, which this build lacks"
            + ("\n    " + "\n    ".join(others) if others else ""))


def render(info: dict[str, Any]) -> str:
    lines = [f"zerocopy {info['zerocopy']} on Python {info['python']} ({info['platform']})", ""]
    p = info["pyav"]
    lines.append(f"PyAV {p['version']}, FFmpeg libavutil {p['ffmpeg']['libavutil']}, "
                 f"libavcodec {p['ffmpeg']['libavcodec']}")
    lines.append(hardware_types_line(p["hwdevices"]))
    lines.append("  VA filters: " + ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in p["va_filters"].items()))
    lines.append("render nodes: " + ("none (/dev/dri/renderD*)" if not info["render_nodes"] else ""))
    for n in info["render_nodes"]:
        va = n["va_display"]
        lines.append(f"  {n['path']}: driver {n['driver']}, vendor {n['vendor']}; VA display "
                     f"{'initialises' if va['ok'] else 'fails'} ({va['detail']})")
    o = info["openvino"]
    lines.append(f"OpenVINO {o['version']}: devices {', '.join(o['devices'])}; GPU: {o['gpu'] or 'none'}")
    c = info["opencl"]
    lines.append(f"OpenCL: {c['detail']}")
    for plat in c["platforms"]:
        for d in plat["devices"]:
            lines.append(f"  {plat['name']} / {d['name']} ({d['type']}): cl_intel_va_api_media_sharing "
                         f"{'yes' if d['va_api_media_sharing'] else 'no'}")
    b = info["native_bridge"]
    h = b["headers"]
    lines.append("native bridge: " + b["status"])
    lines.append("  headers: " + (h["error"] if "error" in h else
                                  f"libavutil {h['libavutil']}, libavfilter {h['libavfilter']} via {h['origin']}"))
    for check in b.get("selftest", []):
        lines.append(f"  self-test: {check['name']}: {'ok' if check['ok'] else 'FAILED ' + check['detail']}")
    lines.append("")
    lines.append("paths:")
    for path, status in info["paths"].items():
        verdict = "available" if status["available"] else (f"unavailable ({status['summary']}): "
                                                            + "; ".join(status["reasons"]))
        lines.append(f"  {path:<10} {verdict}")
        if status.get("fix"):
            lines.append(f"  {'':<10} to change it: {status['fix']}")
    b = info.get("best")
    if b:
        lines.append("")
        lines.append(f"best here: {b['path']}, {b['words']}")
        if b["next"]:
            lines.append(f"  next: {b['next']}")
    return "\n".join(lines)
