"""zerocopy.record.ring: eviction by bytes, segments (a reconnection, a clock that jumps), the window of a clip
(from a keyframe, never across a gap), and a reader beside a writer."""

from __future__ import annotations

import threading
from fractions import Fraction

import pytest

from zerocopy.record.ring import PACKET_OVERHEAD, NoFootage, PacketRing, StreamParams

PARAMS = StreamParams(codec="h264", width=1920, height=1080, time_base=Fraction(1, 90000), rate=Fraction(25))
TICKS = 3600  # one frame at 25 fps in 1/90000


def feed(ring: PacketRing, t0: float, frames: int, gop: int = 25, size: int = 1000, start: int = 0,
         segment: bool = True) -> None:
    """`frames` packets at 25 fps arriving from `t0` (wall time = t0 + their time), a keyframe every `gop`."""
    if segment:
        ring.new_segment(PARAMS)
    for i in range(frames):
        ring.add(data=bytes([i % 256]) * size, pts=(start + i) * TICKS, dts=(start + i) * TICKS,
                 keyframe=(start + i) % gop == 0, duration=TICKS, wall=t0 + i / 25)


def test_the_oldest_packets_go_first_to_stay_under_the_bound():
    ring = PacketRing(max_bytes=10 * (1000 + PACKET_OVERHEAD))
    feed(ring, 100.0, 50, gop=5)
    stats = ring.stats()
    assert stats["packets"] == 10 and stats["bytes"] <= ring.max_bytes
    assert stats["seconds"] == pytest.approx(9 / 25)
    window = ring.window(101.0, 101.9, 0.0, 0.0)  # only the newest 10 packets are left: frames 40 to 49
    assert window.packets[0].wall == pytest.approx(100 + 40 / 25)  # the oldest keyframe left
    assert window.late_start and not window.cut_at_gap  # the start asked for (frame 25) is gone


def test_the_parameters_of_segments_gone_are_forgotten():
    """A camera that reconnects for months keeps no more than the segments its ring holds."""
    ring = PacketRing(max_bytes=10 * (1000 + PACKET_OVERHEAD))
    for n in range(100):
        ring.new_segment(PARAMS)  # an opening that gave no packet
        feed(ring, 100.0 + n * 20, 5)
    assert len(ring._params) <= 3 and ring.params() == PARAMS


def test_a_clip_starts_at_the_keyframe_at_or_before_the_time_asked_for():
    ring = PacketRing(max_bytes=10**7)
    feed(ring, 100.0, 250)  # 10 s, a keyframe every second
    window = ring.window(first_seen=105.5, last_seen=106.0, pre_s=2.0, post_s=1.0)
    first, last = window.packets[0], window.packets[-1]
    assert first.keyframe and first.wall == pytest.approx(103.0)  # 105.5 - 2 = 103.5 → the keyframe at 103
    assert last.wall == pytest.approx(107.0)  # the last packet at or before 106 + 1
    assert not (window.cut_at_gap or window.late_start or window.early_end)
    assert window.params == PARAMS


def test_a_clip_never_spans_a_gap_it_is_cut_there():
    ring = PacketRing(max_bytes=10**7)
    feed(ring, 100.0, 100)  # 100.0 … 103.96
    feed(ring, 106.0, 100, start=500)  # reconnected after 2 s without packets: a new segment
    window = ring.window(first_seen=103.0, last_seen=107.0, pre_s=1.0, post_s=1.0)
    assert {p.segment for p in window.packets} == {window.packets[0].segment}
    assert window.packets[0].wall == pytest.approx(102.0) and window.packets[-1].wall == pytest.approx(103.96)
    assert window.cut_at_gap and not window.early_end
    # an object first seen in the gap: the clip starts at the next segment's first keyframe, said cut at the gap
    later = ring.window(first_seen=105.0, last_seen=107.0, pre_s=1.0, post_s=1.0)
    assert later.packets[0].wall == pytest.approx(106.0) and later.cut_at_gap


def test_a_clock_that_goes_back_or_leaps_starts_a_new_segment():
    ring = PacketRing(max_bytes=10**7)
    feed(ring, 100.0, 50)
    ring.add(data=b"x", pts=0, dts=0, keyframe=True, duration=TICKS, wall=102.0)  # the camera's clock restarted
    ring.add(data=b"x", pts=10**9, dts=10**9, keyframe=True, duration=TICKS, wall=102.04)  # three hours ahead
    assert ring.breaks == 2 and ring.stats()["segments"] == 3
    window = ring.window(101.0, 101.9, 0.5, 0.5)
    assert window.cut_at_gap and window.packets[-1].wall == pytest.approx(100 + 49 / 25)


def test_a_timestamp_slightly_out_of_order_is_nudged_to_keep_decoding_times_increasing():
    ring = PacketRing(max_bytes=10**7)
    feed(ring, 100.0, 3)
    ring.add(data=b"x", pts=None, dts=2 * TICKS, keyframe=False, duration=TICKS, wall=100.12)  # a repeat
    window = ring.window(100.0, 100.12, 0.0, 0.0)
    assert [p.dts for p in window.packets] == [0, TICKS, 2 * TICKS, 2 * TICKS + 1]
    assert ring.breaks == 0


def test_nothing_of_that_time_is_no_footage():
    ring = PacketRing(max_bytes=10**7)
    with pytest.raises(NoFootage):
        ring.window(100.0, 101.0, 5.0, 5.0)
    feed(ring, 100.0, 10, gop=1000, start=1)  # no keyframe at all (joined mid-GOP)
    with pytest.raises(NoFootage, match="no keyframe"):
        ring.window(100.0, 100.3, 0.0, 0.0)
    with pytest.raises(NoFootage):
        ring.window(200.0, 201.0, 1.0, 1.0)


def test_a_clip_asked_before_the_stream_reached_its_end_says_so():
    ring = PacketRing(max_bytes=10**7)
    feed(ring, 100.0, 50)  # to 101.96, still going on
    window = ring.window(101.0, 101.5, 1.0, 1.0)
    assert window.early_end and not window.cut_at_gap
    ring.end_segment()  # then it dropped: what was asked for past its end is cut at that gap
    assert ring.window(101.0, 101.5, 1.0, 1.0).cut_at_gap


def test_packets_need_an_open_segment_and_a_size():
    with pytest.raises(ValueError):
        PacketRing(0)
    ring = PacketRing(1000)
    with pytest.raises(RuntimeError, match="new_segment"):
        ring.add(data=b"x", pts=0, dts=0, keyframe=True, duration=1, wall=1.0)


def test_waiting_for_the_ring_to_reach_a_time():
    ring = PacketRing(max_bytes=10**7)
    assert not ring.wait_until(lambda newest, going_on: newest is not None, timeout=0.01)
    feeder = threading.Thread(target=feed, args=(ring, 100.0, 50))
    feeder.start()
    assert ring.wait_until(lambda newest, going_on: newest is not None and newest >= 101.0 and going_on, timeout=30)
    feeder.join()


def test_windows_read_while_packets_come_and_go():
    ring = PacketRing(max_bytes=200 * (100 + PACKET_OVERHEAD))
    errors: list[BaseException] = []

    def write() -> None:
        for n in range(20):
            feed(ring, 100.0 + n * 4, 100, size=100, start=n * 1000)

    def read() -> None:
        try:
            while writer.is_alive():
                try:
                    window = ring.window(150.0, 151.0, 1.0, 1.0)
                except NoFootage:
                    continue
                assert window.packets[0].keyframe
                assert len({p.segment for p in window.packets}) == 1
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    writer = threading.Thread(target=write)
    reader = threading.Thread(target=read)
    writer.start()
    reader.start()
    writer.join()
    reader.join()
    assert errors == []
    assert ring.stats()["bytes"] <= ring.max_bytes


def test_a_follower_gets_every_packet_once_in_order_and_knows_what_it_lost():
    """Issue 38: continuous recording and live video follow the ring by a cursor; one too slow loses the evicted
    packets, says so, and goes on from the oldest held, never holding the reading thread back."""
    ring = PacketRing(max_bytes=10 * (1000 + PACKET_OVERHEAD))
    assert ring.follow(0, timeout=0.0).packets == []
    feed(ring, 100.0, 4)
    first = ring.follow(0, timeout=0.0)
    assert [p.pts // TICKS for p in first.packets] == [0, 1, 2, 3] and first.cursor == 4 and not first.lost
    feed(ring, 100.16, 3, start=4, segment=False)
    second = ring.follow(first.cursor, timeout=0.0)
    assert [p.pts // TICKS for p in second.packets] == [4, 5, 6] and not second.lost
    feed(ring, 100.28, 20, start=7, segment=False)  # 20 more: the ring holds the last 10 only
    behind = ring.follow(second.cursor, timeout=0.0)
    assert behind.lost and [p.pts // TICKS for p in behind.packets] == list(range(17, 27)) and behind.cursor == 27
    assert ring.params_of(behind.packets[0].segment) == PARAMS


def test_a_follower_waits_for_the_next_packet():
    ring = PacketRing(max_bytes=2**20)
    feed(ring, 100.0, 1)
    got: list = []
    reader = threading.Thread(target=lambda: got.append(ring.follow(1, timeout=30.0)))
    reader.start()
    feed(ring, 100.04, 1, start=1, segment=False)
    reader.join(30.0)
    assert [p.pts // TICKS for p in got[0].packets] == [1]
