"""zerocopy.paths: the VA stages' first frame."""

from fractions import Fraction

import pytest

from zerocopy.samples import ClipSpec


def _unconfigurable_graph(frame):
    """A real FFmpeg graph failure: a filter whose output is connected to nothing."""
    import av.filter

    graph = av.filter.Graph()
    src = graph.add_buffer(width=frame.width, height=frame.height, format=frame.format.name, time_base=Fraction(1, 25))
    scale = graph.add("scale", "w=64:h=64")
    src.link_to(scale)
    graph.configure()


def _wrong_layout(frame):
    from zerocopy.bridge import LayoutError

    raise LayoutError("AVFrame layout does not match PyAV's")


@pytest.mark.parametrize("prepare,expected", [(_wrong_layout, "failed on the first frame: AVFrame layout"),
                                              (_unconfigurable_graph, "failed on the first frame: ")])
def test_a_first_frame_the_va_stages_cannot_handle_is_a_refusal_not_a_crash(prepare, expected, clips):
    """`paths.vaapi.prime` turns what the bridge, the filter graph or the driver raise on the first frame into
    `PathUnavailable` (so `auto` moves on), and closes the input."""
    from zerocopy.decode.pyav import PyAVDecoder
    from zerocopy.errors import PathUnavailable
    from zerocopy.paths import PreparedStream
    from zerocopy.paths.vaapi import prime
    from zerocopy.refusals import Code

    path, _ = clips("h264.mp4", ClipSpec(frames=20))
    decoder = PyAVDecoder(path)
    stream = PreparedStream(decoder, prepare)
    with pytest.raises(PathUnavailable) as e:
        prime("zero-copy", stream, path)
    assert e.value.reasons["zero-copy"][0].code is Code.VA_FIRST_FRAME
    assert expected in e.value.reasons["zero-copy"][0]
    assert not decoder._log.active  # closed: FFmpeg's log is no longer captured
