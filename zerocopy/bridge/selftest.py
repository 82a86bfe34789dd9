"""The bridge checked against real FFmpeg objects, without hardware (and without importing PyAV).

A VA-API device context is allocated (never initialised) with a known display; a frame carries a
known surface id; a real buffer source must take a reference on the frame's hw_frames_ctx.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Check:
    name: str
    ok: bool
    detail: str = ""


DISPLAY = 0x5EED0D15
SURFACE = 0x2A17


def run_selftest(ffi, lib) -> list[Check]:
    checks: list[Check] = []
    vaapi = lib.zcva_pix_fmt_vaapi()
    header, linked = lib.zcva_header_avutil_version(), lib.zcva_linked_avutil_version()
    checks.append(Check("headers match the loaded libavutil", header == linked, f"{header:#x} vs {linked:#x}"))
    frame = lib.zcva_selftest_frame(ffi.cast("void *", DISPLAY), SURFACE, 64, 48)
    if frame == ffi.NULL:
        checks.append(Check("allocate a VA-API device and frames context", False, "FFmpeg has no VA-API support"))
        return checks
    try:
        surface, display = ffi.new("uint32_t *"), ffi.new("void **")
        rc = lib.zcva_surface_id(frame, surface)
        checks.append(Check("surface id from frame->data[3]", rc == 0 and surface[0] == SURFACE,
                            f"rc {rc}, got {surface[0]:#x}"))
        rc = lib.zcva_display(frame, display)
        got = int(ffi.cast("uintptr_t", display[0]))
        checks.append(Check("display from hw_frames_ctx->device_ctx->hwctx", rc == 0 and got == DISPLAY,
                            f"rc {rc}, got {got:#x}"))
        checks.append(Check("frame layout check accepts the right frame",
                            bool(lib.zcva_frame_matches(frame, 64, 48, vaapi))))
        checks.append(Check("frame layout check rejects a wrong size",
                            not lib.zcva_frame_matches(frame, 64, 50, vaapi)))
        src, sink = ffi.new("AVFilterContext **"), ffi.new("AVFilterContext **")
        graph = lib.zcva_selftest_graph(64, 48, src, sink)
        if graph == ffi.NULL:
            checks.append(Check("build a buffer → buffersink graph", False, "could not create the filters"))
            return checks
        before = lib.zcva_selftest_frames_refcount(frame)
        rc = lib.zcva_attach_hw_frames(src[0], frame)
        during = lib.zcva_selftest_frames_refcount(frame)
        configured = lib.zcva_selftest_graph_configure(graph)
        negotiated = lib.zcva_selftest_sink_format(sink[0]) if configured == 0 else -1
        shares = configured == 0 and bool(lib.zcva_selftest_sink_shares_frames(sink[0], frame))
        lib.zcva_selftest_graph_free(graph)
        after = lib.zcva_selftest_frames_refcount(frame)
        checks.append(Check("buffer source takes a reference on hw_frames_ctx",
                            rc == 0 and during == before + 1 and after == before,
                            f"rc {rc}, refs {before} → {during} → {after}"))
        checks.append(Check("graph configures as VAAPI with the frame's hw_frames_ctx",
                            configured == 0 and negotiated == vaapi and shares,
                            f"configure {configured}, format {negotiated} (vaapi {vaapi}), shared {shares}"))
    finally:
        lib.zcva_selftest_frame_free(frame)
    return checks
