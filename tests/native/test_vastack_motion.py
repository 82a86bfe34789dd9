"""The motion gate's VA branch (`zerocopy.motion.luma.VaapiLuma`) in the VA stack, as far as no driver allows: the
real filters take its chain at every size, and a real VA-API frame (the bridge's self-test frame, through PyAV's own
graph) gives its buffer source the frames context. Configuring `scale_vaapi` needs a driver: not run here (igpu).
Runs in the VA stack root (`make test-va-stack`) and on this machine's own system (`make test-gpu-host`)."""

from __future__ import annotations

import gc

import av
import av.codec.hwaccel
import av.filter
import pytest

from zerocopy.bridge import bridge_status, filter_context_pointer
from zerocopy.bridge.selftest import DISPLAY, SURFACE
from zerocopy.decode.pyav import PyAVDecoder
from zerocopy.errors import PathUnavailable
from zerocopy.motion.detector import luma_size
from zerocopy.motion.gate import MotionSpec
from zerocopy.motion.luma import VaapiLuma
from zerocopy.paths import PreparedStream
from zerocopy.paths.vaapi import prime
from zerocopy.refusals import Code
from zerocopy.resize.vaapi import link_chain
from zerocopy.samples import ClipSpec

VA_PYAV = "vaapi" in av.codec.hwaccel.hwdevices_available()
pytestmark = [pytest.mark.vastack, pytest.mark.native,
              pytest.mark.skipif(not VA_PYAV, reason="needs a PyAV built with VA-API (make setup-gpu; in CI: make "
                                 "test-gpu-host and make test-va-stack), as tests/native/test_vastack.py")]


@pytest.fixture(scope="module")
def bridge():
    """The native bridge, which must load next to a VA-API PyAV (its FFmpeg has headers)."""
    loaded, why = bridge_status()
    if loaded is None:
        pytest.fail(f"no bridge next to this VA-API PyAV: {why}")
    return loaded


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720), (640, 480), (1080, 1920), (3840, 2160), (64, 48)])
def test_the_real_filters_take_the_luma_chain(size):
    """scale_vaapi (to the luma size, NV12), hwdownload and format=nv12 parse our arguments (FFmpeg parses them
    when a filter is added)."""
    chain = VaapiLuma(None, "copy").chain(*size)
    assert [name for name, _ in chain] == ["scale_vaapi", "hwdownload", "format", "buffersink"]
    assert f"w={luma_size(*size)[0]}:h={luma_size(*size)[1]}" in chain[0][1]
    graph = av.filter.Graph()
    for name, args in chain:
        graph.add(name, args) if args else graph.add(name)


def va_frame(bridge, selftest_frame) -> av.VideoFrame:
    """A PyAV VA-API frame of the self-test surface: pushed by the bridge through a PyAV graph, pulled by PyAV."""
    graph = av.filter.Graph()
    src = graph.add_buffer(width=64, height=48, format="nv12", time_base=1 / 25)
    sink = link_chain(graph, src, [("buffersink", "")])
    ctx = bridge.ffi.cast("AVFilterContext *", filter_context_pointer(src))
    averror = bridge.ffi.new("int *")
    attached = bridge.lib.zcva_attach_hw_frames(ctx, selftest_frame)
    graph.configure()
    pushed = bridge.lib.zcva_buffersrc_push_region(ctx, selftest_frame, 0, 0, 0, 0, averror)  # the whole frame
    assert (attached, pushed) == (0, 0), averror[0]
    return sink.pull()


def test_the_luma_graph_takes_a_real_va_frame_up_to_the_driver(bridge):
    """Made from a real VA-API frame (a real, never initialised frames context): PyAV's buffer source created by
    `resize.vaapi.buffer_source` takes a reference on the frame's `hw_frames_ctx` through the bridge, the chain is
    linked to a buffersink, and freeing the graph gives the reference back."""
    ffi, lib = bridge.ffi, bridge.lib
    raw = lib.zcva_selftest_frame(ffi.cast("void *", DISPLAY), SURFACE, 64, 48)
    assert raw != ffi.NULL
    try:
        frame = va_frame(bridge, raw)
        assert frame.format.name == "vaapi" and bridge.surface_id(frame) == SURFACE
        before = lib.zcva_selftest_frames_refcount(raw)
        graph, src, sink = VaapiLuma(bridge, "copy").graph(frame)
        assert lib.zcva_selftest_frames_refcount(raw) == before + 1
        assert sink.filter.name == "buffersink"
        del graph, src, sink  # freeing PyAV's graph drops the buffer source's reference
        gc.collect()
        assert lib.zcva_selftest_frames_refcount(raw) == before
        del frame
    finally:
        lib.zcva_selftest_frame_free(raw)


def test_a_luma_graph_that_cannot_take_the_first_frame_refuses_the_path(bridge, clips):
    """The luma graph is the first VA stage a frame meets with --motion: the bridge refusing the frame (a software
    frame: no hw_frames_ctx) is the path's refusal on the first frame, as the model's scaler's would be."""

    clip, _ = clips("vastack-motion.mp4", ClipSpec(frames=8))
    never_prepared = []
    stream = PreparedStream(PyAVDecoder(clip), never_prepared.append,
                            motion=MotionSpec(luma=VaapiLuma(bridge, "copy")))
    with pytest.raises(PathUnavailable) as e:
        prime("copy", stream, clip)
    reason = e.value.reasons["copy"][0]
    assert reason.code is Code.VA_FIRST_FRAME and "the frame has no hw_frames_ctx" in reason, reason
    assert never_prepared == []
