"""The native VA bridge against real FFmpeg objects, and the layout checks against real PyAV objects.

PyPI's PyAV bundles an FFmpeg without headers, so the bridge cannot be built for it here. The C
code is then built against the system FFmpeg and exercised in a separate process that never
imports PyAV (one libavutil per process), instead of being skipped. Tests that need the bridge
loaded next to PyAV (`vastack`) run where PyAV's FFmpeg has its headers: the VA stack root.
"""

import ctypes
import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import av
import av.filter
import numpy as np
import openvino as ov
import pytest

from zerocopy.bridge import (
    BridgeUnavailable,
    Device,
    LayoutError,
    codec_context_pointer,
    filter_context_pointer,
    frame_pointer,
)
from zerocopy.bridge.layout import read_pointer
from zerocopy.bridge.loader import (
    LIBRARIES,
    PREFIX_ENV,
    build,
    find_headers,
    load_bridge,
    loaded_library_files,
    make_capsule,
)
from zerocopy.errors import PathUnavailable
from zerocopy.frames import Geometry
from zerocopy.handoff.surface import SurfaceHandoff, va_context
from zerocopy.resize.vaapi import VaapiScaler, graph_chain

pytestmark = pytest.mark.native


@pytest.fixture(scope="session")
def system_bridge(tmp_path_factory):
    """The bridge built against whatever FFmpeg pkg-config finds (the system's)."""
    try:
        headers = find_headers()
    except BridgeUnavailable as e:
        pytest.fail(f"{e}: install libavutil-dev libavfilter-dev libavcodec-dev libva-dev pkg-config "
                    "(make setup does, as root)")
    return build(headers, tmp_path_factory.mktemp("bridge")), headers


def run_python(code: str, env: dict[str, str] | None = None, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300,
                          env=None if env is None else {**os.environ, **env})


@pytest.fixture(scope="module")
def pyav_bridge():
    """The bridge loaded next to PyAV: only where PyAV's own FFmpeg has its headers (the VA stack root)."""
    try:
        headers = find_headers()
    except BridgeUnavailable as e:
        pytest.skip(reason=f"needs the VA stack root (PyAV next to its FFmpeg's headers): {e}")
    pyav = {n: tuple(av.library_versions[n]) for n in LIBRARIES}
    if any(headers.version(n) != pyav[n] for n in LIBRARIES):
        pytest.skip(reason=f"needs the VA stack root: the FFmpeg headers here (libavcodec "
                    f"{'.'.join(map(str, headers.avcodec))}) are not those of PyAV's FFmpeg (libavcodec "
                    f"{'.'.join(map(str, pyav['libavcodec']))})")
    return load_bridge()  # the headers match: it must load, or this fails


def test_selftest_on_real_ffmpeg_objects_in_a_process_without_pyav(system_bridge):
    folder, headers = system_bridge
    proc = run_python(
        "import sys, json\n"
        "from zerocopy.bridge.__main__ import main\n"
        f"rc = main(['selftest', {str(folder)!r}])\n"
        "assert 'av' not in sys.modules, 'PyAV was imported next to another FFmpeg'\n"
        "sys.exit(rc)\n")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    checks = {c["name"]: c for c in json.loads(proc.stdout)}
    assert len(checks) == 15 and all(c["ok"] for c in checks.values()), checks
    assert checks["display from hw_frames_ctx->device_ctx->hwctx"]["detail"].endswith("0x5eed0d15")
    assert checks["buffer source takes a reference on hw_frames_ctx"]["detail"].endswith("1 → 2 → 1")
    assert checks["graph configures as VAAPI with the frame's hw_frames_ctx"]["ok"]
    assert checks["device reference from a frame is its device, one more reference"]["detail"] == (
        "rc 0, display 0x5eed0d15, refs 1 → 2")
    assert checks["use_device moves a decoder context to the shared device"]["detail"] == (
        "rc 0, own refs 2 → 1, shared refs 2 → 3 → 3")
    assert checks["use_device refuses an open decoder context"]["detail"] == "open 0, rc -5, device kept True"
    assert checks["use_device refuses a decoder context without a device"]["detail"] == "rc -6"
    assert checks["use_device refuses a decoder context with its own hw_frames_ctx"]["detail"] == "rc -9"
    assert checks["use_device refuses devices that are not VA-API"]["detail"] == "DRM decoder -7, DRM device -8"
    assert checks["freeing the decoders and the reference restores the frame device's count"]["detail"] == (
        "refs 1 → 2 → 2 → 1")


def test_device_reference_is_released_exactly_once(system_bridge):
    """Device (the Python owner of a device reference) against a real VA-API device context, counted."""
    folder, _ = system_bridge
    proc = run_python(
        "import gc, json, sys\n"
        "from pathlib import Path\n"
        "from zerocopy.bridge.loader import Bridge, BridgeUnavailable, Device, import_module\n"
        "b = Bridge(import_module(Path(sys.argv[1])))\n"
        "ffi, lib = b.ffi, b.lib\n"
        "frame = lib.zcva_selftest_frame(ffi.cast('void *', 0x5EED), 7, 64, 48)\n"
        "count = lambda: lib.zcva_selftest_refcount(lib.zcva_selftest_frame_device(frame))\n"
        "def device():\n"
        "    out = ffi.new('AVBufferRef **')\n"
        "    assert lib.zcva_device_ref(frame, out) == 0\n"
        "    return Device(b, out[0])\n"
        "seen = [count()]\n"
        "d = device(); seen.append(count())\n"
        "display = d.display()\n"
        "d.close(); seen.append(count())\n"
        "d.close(); seen.append(count())\n"
        "try:\n"
        "    d.display()\n"
        "    closed_refused = False\n"
        "except BridgeUnavailable:\n"
        "    closed_refused = True\n"
        "with device() as e:\n"
        "    seen.append(count())\n"
        "seen.append(count())\n"
        "g = device(); seen.append(count())\n"
        "del g; gc.collect(); seen.append(count())\n"
        "lib.zcva_selftest_frame_free(frame)\n"
        "print(json.dumps({'seen': seen, 'display': display, 'closed_refused': closed_refused,\n"
        "                  'closed': d.closed and e.closed, 'pyav': 'av' in sys.modules}))\n",
        None, str(folder))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = json.loads(proc.stdout)
    assert out == {"seen": [1, 2, 1, 1, 2, 1, 2, 1], "display": 0x5EED, "closed_refused": True, "closed": True,
                   "pyav": False}, out


def test_a_module_for_another_ffmpeg_is_refused_next_to_pyav(system_bridge):
    """Loading the system-FFmpeg build into PyAV's process: both the version and the second libavutil
    must be caught by the same check the loader runs."""
    folder, headers = system_bridge
    if headers.avutil == tuple(av.library_versions["libavutil"]):
        pytest.skip(reason="the system FFmpeg is PyAV's own here: no mismatch to observe")
    proc = run_python(
        "import av\n"
        "from zerocopy.bridge.loader import BridgeUnavailable, import_module, loaded_libavutil_files, verify\n"
        f"m = import_module(__import__('pathlib').Path({str(folder)!r}))\n"
        "assert len(loaded_libavutil_files()) == 2, loaded_libavutil_files()\n"
        "try:\n"
        "    verify(m, {k: tuple(v) for k, v in av.library_versions.items()})\n"
        "except BridgeUnavailable as e:\n"
        "    print(e)\n"
        "else:\n"
        "    raise SystemExit('accepted a bridge for another FFmpeg')\n")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PyAV loaded " + ".".join(map(str, av.library_versions["libavutil"])) in proc.stdout


def test_the_bridge_for_pyav_loads_or_says_exactly_why_not():
    try:
        bridge = load_bridge()
    except BridgeUnavailable as e:
        have = ".".join(map(str, av.library_versions["libavutil"]))
        assert have in str(e) or "headers" in str(e), str(e)
        return
    frame = av.VideoFrame(32, 32, "yuv420p")  # a software frame: the bridge must refuse, not crash
    with pytest.raises(BridgeUnavailable, match="not a VA-API frame"):
        bridge.surface_id(frame)


# --- PyAV object layout, in-process, real objects -------------------------------------------------


@pytest.mark.parametrize("fmt,size", [("yuv420p", (64, 48)), ("nv12", (130, 66)), ("yuv420p10le", (33, 17)),
                                      ("rgb24", (7, 5))])
def test_frame_pointer_is_validated_against_the_frame_planes(fmt, size):
    frame = av.VideoFrame(*size, fmt)
    assert frame_pointer(frame) != 0


def test_frame_pointer_of_decoded_frames(clips):
    from zerocopy.samples import ClipSpec

    path, _ = clips("h264.mp4", ClipSpec(frames=20))
    with av.open(str(path)) as c:
        ptrs = {frame_pointer(f) for f in c.decode(video=0)}
    assert len(ptrs) >= 1


def test_a_wrong_layout_is_rejected_not_trusted():
    frame = av.VideoFrame(64, 48, "yuv420p")
    for offset in (16, 32, 40):
        with pytest.raises(LayoutError):
            frame_pointer(frame, offset=offset)
    with pytest.raises(LayoutError, match="av.VideoFrame"):
        frame_pointer(av.AudioFrame(format="s16", layout="mono", samples=16))
    with pytest.raises(LayoutError, match="av.VideoFrame"):
        frame_pointer(np.zeros(4))


def test_hardware_frames_need_the_native_check():
    frame = av.VideoFrame(64, 48, "yuv420p")
    assert frame_pointer(frame, matches=lambda p, w, h: False)  # a software frame is checked by its planes
    # and a failed plane check is final: it never falls through to the hardware-frame check
    with pytest.raises(LayoutError):
        frame_pointer(frame, offset=32, matches=lambda p, w, h: True)


def _graph():
    g = av.filter.Graph()
    src = g.add_buffer(width=64, height=48, format="yuv420p", time_base=Fraction(1, 25))
    scale = g.add("scale", "32:24")
    sink = g.add("buffersink")
    src.link_to(scale)
    scale.link_to(sink)
    g.configure()
    return g, src, scale, sink


def test_filter_context_pointer_is_validated_by_class_and_name():
    g, src, scale, sink = _graph()
    ptrs = {filter_context_pointer(c) for c in (src, scale, sink)}
    assert len(ptrs) == 3
    for offset in (8, 24, 32):
        with pytest.raises(LayoutError):
            filter_context_pointer(scale, offset=offset)
    with pytest.raises(LayoutError, match="FilterContext"):
        filter_context_pointer(g)


def _pyav_libavcodec():
    """PyAV's own libavcodec (the copy already loaded), through ctypes: no headers needed."""
    files = loaded_library_files("libavcodec")
    assert len(files) == 1, files
    lib = ctypes.CDLL(files.pop())
    lib.avcodec_get_class.restype = ctypes.c_void_p
    lib.avcodec_is_open.argtypes = [ctypes.c_void_p]
    lib.avcodec_is_open.restype = ctypes.c_int
    return lib


def test_codec_context_pointer_is_the_context_pyav_opens_at_the_first_decode(clips):
    """The pointer is PyAV's own AVCodecContext (its libavcodec's class), and PyAV opens the codec at the
    first decode, not in av.open: what lets the bridge swap a decoder's device in between."""
    from zerocopy.samples import ClipSpec

    path, _ = clips("h264.mp4", ClipSpec(frames=20))
    avcodec = _pyav_libavcodec()
    with av.open(str(path)) as c:
        cc = c.streams.video[0].codec_context
        ptr = codec_context_pointer(cc)
        assert read_pointer(ptr) == avcodec.avcodec_get_class()
        assert not cc.is_open and avcodec.avcodec_is_open(ptr) == 0
        seen = []
        assert codec_context_pointer(cc, matches=lambda *a: seen.append(a) or True) == ptr
        assert seen == [(ptr, cc.codec.id, cc.width, cc.height)]
        with pytest.raises(LayoutError, match="its AVCodecContext"):
            codec_context_pointer(cc, matches=lambda *a: False)
        next(c.decode(video=0))
        assert cc.is_open and avcodec.avcodec_is_open(ptr) == 1
        assert codec_context_pointer(cc) == ptr


def test_a_wrong_codec_context_layout_is_rejected_not_trusted():
    cc = av.CodecContext.create("h264", "r")
    other = av.CodecContext.create("h264", "r")
    assert codec_context_pointer(cc) != codec_context_pointer(other)
    for offset in (8, 16, 32, 40):
        with pytest.raises(LayoutError):
            codec_context_pointer(cc, offset=offset)
    with pytest.raises(LayoutError, match="CodecContext"):
        codec_context_pointer(av.VideoFrame(16, 16, "yuv420p"))


# --- `python -m zerocopy.bridge build`: a notice when not buildable here, a failure when broken -------


def _fake_pkgconfig_prefix(root: Path, versions: dict[str, tuple[int, int, int]]) -> Path:
    """A prefix whose .pc files name the system FFmpeg's headers and libraries with `versions`."""
    pc = root / "lib" / "pkgconfig"
    pc.mkdir(parents=True)
    for name in LIBRARIES:
        var = {v: subprocess.run(["pkg-config", f"--variable={v}", name], capture_output=True, text=True,
                                 check=True).stdout.strip() for v in ("includedir", "libdir")}
        (pc / f"{name}.pc").write_text(
            f"includedir={var['includedir']}\nlibdir={var['libdir']}\nName: {name}\nDescription: {name}\n"
            f"Version: {'.'.join(map(str, versions[name]))}\nCflags: -I${{includedir}}\n"
            f"Libs: -L${{libdir}} -l{name[3:]}\n")
    return root


def test_build_with_pyavs_headers_that_fails_to_compile_exits_1(system_bridge, tmp_path):
    """Headers that pkg-config says are PyAV's FFmpeg's, and no compiler: a broken setup, so exit 1 in one
    line (it used to be a notice with exit 0, so `make setup` passed without the bridge)."""
    pyav = {n: tuple(av.library_versions[n]) for n in LIBRARIES}
    prefix = _fake_pkgconfig_prefix(tmp_path / "prefix", pyav)
    proc = run_python("import sys; from zerocopy.bridge.__main__ import main; sys.exit(main(['build']))",
                      {PREFIX_ENV: str(prefix), "ZEROCOPY_CACHE": str(tmp_path / "cache"),
                       "CC": str(tmp_path / "no-such-cc")})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("native bridge: build failed in "), proc.stderr
    assert "no-such-cc" in lines[0]


def test_build_without_headers_is_a_notice(tmp_path):
    empty = tmp_path / "pc"
    empty.mkdir()
    proc = run_python("import sys; from zerocopy.bridge.__main__ import main; sys.exit(main(['build']))",
                      {"PKG_CONFIG_LIBDIR": str(empty), "PKG_CONFIG_PATH": "", PREFIX_ENV: "",
                       "ZEROCOPY_CACHE": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr.startswith("native bridge: not built: no FFmpeg/libva development headers"), proc.stderr


# --- the bridge next to PyAV (VA stack root) ----------------------------------------------------


@pytest.mark.vastack
def test_build_for_pyav_succeeds_and_fails_loudly_without_a_compiler(pyav_bridge, tmp_path):
    env = {"ZEROCOPY_CACHE": str(tmp_path / "cache")}
    code = "import sys; from zerocopy.bridge.__main__ import main; sys.exit(main(['build']))"
    ok = run_python(code, env)
    assert ok.returncode == 0 and "built and verified" in ok.stdout, ok.stdout + ok.stderr
    broken = run_python(code, {**env, "ZEROCOPY_CACHE": str(tmp_path / "cache2"), "CC": "/nonexistent/cc"})
    assert broken.returncode == 1 and broken.stderr.startswith("native bridge: build failed in "), broken.stderr


@pytest.mark.vastack
def test_codec_context_is_validated_by_the_bridge_on_a_real_decoder(pyav_bridge, clips):
    from zerocopy.samples import ClipSpec

    path, _ = clips("h264.mp4", ClipSpec(frames=20))
    ffi, lib = pyav_bridge.ffi, pyav_bridge.lib
    with av.open(str(path)) as c:
        cc = c.streams.video[0].codec_context
        ptr = pyav_bridge.codec_context(cc)
        assert int(ffi.cast("uintptr_t", ptr)) == codec_context_pointer(cc)
        assert lib.zcva_codec_matches(ptr, cc.codec.id, cc.width, cc.height)
        assert not lib.zcva_codec_matches(ptr, cc.codec.id, cc.width + 2, cc.height)
        assert not lib.zcva_codec_matches(ptr, av.Codec("hevc", "r").id, cc.width, cc.height)
        audio = av.CodecContext.create("aac", "r")
        with pytest.raises(LayoutError, match="its AVCodecContext"):
            pyav_bridge.codec_context(audio)  # an AVCodecContext, but not a video one


@pytest.mark.vastack
def test_use_device_refuses_a_software_decoder_cleanly(pyav_bridge, clips):
    """A decoder opened without a hwaccel has no device to replace; once decoding, none may change."""
    from zerocopy.samples import ClipSpec

    path, _ = clips("h264.mp4", ClipSpec(frames=20))
    ffi, lib = pyav_bridge.ffi, pyav_bridge.lib
    device = Device(pyav_bridge, lib.zcva_selftest_device(1, ffi.cast("void *", 0x5EED)))  # allocated, never opened
    with av.open(str(path)) as c:
        cc = c.streams.video[0].codec_context
        with pytest.raises(BridgeUnavailable, match="no hardware device"):
            pyav_bridge.use_device(cc, device)
        frame = next(c.decode(video=0))
        with pytest.raises(BridgeUnavailable, match="already open"):
            pyav_bridge.use_device(cc, device)
        with pytest.raises(BridgeUnavailable, match="not a VA-API frame"):
            pyav_bridge.device_of(frame)
    assert lib.zcva_selftest_refcount(device.ref) == 1  # the refusals took no reference
    device.close()
    with pytest.raises(BridgeUnavailable, match="closed"):
        pyav_bridge.use_device(av.CodecContext.create("h264", "r"), device)


@pytest.mark.igpu
def test_second_input_decodes_on_the_first_inputs_device(pyav_bridge, clips):
    """Two inputs, one VADisplay: the second decoder is moved to the first one's device before it decodes."""
    from zerocopy.decode.vaapi import _hwaccel, pick_render_node
    from zerocopy.samples import ClipSpec

    node = pick_render_node(os.environ.get("ZEROCOPY_VA_DEVICE"))
    if node is None or "vaapi" not in av.codec.hwaccel.hwdevices_available():
        pytest.skip(reason="needs a VA-API PyAV and a /dev/dri render node")
    a, _ = clips("h264.mp4", ClipSpec(frames=20))
    b, _ = clips("h264-b.mp4", ClipSpec(frames=20, face="grace_hopper"))
    try:
        first = av.open(str(a), hwaccel=_hwaccel(node))
    except av.FFmpegError as e:
        pytest.skip(reason=f"no VA-API driver for {node}: {e}")
    with (first, pyav_bridge.device_of(next(first.decode(video=0))) as device,
          av.open(str(b), hwaccel=_hwaccel(node)) as second):
        pyav_bridge.use_device(second.streams.video[0].codec_context, device)
        frame = next(second.decode(video=0))
        assert pyav_bridge.display(frame) == device.display()
        with pytest.raises(BridgeUnavailable, match="already open"):
            pyav_bridge.use_device(second.streams.video[0].codec_context, device)


# --- the VA stages up to where the hardware starts ---------------------------------------------


def test_scale_graph_asks_for_bt601_limited_nv12_and_pads_for_letterbox():
    g = Geometry.fit(1920, 1080, 128, 128, "letterbox")
    chain = dict(graph_chain(g, download=False))
    scale = chain["scale_vaapi"]
    assert "w=128:h=72" in scale and "format=nv12" in scale
    assert not any("extra_hw_frames" in args for args in chain.values())  # ignored by VPP pools
    assert "out_color_matrix=smpte170m" in scale and "out_range=limited" in scale
    assert "width=128:height=128:x=0:y=28" in chain["pad_vaapi"]
    assert "hwdownload" not in chain
    copy = [name for name, _ in graph_chain(g, download=True)]
    assert copy == ["scale_vaapi", "pad_vaapi", "hwdownload", "format", "buffersink"]
    stretch = [name for name, _ in graph_chain(Geometry.fit(1920, 1080, 300, 300, "stretch"), False)]
    assert stretch == ["scale_vaapi", "buffersink"]


def test_scaler_refuses_when_the_filters_are_missing():
    if "scale_vaapi" in av.filter.filters_available:
        pytest.skip(reason="this PyAV has scale_vaapi")
    with pytest.raises(PathUnavailable, match="scale_vaapi"):
        VaapiScaler(None, 128, 128, "letterbox", download=False)


def test_va_context_without_a_gpu_becomes_a_refusal():
    core = ov.Core()
    if "GPU" in core.available_devices:
        pytest.skip(reason="this machine has a GPU")
    with pytest.raises(PathUnavailable) as e:
        va_context(core, make_capsule(0x1234))
    assert "[GPU]" in e.value.reasons["zero-copy"][0]
    with pytest.raises(PathUnavailable, match="cannot share"):
        va_context(core, 0x1234)  # not a capsule: OpenVINO's TypeError, refused the same way
    with pytest.raises(BridgeUnavailable):
        make_capsule(0)


def test_surface_handoff_takes_one_frame_per_request():
    handoff = SurfaceHandoff(context=None, input_names=["in/y", "in/uv"], bridge=None)
    with pytest.raises(PathUnavailable, match="batched"):
        handoff.bind(None, [object(), object()], 0)
