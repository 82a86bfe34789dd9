"""The VA stack short of a driver: a PyAV built with VA-API, the real filters, the bridge next to PyAV,
and a render node that cannot be opened. Runs in the VA stack root (`make test-va-stack`), where
PyAV is built from source against Debian testing's FFmpeg, and on this machine's own system
(`make test-gpu-host`: FFmpeg 9 built by `make setup-gpu`, the dead render node made in a temp folder and
named by $ZEROCOPY_TEST_DEAD_NODE); skipped with the reason elsewhere.
"""

from __future__ import annotations

import json
import os

import av
import av.codec.hwaccel
import av.filter
import pytest
from conftest import read_jsonl, run_cli

from zerocopy.bridge import BridgeUnavailable
from zerocopy.frames import Geometry
from zerocopy.samples import ClipSpec

pytestmark = [
    pytest.mark.vastack,
    pytest.mark.skipif("vaapi" not in av.codec.hwaccel.hwdevices_available(),
                       reason="needs a PyAV built with VA-API (make setup-gpu; in CI: make test-gpu-host and "
                       "make test-va-stack)"),
]


@pytest.fixture(scope="module")
def bridge():
    from zerocopy.bridge import bridge_status

    b, why = bridge_status()
    assert b is not None, f"the bridge must load next to a VA-API PyAV whose FFmpeg has headers: {why}"
    return b


def dead_node_path() -> str | None:
    """/dev/dri's first render node (the root makes /dev/dri/renderD128 with mknod), else the one named by
    $ZEROCOPY_TEST_DEAD_NODE (scripts/gpu-host-test.sh makes it in a temp folder, /dev untouched)."""
    from zerocopy.decode.vaapi import render_nodes

    nodes = render_nodes()
    return nodes[0].path if nodes else (os.environ.get("ZEROCOPY_TEST_DEAD_NODE") or None)


@pytest.fixture(scope="module")
def dead_node():
    """A render node with no driver behind it: its path and the reason FFmpeg gives for it."""
    from zerocopy.decode.vaapi import check_device
    from zerocopy.errors import PathUnavailable

    node = dead_node_path()
    if node is None:
        pytest.skip(reason="no render node here (the VA stack root makes /dev/dri/renderD128 without a driver; "
                    "make test-gpu-host makes one in a temp folder)")
    try:
        check_device(node)
    except PathUnavailable as e:
        return node, e.reasons["va"][0]
    pytest.skip(reason=f"{node} opens: a real VA driver is here (see tests marked igpu)")


def test_pyav_keeps_frames_on_the_gpu_and_has_the_filters():
    from zerocopy.decode.vaapi import hw_owned_support

    assert hw_owned_support() is None
    av.codec.hwaccel.HWAccel(device_type="vaapi", device="/dev/dri/renderD128", allow_software_fallback=False,
                             is_hw_owned=True)
    for name in ("scale_vaapi", "pad_vaapi", "hwdownload"):
        assert name in av.filter.filters_available, name


@pytest.mark.parametrize("mode,download", [("letterbox", False), ("letterbox", True), ("stretch", False)])
def test_the_real_filters_take_our_arguments(mode, download):
    """Each filter of our chain initialises with our options (FFmpeg parses them when the filter is added)."""
    from zerocopy.resize.vaapi import PICTURE_CHAIN, graph_chain

    g = Geometry.fit(1920, 1080, 128, 128, mode)
    graph = av.filter.Graph()
    for name, args in graph_chain(g, download) + PICTURE_CHAIN:
        graph.add(name, args) if args else graph.add(name)
    with pytest.raises((av.FFmpegError, ValueError)):
        graph.add("scale_vaapi", "w=128:h=72:out_color_matrix=bt601")  # FFmpeg's name is smpte170m


def test_the_bridge_gives_pyavs_own_buffer_source_the_frames_context(bridge):
    """A buffer source made by PyAV, found through its object layout, takes a reference on a real
    (allocated, never initialised) VA-API frames context."""
    from zerocopy.bridge import filter_context_pointer
    from zerocopy.bridge.selftest import DISPLAY, SURFACE

    ffi, lib = bridge.ffi, bridge.lib
    graph = av.filter.Graph()
    src = graph.add_buffer(width=64, height=48, format="nv12", time_base=1 / 25)
    frame = lib.zcva_selftest_frame(ffi.cast("void *", DISPLAY), SURFACE, 64, 48)
    assert frame != ffi.NULL
    try:
        before = lib.zcva_selftest_frames_refcount(frame)
        ctx = ffi.cast("AVFilterContext *", filter_context_pointer(src))
        assert lib.zcva_attach_hw_frames(ctx, frame) == 0
        assert lib.zcva_selftest_frames_refcount(frame) == before + 1
        del src, graph  # freeing PyAV's graph drops the buffer source's reference
        import gc

        gc.collect()
        assert lib.zcva_selftest_frames_refcount(frame) == before
    finally:
        lib.zcva_selftest_frame_free(frame)


def test_a_dead_render_node_makes_auto_fall_back_with_the_va_error(dead_node, clips, tmp_path, capsys,
                                                                   face_model_path):
    node, va_error = dead_node
    clip, truth = clips("vastack.mp4", ClipSpec(frames=16))
    report, jsonl = tmp_path / "r.json", tmp_path / "d.jsonl"
    assert run_cli("detect", clip, "--report", report, "--json", jsonl, "--va-device", node) == 0
    r = json.loads(report.read_text())
    assert r["path"] == "software" and r["frames"] == len(truth)
    assert f"cannot open the VA device {node}" in r["refused"]["copy"], r["refused"]
    assert va_error in r["refused"]["copy"]
    assert "OpenVINO sees no GPU" in r["refused"]["zero-copy"]
    assert [line["frame"] for line in read_jsonl(jsonl)] == list(range(len(truth)))
    assert "cannot open: " not in capsys.readouterr().err  # never blamed on the input


def test_an_explicit_copy_path_on_a_dead_node_exits_1_with_one_line_naming_it(dead_node, clips, capsys):
    node, _ = dead_node
    clip, _ = clips("vastack.mp4", ClipSpec(frames=16))
    assert run_cli("detect", clip, "--path", "copy", "--va-device", node) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("zerocopy: the copy path cannot run here: ") and node in lines[0]


def test_a_va_stage_that_cannot_take_the_frame_is_refused_on_the_first_frame(bridge, clips, tmp_path,
                                                                             face_model_path):
    """The real scale_vaapi stage (bridge + PyAV graph) fed software frames: the bridge refuses the frame
    (no hw_frames_ctx), `auto` names that and runs software with every frame."""
    from zerocopy.api import Detector
    from zerocopy.cli.detect import Outputs, run_detect
    from zerocopy.decode.pyav import PyAVDecoder
    from zerocopy.paths import CopyFront, PreparedStream, SoftwareFront
    from zerocopy.paths.base import Prepared
    from zerocopy.paths.vaapi import prime
    from zerocopy.resize.vaapi import VaapiScaler

    class CpuDecodedCopy(CopyFront):
        devices = ("CPU",)

        def refusals(self, facts, config):
            return []  # as on a machine with it all

        def open(self, source, req):
            m = req.model
            scaler = VaapiScaler(bridge, m.width, m.height, m.spec.resize, download=True)

            def prepare(frame):
                small, shown, g = scaler(frame)  # the bridge refuses a frame without hw_frames_ctx
                return Prepared(inputs={}, geometry=g, shown=shown)

            stream = PreparedStream(PyAVDecoder(source), prepare)
            prime(self.name, stream, source)
            return stream

    clip, truth = clips("vastack.mp4", ClipSpec(frames=16))
    with Detector(fronts=[CpuDecodedCopy(), SoftwareFront()]) as det:
        run = run_detect(det, [str(clip)], Outputs(json=str(tmp_path / "d.jsonl")))
    assert run.choice.name == "software" and run.result.frames == len(truth)
    assert "failed on the first frame: attach hw_frames_ctx: the frame has no hw_frames_ctx" in \
        run.choice.refused["copy"], run.choice.refused


def test_doctor_sees_the_va_stack(capsys):
    from zerocopy.doctor import VA_DRIVER

    node = dead_node_path()
    assert run_cli("doctor", "--json", *(["--va-device", node] if node else [])) == 0
    info = json.loads(capsys.readouterr().out)
    assert "vaapi" in info["pyav"]["hwdevices"]
    assert all(info["pyav"]["va_filters"].values())
    assert info["native_bridge"]["status"] == "ok", info["native_bridge"]
    assert all(check["ok"] for check in info["native_bridge"]["selftest"])
    copy = info["paths"]["copy"]
    nodes = info["render_nodes"]
    if nodes and not nodes[0]["va_display"]["ok"]:  # the dead node: the only reason left, and its one fix
        assert nodes[0]["path"] == node
        assert not copy["available"] and len(copy["reasons"]) == 1, copy
        assert copy["reasons"][0].startswith(f"cannot open the VA device {node}: No VA display"), copy
        assert copy["fix"] == VA_DRIVER, copy
    assert info["best"]["path"] == "software" and info["best"]["device"] == "CPU", info["best"]


def test_the_bridge_loads_next_to_opencvs_own_ffmpeg():
    """OpenCV's wheel bundles a private libavcodec/libavutil: not a second copy of PyAV's, so no refusal."""
    import subprocess
    import sys

    code = ("import cv2, av\nfrom zerocopy.bridge import bridge_status\n"
            "from zerocopy.bridge.loader import loaded_library_files\n"
            "print(bridge_status()[1]); print(len(loaded_library_files('libavutil')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    status, copies = proc.stdout.split()
    assert status == "ok" and copies == "1", proc.stdout


def test_a_cropped_va_frame_goes_through_pyavs_graph_with_its_surface_and_crop(bridge):
    """As far as no driver allows: a real (never initialised) VA-API frames context, a region of its frame
    pushed by the bridge into a PyAV buffer source, and PyAV's sink hands back a VA-API frame of the same
    surface whose crop fields are the region (what scale_vaapi reads as its source rectangle)."""
    from zerocopy.bridge import filter_context_pointer
    from zerocopy.bridge.selftest import DISPLAY, SURFACE

    ffi, lib = bridge.ffi, bridge.lib
    frame = lib.zcva_selftest_frame(ffi.cast("void *", DISPLAY), SURFACE, 64, 48)
    assert frame != ffi.NULL
    try:
        graph = av.filter.Graph()
        src = graph.add_buffer(width=64, height=48, format="nv12", time_base=1 / 25)
        sink = graph.add("buffersink")
        src.link_to(sink)
        ctx = ffi.cast("AVFilterContext *", filter_context_pointer(src))
        assert lib.zcva_attach_hw_frames(ctx, frame) == 0
        graph.configure()
        averror = ffi.new("int *")
        assert lib.zcva_buffersrc_push_region(ctx, frame, 16, 8, 8, 4, averror) == 0
        out = sink.pull()
        assert out.format.name == "vaapi" and (out.width, out.height) == (64, 48)
        assert bridge.surface_id(out) == SURFACE and bridge.crop_fields(out) == (16, 8, 8, 4)
        ident = ffi.new("uintptr_t *")
        assert lib.zcva_frames_context_id(frame, ident) == 0 and bridge.frames_context_id(out) == ident[0]
        with pytest.raises(BridgeUnavailable, match="not inside the frame's picture"):
            bridge.push_region(src, out, (40, 0, 8, 0))  # 48 of the 48 columns the region shows
        del out, src, sink, graph
    finally:
        lib.zcva_selftest_frame_free(frame)


@pytest.mark.parametrize("crop", [(300, 100, 120, 120), (0, 100, 70, 120), (600, 0, 40, 360)])
def test_the_real_filters_take_a_regions_arguments(crop):
    """scale_vaapi / pad_vaapi / hwdownload parse the chain made for a region (quantised letterbox)."""
    from zerocopy.resize.crops import Crop
    from zerocopy.resize.vaapi import graph_chain
    from zerocopy.resize.vaapi_roi import roi_geometry

    g = roi_geometry(Crop(*crop), 192, 192, "letterbox")
    for download in (False, True):
        graph = av.filter.Graph()
        for name, args in graph_chain(g, download):
            graph.add(name, args) if args else graph.add(name)


@pytest.mark.parametrize(("width", "height", "rows"), [(1920, 1080, 1), (1920, 1080, 2), (1280, 720, 3)])
def test_the_real_filters_take_every_tiles_arguments(width, height, rows):
    """`--tiles` on the VA paths: each tile of a frame is a region scaled to the detector's input (stretched,
    as `objects` is): the chain made for it parses in the real scale_vaapi / hwdownload."""
    from zerocopy.resize.vaapi import graph_chain
    from zerocopy.resize.vaapi_roi import roi_geometry
    from zerocopy.roi.tiles import tile_crops

    for tile in tile_crops(width, height, rows):
        g = roi_geometry(tile, 300, 300, "stretch")
        for download in (False, True):
            graph = av.filter.Graph()
            for name, args in graph_chain(g, download):
                graph.add(name, args) if args else graph.add(name)


def test_auto_with_a_region_model_falls_back_to_software_with_the_va_reasons(dead_node, clips):
    """`classify=["face-mesh"]` on the VA stack with a dead node: the VA paths are refused for their own
    reasons before any region is cropped, the run ends on software with keypoints on the faces."""
    from zerocopy.api import Detector

    node, _ = dead_node
    clip, truth = clips("vastack-mesh.mp4", ClipSpec(frames=12))
    with Detector(path="auto", classify=["face-mesh"], va_device=node) as det:
        results = list(det.run(clip))
    assert det.path == "software" and len(results) == len(truth)
    assert f"cannot open the VA device {node}" in det.refused["copy"], det.refused
    assert "OpenVINO sees no GPU" in det.refused["zero-copy"], det.refused
    faces = [r.detections for r in results if len(r.detections)]
    assert faces and all(k is not None and k.shape == (468, 2) for d in faces for k in d.keypoints)
