"""The native VA bridge against real FFmpeg objects, and the layout checks against real PyAV objects.

PyPI's PyAV bundles an FFmpeg without headers, so the bridge cannot be built for it here. The C
code is then built against the system FFmpeg and exercised in a separate process that never
imports PyAV (one libavutil per process), instead of being skipped.
"""

import json
import subprocess
import sys
from fractions import Fraction

import av
import av.filter
import numpy as np
import openvino as ov
import pytest

from zerocopy.bridge import BridgeUnavailable, LayoutError, filter_context_pointer, frame_pointer
from zerocopy.bridge.loader import build, find_headers, load_bridge, make_capsule
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
        pytest.fail(f"{e}: install libavutil-dev libavfilter-dev libva-dev pkg-config (make setup does, as root)")
    return build(headers, tmp_path_factory.mktemp("bridge")), headers


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


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
    assert len(checks) == 7 and all(c["ok"] for c in checks.values()), checks
    assert checks["display from hw_frames_ctx->device_ctx->hwctx"]["detail"].endswith("0x5eed0d15")
    assert checks["buffer source takes a reference on hw_frames_ctx"]["detail"].endswith("1 → 2 → 1")
    assert checks["graph configures as VAAPI with the frame's hw_frames_ctx"]["ok"]


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


# --- the VA stages up to where the hardware starts ---------------------------------------------


def test_scale_graph_asks_for_bt601_limited_nv12_and_pads_for_letterbox():
    g = Geometry.fit(1920, 1080, 128, 128, "letterbox")
    chain = dict(graph_chain(g, download=False, extra_hw_frames=14))
    scale = chain["scale_vaapi"]
    assert "w=128:h=72" in scale and "format=nv12" in scale and "extra_hw_frames=14" in scale
    assert "out_color_matrix=smpte170m" in scale and "out_range=limited" in scale
    assert "width=128:height=128:x=0:y=28" in chain["pad_vaapi"]
    assert "hwdownload" not in chain
    copy = [name for name, _ in graph_chain(g, download=True, extra_hw_frames=14)]
    assert copy == ["scale_vaapi", "pad_vaapi", "hwdownload", "format", "buffersink"]
    stretch = [name for name, _ in graph_chain(Geometry.fit(1920, 1080, 300, 300, "stretch"), False, 4)]
    assert stretch == ["scale_vaapi", "buffersink"]


def test_scaler_refuses_when_the_filters_are_missing():
    if "scale_vaapi" in av.filter.filters_available:
        pytest.skip(reason="this PyAV has scale_vaapi")
    with pytest.raises(PathUnavailable, match="scale_vaapi"):
        VaapiScaler(None, 128, 128, "letterbox", download=False, extra_hw_frames=4)


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
