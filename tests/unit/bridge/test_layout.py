"""zerocopy.bridge.layout: PyAV object layout, in-process, on real objects (no build)."""

import ctypes
from fractions import Fraction

import av
import av.filter
import numpy as np
import pytest

from zerocopy.bridge import (
    LayoutError,
    codec_context_pointer,
    filter_context_pointer,
    frame_pointer,
)
from zerocopy.bridge.layout import read_pointer
from zerocopy.bridge.loader import (
    loaded_library_files,
)

pytestmark = pytest.mark.native


def _graph():
    g = av.filter.Graph()
    src = g.add_buffer(width=64, height=48, format="yuv420p", time_base=Fraction(1, 25))
    scale = g.add("scale", "32:24")
    sink = g.add("buffersink")
    src.link_to(scale)
    scale.link_to(sink)
    g.configure()
    return g, src, scale, sink


def _pyav_libavcodec():
    """PyAV's own libavcodec (the copy already loaded), through ctypes: no headers needed."""
    files = loaded_library_files("libavcodec")
    assert len(files) == 1, files
    lib = ctypes.CDLL(files.pop())
    lib.avcodec_get_class.restype = ctypes.c_void_p
    lib.avcodec_is_open.argtypes = [ctypes.c_void_p]
    lib.avcodec_is_open.restype = ctypes.c_int
    return lib


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


def test_filter_context_pointer_is_validated_by_class_and_name():
    g, src, scale, sink = _graph()
    ptrs = {filter_context_pointer(c) for c in (src, scale, sink)}
    assert len(ptrs) == 3
    for offset in (8, 24, 32):
        with pytest.raises(LayoutError):
            filter_context_pointer(scale, offset=offset)
    with pytest.raises(LayoutError, match="FilterContext"):
        filter_context_pointer(g)


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
