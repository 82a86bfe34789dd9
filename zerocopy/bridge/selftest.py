"""The bridge checked against real FFmpeg objects, without hardware (and without importing PyAV).

A VA-API device context is allocated (never initialised) with a known display; a frame carries a
known surface id; a real buffer source must take a reference on the frame's hw_frames_ctx. A device
reference taken from the frame must be its device, counted; a real (rawvideo) decoder context, not
opened, must move to it, and an open one, or one without a device, must be refused. A region pushed
into a buffer source must reach the sink as a new reference to the same picture (or surface) with
its crop fields set, the frame it came from untouched; a region outside the picture is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Check:
    name: str
    ok: bool
    detail: str = ""


DISPLAY = 0x5EED0D15
OTHER_DISPLAY = 0x0DD0D15
SURFACE = 0x2A17


def run_selftest(ffi, lib) -> list[Check]:
    checks: list[Check] = []
    vaapi = lib.zcva_pix_fmt_vaapi()
    versions = {n: (getattr(lib, f"zcva_header_{n}_version")(), getattr(lib, f"zcva_linked_{n}_version")())
                for n in ("avutil", "avfilter", "avcodec")}
    checks.append(Check("headers match the loaded libavutil, libavfilter and libavcodec",
                        all(h == linked for h, linked in versions.values()),
                        ", ".join(f"{n} {h:#x} vs {linked:#x}" for n, (h, linked) in versions.items())))
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
        checks.extend(_device_checks(ffi, lib, frame))
        checks.extend(region_checks(ffi, lib, frame))
    finally:
        lib.zcva_selftest_frame_free(frame)
    return checks


@dataclass(kw_only=True)
class _DeviceRef:
    """A device reference taken from a frame (`shared`, NULL if refused), its check, and the frame
    device's reference count before and after it was taken."""

    check: Check
    frame_device: object
    shared: object
    before: int
    during: int


@dataclass(kw_only=True)
class _Devices:
    """What decoder contexts are moved between: the `shared` device taken from the frame, a VA-API
    device of the decoder's `own` (per input) and a `drm` one; `codec()` makes a context on one of
    them, freed at the end."""

    ffi: Any
    lib: Any
    shared: object
    own: object
    drm: object
    codecs: list = field(default_factory=list)

    def codec(self, device):
        ctx = self.lib.zcva_selftest_codec(device, 64, 48)
        if ctx != self.ffi.NULL:
            self.codecs.append(ctx)
        return ctx


def _device_checks(ffi, lib, frame) -> list[Check]:
    """zcva_device_ref / zcva_codec_use_device on real FFmpeg objects, counted by reference counts."""
    ref = _device_ref(ffi, lib, frame)
    checks: list[Check] = [ref.check]
    if ref.shared == ffi.NULL:
        return checks
    own = lib.zcva_selftest_device(1, ffi.cast("void *", OTHER_DISPLAY))  # the decoder's per-input device
    drm = lib.zcva_selftest_device(0, ffi.NULL)
    devices = _Devices(ffi=ffi, lib=lib, shared=ref.shared, own=own, drm=drm)
    try:
        checks.extend(_use_device_checks(devices, frame))
    finally:
        for ctx in devices.codecs:
            lib.zcva_selftest_codec_free(ctx)
        freed = lib.zcva_selftest_refcount(ref.shared)
        lib.zcva_device_unref(ref.shared)
        after = lib.zcva_selftest_refcount(ref.frame_device)
        checks.append(Check("freeing the decoders and the reference restores the frame device's count",
                            after == ref.before, f"refs {ref.before} → {ref.during} → {freed} → {after}"))
        for device in (own, drm):
            if device != ffi.NULL:
                lib.zcva_device_unref(device)
    return checks


def _device_ref(ffi, lib, frame) -> _DeviceRef:
    """zcva_device_ref: a reference to the frame's device, one more reference on it."""
    frame_device = lib.zcva_selftest_frame_device(frame)
    out, display = ffi.new("AVBufferRef **"), ffi.new("void **")
    before = lib.zcva_selftest_refcount(frame_device)
    rc = lib.zcva_device_ref(frame, out)
    shared = out[0] if rc == 0 else ffi.NULL
    during = lib.zcva_selftest_refcount(frame_device)
    drc = lib.zcva_device_display(shared, display) if rc == 0 else rc
    got = int(ffi.cast("uintptr_t", display[0]))
    check = Check("device reference from a frame is its device, one more reference",
                  rc == 0 and drc == 0 and got == DISPLAY and during == before + 1,
                  f"rc {rc}, display {got:#x}, refs {before} → {during}")
    return _DeviceRef(check=check, frame_device=frame_device, shared=shared, before=before, during=during)


def _use_device_checks(devices: _Devices, frame) -> list[Check]:
    """zcva_codec_matches, and zcva_codec_use_device moving a decoder context to the shared device."""
    ffi, lib, own, shared = devices.ffi, devices.lib, devices.own, devices.shared
    ctx = devices.codec(own)
    if own == ffi.NULL or ctx == ffi.NULL:
        return [Check("a decoder context on a VA-API device", False, "could not allocate them")]
    checks: list[Check] = []
    codec_id = lib.zcva_selftest_codec_id(ctx)
    checks.append(Check("codec layout check accepts the right context and rejects a wrong one",
                        bool(lib.zcva_codec_matches(ctx, codec_id, 64, 48))
                        and bool(lib.zcva_codec_matches(ctx, -1, -1, -1))
                        and not lib.zcva_codec_matches(ctx, codec_id, 64, 50)
                        and not lib.zcva_codec_matches(ctx, codec_id + 1, 64, 48)
                        and not lib.zcva_codec_matches(ffi.cast("AVCodecContext *", frame), -1, -1, -1),
                        f"codec id {codec_id}"))
    own0, shared0 = lib.zcva_selftest_refcount(own), lib.zcva_selftest_refcount(shared)
    rc = lib.zcva_codec_use_device(ctx, shared)
    own1, shared1 = lib.zcva_selftest_refcount(own), lib.zcva_selftest_refcount(shared)
    moved = bool(lib.zcva_selftest_codec_device_is(ctx, shared))
    again = lib.zcva_codec_use_device(ctx, shared)  # already there: no second reference
    shared2 = lib.zcva_selftest_refcount(shared)
    checks.append(Check("use_device moves a decoder context to the shared device",
                        rc == 0 and moved and own1 == own0 - 1 and shared1 == shared0 + 1
                        and again == 0 and shared2 == shared1,
                        f"rc {rc}, own refs {own0} → {own1}, shared refs {shared0} → {shared1} → {shared2}"))
    return checks + _use_device_refusals(devices, frame, ctx)


def _use_device_refusals(devices: _Devices, frame, ctx) -> list[Check]:
    """What zcva_codec_use_device refuses: an open decoder context, one without a device or with its
    own hw_frames_ctx, and devices that are not VA-API (`ctx`: a context on the shared device)."""
    ffi, lib, own, drm, shared = devices.ffi, devices.lib, devices.own, devices.drm, devices.shared
    checks: list[Check] = []
    opened = devices.codec(own)
    orc = lib.zcva_selftest_codec_open(opened) if opened != ffi.NULL else -1
    rc = lib.zcva_codec_use_device(opened, shared) if orc == 0 else None
    kept = orc == 0 and bool(lib.zcva_selftest_codec_device_is(opened, own))
    checks.append(Check("use_device refuses an open decoder context", rc == lib.ZCVA_ERR_CODEC_OPEN and kept,
                        f"open {orc}, rc {rc}, device kept {kept}"))
    bare = devices.codec(ffi.NULL)
    rc = lib.zcva_codec_use_device(bare, shared) if bare != ffi.NULL else None
    checks.append(Check("use_device refuses a decoder context without a device",
                        rc == lib.ZCVA_ERR_CODEC_NO_DEVICE and not lib.zcva_selftest_codec_device_is(bare, shared),
                        f"rc {rc}"))
    framed = devices.codec(own)
    frc = lib.zcva_selftest_codec_set_frames(framed, frame) if framed != ffi.NULL else None
    rc = lib.zcva_codec_use_device(framed, shared) if frc == 0 else None
    checks.append(Check("use_device refuses a decoder context with its own hw_frames_ctx",
                        rc == lib.ZCVA_ERR_CODEC_HAS_FRAMES
                        and bool(lib.zcva_selftest_codec_device_is(framed, own)), f"rc {rc}"))
    on_drm = devices.codec(drm) if drm != ffi.NULL else ffi.NULL
    rc_drm_codec = lib.zcva_codec_use_device(on_drm, shared) if on_drm != ffi.NULL else None
    rc_drm_device = lib.zcva_codec_use_device(devices.codec(own), drm) if drm != ffi.NULL else None
    checks.append(Check("use_device refuses devices that are not VA-API",
                        rc_drm_codec == lib.ZCVA_ERR_CODEC_NOT_VAAPI
                        and rc_drm_device == lib.ZCVA_ERR_DEVICE_NOT_VAAPI
                        and lib.zcva_codec_use_device(ctx, ffi.NULL) == lib.ZCVA_ERR_DEVICE_NOT_VAAPI,
                        f"DRM decoder {rc_drm_codec}, DRM device {rc_drm_device}"))
    return checks


def _crop(ffi, lib, frame) -> tuple[int, ...]:
    out = ffi.new("uint64_t[4]")
    lib.zcva_frame_crop(frame, out)
    return tuple(int(v) for v in out)


def _push_pull(ffi, lib, frame, region, vaapi: bool):
    """(push rc, pulled frame or NULL, graph): `region` of `frame` through buffer → buffersink."""
    src, sink = ffi.new("AVFilterContext **"), ffi.new("AVFilterContext **")
    graph = lib.zcva_selftest_graph(64, 48, src, sink)
    if graph == ffi.NULL:
        return None, ffi.NULL, graph
    if (vaapi and lib.zcva_attach_hw_frames(src[0], frame) != 0) or lib.zcva_selftest_graph_configure(graph) != 0:
        return None, ffi.NULL, graph
    averror = ffi.new("int *")
    rc = lib.zcva_buffersrc_push_region(src[0], frame, *region, averror)
    return rc, lib.zcva_selftest_pull(sink[0]), graph


def region_checks(ffi, lib, va_frame) -> list[Check]:
    """zcva_buffersrc_push_region on real buffer sources: what reaches the sink, and what is refused."""
    checks: list[Check] = []
    soft = lib.zcva_selftest_soft_frame(64, 48, lib.zcva_pix_fmt_nv12())
    if soft == ffi.NULL:
        return [Check("allocate a software NV12 frame", False)]
    frees = [soft]
    graphs = []
    try:
        rc, out, graph = _push_pull(ffi, lib, soft, (8, 6, 16, 10), vaapi=False)
        graphs.append(graph)
        got = _crop(ffi, lib, out) if out != ffi.NULL else None
        same = out != ffi.NULL and bool(lib.zcva_selftest_same_data(out, soft)) \
            and bool(lib.zcva_frame_matches(out, 64, 48, lib.zcva_pix_fmt_nv12()))
        checks.append(Check("a software region reaches the sink as the same picture with its crop fields",
                            rc == 0 and got == (8, 6, 16, 10) and same and _crop(ffi, lib, soft) == (0, 0, 0, 0),
                            f"rc {rc}, crop {got}, same buffer and size {same}, source crop {_crop(ffi, lib, soft)}"))
        if out != ffi.NULL:
            frees.append(out)
            rc2, again, graph = _push_pull(ffi, lib, out, (2, 4, 6, 8), vaapi=False)
            graphs.append(graph)
            got2 = _crop(ffi, lib, again) if again != ffi.NULL else None
            if again != ffi.NULL:
                frees.append(again)
            checks.append(Check("a region of a cropped frame adds to its crop fields",
                                rc2 == 0 and got2 == (10, 10, 22, 18), f"rc {rc2}, crop {got2}"))
        refused = []
        for region in ((40, 0, 24, 0), (0, 0, 64, 0), (0, 48, 0, 0), (2**63, 0, 0, 0)):
            rc3, none, graph = _push_pull(ffi, lib, soft, region, vaapi=False)
            graphs.append(graph)
            refused.append((rc3, none == ffi.NULL))
            if none != ffi.NULL:
                frees.append(none)
        checks.append(Check("regions outside the picture are refused and nothing is queued",
                            all(r == (lib.ZCVA_ERR_REGION, True) for r in refused), f"{refused}"))
        before = lib.zcva_selftest_frames_refcount(va_frame)
        rc, out, graph = _push_pull(ffi, lib, va_frame, (16, 8, 8, 4), vaapi=True)
        surface, ident, ident_out = ffi.new("uint32_t *"), ffi.new("uintptr_t *"), ffi.new("uintptr_t *")
        ok = out != ffi.NULL and lib.zcva_surface_id(out, surface) == 0 and \
            lib.zcva_frames_context_id(va_frame, ident) == 0 and lib.zcva_frames_context_id(out, ident_out) == 0
        got = _crop(ffi, lib, out) if out != ffi.NULL else None
        same = ok and surface[0] == SURFACE and ident[0] == ident_out[0] != 0
        if out != ffi.NULL:
            lib.zcva_selftest_frame_free(out)
        lib.zcva_selftest_graph_free(graph)
        after = lib.zcva_selftest_frames_refcount(va_frame)
        soft_id = lib.zcva_frames_context_id(soft, ident)
        checks.append(Check("a VA-API region reaches the sink as the same surface and frames context, cropped",
                            rc == 0 and got == (16, 8, 8, 4) and same and after == before
                            and _crop(ffi, lib, va_frame) == (0, 0, 0, 0) and soft_id == lib.ZCVA_ERR_NOT_VAAPI_FRAME,
                            f"rc {rc}, crop {got}, same surface and context {same}, refs {before} → {after}, "
                            f"software frame's context rc {soft_id}"))
        text = ffi.new("char[64]")
        lib.zcva_error_text(-22, text, 64)
        checks.append(Check("FFmpeg's error text", ffi.string(text).decode() == "Invalid argument",
                            ffi.string(text).decode()))
    finally:
        for g in graphs:
            if g is not None and g != ffi.NULL:
                lib.zcva_selftest_graph_free(g)
        for f in frees:
            lib.zcva_selftest_frame_free(f)
    return checks
