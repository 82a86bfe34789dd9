"""zerocopy.decode.first_frame: a stream nothing decodes is given up on; one that starts mid-GOP is not."""

from __future__ import annotations

from types import SimpleNamespace

import av
import pytest

from zerocopy.decode.first_frame import FirstFrameWatch, NothingDecodes

KEY, OTHER = SimpleNamespace(is_keyframe=True), SimpleNamespace(is_keyframe=False)
ERROR = av.error.InvalidDataError(1094995529, "Invalid data found when processing input")


def _fail(watch: FirstFrameWatch, packet) -> None:
    watch.read(packet)
    try:
        raise ERROR
    except av.FFmpegError as e:
        watch.failed(e)
    watch.gave([])


def _decode(watch: FirstFrameWatch, packet, frames: list) -> None:
    watch.read(packet)
    watch.decoded()
    watch.gave(frames)


def test_failures_count_from_the_first_keyframe_on():
    watch = FirstFrameWatch(4)
    for _ in range(30):  # before the first keyframe (under 10 × the limit): nothing counts
        _fail(watch, OTHER)
    for _ in range(3):
        _fail(watch, KEY if _ == 0 else OTHER)
    with pytest.raises(NothingDecodes, match="4 packets in a row from a keyframe on failed.*invalid data"):
        _fail(watch, OTHER)


def test_a_frame_or_a_packet_that_decodes_resets_or_ends_the_watch():
    watch = FirstFrameWatch(4)
    for _ in range(3):
        _fail(watch, KEY)
    _decode(watch, OTHER, [])  # no error: the failures in a row start over
    for _ in range(3):
        _fail(watch, OTHER)
    _decode(watch, OTHER, ["frame"])
    assert watch.decoded_any
    for _ in range(50):  # a frame came out: failures no longer mean the decoder cannot decode the codec
        _fail(watch, OTHER)


def test_packets_that_give_no_frame_and_no_error_give_up_after_four_times_the_limit():
    watch = FirstFrameWatch(4)
    for _ in range(15):
        _decode(watch, KEY, [])
    with pytest.raises(NothingDecodes, match="16 packets from a keyframe on gave no frame"):
        _decode(watch, OTHER, [])


def test_a_demuxer_that_flags_no_keyframe_is_counted_after_ten_times_the_limit():
    watch = FirstFrameWatch(2)
    for _ in range(20):
        _fail(watch, OTHER)
    _fail(watch, OTHER)  # the 21st: past 10 × the limit, it counts
    with pytest.raises(NothingDecodes, match="2 packets in a row"):
        _fail(watch, None)  # a read that failed is decoded as a flush: it counts as well


def test_without_a_limit_it_never_gives_up():
    watch = FirstFrameWatch(0)
    for _ in range(200):
        _fail(watch, KEY)
        _decode(watch, OTHER, [])
    assert not watch.decoded_any
