"""Every decoder class has every member of the `VideoDecoder` contract (no model needed); what they
yield (`Decoded`)."""

import dataclasses

import pytest

from zerocopy.decode.base import Decoded, VideoDecoder
from zerocopy.decode.live import Paced
from zerocopy.decode.opencv import OpenCVDecoder
from zerocopy.decode.pyav import PyAVDecoder
from zerocopy.samples import ClipSpec

MEMBERS = ("rate", "expected_frames", "damage", "live", "realtime", "frames_ready", "frames", "interrupt", "close")
METHODS = ("frames", "interrupt", "close")


@pytest.fixture(scope="module")
def clip(clips):
    return clips("contract-tiny.mp4", ClipSpec(width=64, height=48, frames=10, fps=25, face=None))[0]


DECODERS = {
    "pyav": PyAVDecoder,
    "pyav-on-cpu": lambda path: PyAVDecoder.on_cpu(path, 1),
    "opencv": OpenCVDecoder,
    "paced-opencv": lambda path: Paced(OpenCVDecoder(path)),
}


def test_decoded_is_a_record_read_by_name():
    decoded = Decoded("picture", 1.5, 0.04, 12.0)
    assert (decoded.frame, decoded.decode_ms, decoded.pts, decoded.arrived) == ("picture", 1.5, 0.04, 12.0)
    assert "arrived=12.0" in repr(decoded)  # a field, no longer hidden
    assert Decoded("picture", 1.5, None).arrived is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        decoded.arrived = 13.0  # type: ignore[misc]


def test_the_member_list_is_the_protocols():
    declared = set(VideoDecoder.__annotations__) | {name for name in vars(VideoDecoder) if name in METHODS}
    assert declared == set(MEMBERS)


@pytest.mark.parametrize("make", DECODERS.values(), ids=DECODERS.keys())
def test_each_decoder_has_every_member_of_the_contract(clip, make):
    decoder = make(clip)
    try:
        missing = [name for name in MEMBERS if not hasattr(decoder, name)]
        assert not missing
        assert isinstance(decoder, VideoDecoder)
        assert all(callable(getattr(decoder, name)) for name in METHODS)
        assert decoder.rate == 25.0 and isinstance(decoder.live, bool) and isinstance(decoder.realtime, bool)
        assert not decoder.live and isinstance(decoder.frames_ready, int)
        first = next(iter(decoder.frames()))
        assert isinstance(first, Decoded) and first.decode_ms >= 0
    finally:
        decoder.close()
    assert decoder.damage.packets_failed == 0


@pytest.mark.parametrize("make", DECODERS.values(), ids=DECODERS.keys())
def test_interrupt_ends_the_iteration_early(clip, make):
    decoder = make(clip)
    try:
        frames = decoder.frames()
        next(frames)
        decoder.interrupt()
        assert len(list(frames)) < 9
    finally:
        decoder.close()
