"""`zerocopy doctor`: what this machine offers each path, checked for real, and a verdict per path.

The JSON form is stable: keys are only ever added. Every probe catches its own failure and reports
it as data; doctor itself always exits 0.
"""

from __future__ import annotations

import io
import platform
import sys
from typing import Any

SCHEMA = 2  # 2: each path is {"available": bool, "reasons": [...]} (was "available"/"unavailable: …")


def _pyav() -> dict[str, Any]:
    import av
    import av.codec.hwaccel
    import av.filter

    from zerocopy.probe import VA_FILTERS

    return {
        "version": av.__version__,
        "ffmpeg": {k: ".".join(map(str, v)) for k, v in av.library_versions.items()},
        "hwdevices": list(av.codec.hwaccel.hwdevices_available()),
        "va_filters": {f: f in av.filter.filters_available for f in VA_FILTERS},
    }


def _tiny_h264() -> io.BytesIO:
    import av
    import numpy as np

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
        import av
        from av.codec.hwaccel import HWAccel

        hw = HWAccel(device_type="vaapi", device=node, allow_software_fallback=False, is_hw_owned=True)
        with av.open(_tiny_h264(), hwaccel=hw) as c:
            frame = next(c.decode(video=0))
        ok = frame.format.name == "vaapi"
        return {"ok": ok, "detail": f"decoded a test frame as {frame.format.name}"}
    except Exception as e:
        from zerocopy.decode.ffmpeg_log import ffmpeg_log_line

        detail = ffmpeg_log_line(e) or (str(e).splitlines()[0] if str(e) else "")
        return {"ok": False, "detail": f"{type(e).__name__}: {detail}"}


def _openvino() -> dict[str, Any]:
    import openvino as ov

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
    from zerocopy.bridge.loader import BridgeUnavailable, find_headers
    from zerocopy.bridge.selftest import run_selftest

    out: dict[str, Any] = {}
    try:
        h = find_headers()
        out["headers"] = {"origin": h.origin, "libavutil": ".".join(map(str, h.avutil)),
                          "libavfilter": ".".join(map(str, h.avfilter)), "include_dirs": list(h.include_dirs)}
    except BridgeUnavailable as e:
        out["headers"] = {"error": str(e)}
    from zerocopy.bridge import bridge_status

    bridge, status = bridge_status()
    out["status"] = status
    if bridge is not None:
        out["selftest"] = [c.__dict__ for c in run_selftest(bridge.ffi, bridge.lib)]
    return out


def collect() -> dict[str, Any]:
    from zerocopy import __version__
    from zerocopy.decode.vaapi import render_nodes
    from zerocopy.probe import gather, path_status

    pyav = _pyav()
    nodes = [{"path": n.path, "driver": n.driver, "vendor": n.vendor, "intel": n.is_intel,
              "va_display": _va_display(n.path, pyav)} for n in render_nodes()]
    ov_info = _openvino()
    facts = gather(ov_info["devices"], check_bridge=True)
    va_error = None
    if "vaapi" in pyav["hwdevices"] and nodes:
        from zerocopy.decode.vaapi import check_device
        from zerocopy.errors import PathUnavailable

        try:
            check_device(nodes[0]["path"])
        except PathUnavailable as e:
            va_error = e.reasons["va"][0]
    return {
        "schema": SCHEMA,
        "zerocopy": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "pyav": pyav,
        "render_nodes": nodes,
        "openvino": ov_info,
        "opencl": _opencl(),
        "native_bridge": _bridge(),
        "paths": path_status(facts, va_error=va_error),
    }


def render(info: dict[str, Any]) -> str:
    lines = [f"zerocopy {info['zerocopy']} on Python {info['python']} ({info['platform']})", ""]
    p = info["pyav"]
    lines.append(f"PyAV {p['version']}, FFmpeg libavutil {p['ffmpeg']['libavutil']}, "
                 f"libavcodec {p['ffmpeg']['libavcodec']}")
    lines.append(f"  hardware device types: {', '.join(p['hwdevices']) or 'none'}")
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
    return "\n".join(lines)
