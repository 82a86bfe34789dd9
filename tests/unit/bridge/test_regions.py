"""Bridge.push_region / crop_fields on PyAV's own frames and graphs: a region is a new reference with its crop
fields set, the frame it came from untouched. Needs the bridge loaded next to PyAV (the VA stack root, where
`make test-va-stack` runs this); here the same C is checked by the self-test (tests/native/test_bridge.py)."""

from fractions import Fraction

import av
import av.filter
import numpy as np
import pytest

from zerocopy.bridge import BridgeUnavailable, bridge_status

pytestmark = pytest.mark.native


@pytest.fixture(scope="module")
def bridge():
    b, why = bridge_status()
    if b is None:
        pytest.skip(reason=f"needs the bridge next to PyAV (the VA stack root: make test-va-stack): {why}")
    return b


def _graph(w: int, h: int, fmt: str):
    graph = av.filter.Graph()
    src = graph.add_buffer(width=w, height=h, format=fmt, time_base=Fraction(1, 25))
    sink = graph.add("buffersink")
    src.link_to(sink)
    graph.configure()
    return graph, src, sink


@pytest.mark.parametrize("fmt", ["yuv420p", "nv12"])
def test_a_region_reaches_the_sink_as_the_same_picture_with_its_crop_fields(bridge, fmt):
    frame = av.VideoFrame.from_ndarray(np.random.default_rng(1).integers(0, 255, (48, 64), np.uint8), format="gray")
    frame = frame.reformat(format=fmt)
    graph, src, sink = _graph(64, 48, fmt)
    bridge.push_region(src, frame, (8, 6, 16, 10))
    out = sink.pull()
    assert bridge.crop_fields(out) == (8, 6, 16, 10)
    assert (out.width, out.height) == (64, 48)  # nothing on the way applied the crop
    assert out.planes[0].buffer_ptr == frame.planes[0].buffer_ptr  # a reference, not a copy
    assert bridge.crop_fields(frame) == (0, 0, 0, 0)  # the frame itself is untouched
    bridge.push_region(src, out, (2, 4, 6, 8))  # a region of a region: added to its crop
    assert bridge.crop_fields(sink.pull()) == (10, 10, 22, 18)


def test_regions_outside_the_picture_are_refused_and_nothing_is_queued(bridge):
    frame = av.VideoFrame(64, 48, "yuv420p")
    graph, src, sink = _graph(64, 48, "yuv420p")
    for fields in ((40, 0, 24, 0), (0, 0, 64, 0), (0, 48, 0, 0)):
        with pytest.raises(BridgeUnavailable, match="push a region: the region is empty or not inside"):
            bridge.push_region(src, frame, fields)
    with pytest.raises((av.BlockingIOError, av.EOFError)):
        sink.pull()
    with pytest.raises(BridgeUnavailable, match="frames context: not a VA-API frame"):
        bridge.frames_context_id(frame)


def test_a_frame_the_buffer_source_refuses_is_reported_with_ffmpegs_words(bridge):
    graph, src, sink = _graph(64, 48, "yuv420p")
    src.push(None)  # end of stream: the buffer source takes no more frames
    words = r"push a region \((End of file|Invalid argument)\): FFmpeg refused the frame"  # 9.0 says EOF
    with pytest.raises(BridgeUnavailable, match=words):
        bridge.push_region(src, av.VideoFrame(64, 48, "yuv420p"), (0, 0, 32, 24))
