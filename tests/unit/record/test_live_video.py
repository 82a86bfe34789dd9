"""zerocopy.record.live: a viewer's fragmented MP4 of the ring starts at its newest keyframe with an init segment
naming the codec, goes on as packets come (across a new segment of the same stream too) and decodes whole; a
stream that changed ends it; at most MAX_VIEWERS at once."""

from __future__ import annotations

import io
from dataclasses import replace

import av
import pytest
from recordings import FPS, fill_ring, gop_spec

from zerocopy.record import live
from zerocopy.record.live import LiveEnded, NoLive, codec_string, open_live
from zerocopy.record.ring import PacketRing

T0 = 1_800_000_000.0


@pytest.fixture(scope="module")
def source(clips):
    """3 s of H.264 at 30 fps with B-frames, a keyframe every second, as MPEG-TS."""
    return clips("record-gop.ts", gop_spec(3.0), "mpegts")[0]


def test_a_viewer_starts_at_the_newest_keyframe_and_follows_what_comes(source):
    whole = PacketRing(10**8)
    fill_ring(whole, source, T0)
    held = whole.follow(0, 0.0).packets
    ring = PacketRing(10**8)
    ring.new_segment(whole.params())
    half = len(held) // 2
    for p in held[:half]:
        ring.add(data=p.data, pts=p.pts, dts=p.dts, keyframe=p.keyframe, duration=p.duration, wall=p.wall)
    viewer = open_live(ring)
    try:
        newest_key = max(p.wall for p in held[:half] if p.keyframe)
        assert viewer.start_wall == newest_key and viewer.codec.startswith("avc1.")
        assert viewer.first[4:8] == b"ftyp" and b"moov" in viewer.first
        data = viewer.first
        assert viewer.read() == b""  # nothing new
        for p in held[half:]:
            ring.add(data=p.data, pts=p.pts, dts=p.dts, keyframe=p.keyframe, duration=p.duration, wall=p.wall)
            data += viewer.read()
    finally:
        viewer.close()
    with av.open(io.BytesIO(data)) as container:
        frames = list(container.decode(video=0))
    assert frames[0].key_frame
    kept_from = next(i for i, p in enumerate(held) if p.wall == newest_key)
    assert len(held) - kept_from - FPS <= len(frames) <= len(held) - kept_from  # all but the last fragment's


def test_a_new_segment_of_the_same_stream_goes_on_and_another_stream_ends_it(source):
    ring = PacketRing(10**8)
    fill_ring(ring, source, T0)
    viewer = open_live(ring)
    try:
        fill_ring(ring, source, T0 + 20.0)  # the same stream again (a reconnection): it goes on
        assert viewer.read()
        ring.new_segment(replace(ring.params(), width=64))  # another size: it ends
        ring.add(data=b"\0\0\0\1\x65", pts=0, dts=0, keyframe=True, duration=3000, wall=T0 + 40.0)
        with pytest.raises(LiveEnded, match="changed"):
            viewer.read()
    finally:
        viewer.close()
    assert live.VIEWERS.open == 0


def test_no_keyframe_or_too_many_viewers_is_said(source, monkeypatch):
    with pytest.raises(NoLive, match="sent nothing"):
        open_live(PacketRing(10**6))
    ring = PacketRing(10**8)
    fill_ring(ring, source, T0)
    monkeypatch.setattr(live, "VIEWERS", live._Viewers(1))
    first = open_live(ring)
    with pytest.raises(NoLive, match="watching already") as refused:
        open_live(ring)
    assert refused.value.retry_s == 10
    first.close()
    first.close()  # (once only)
    open_live(ring).close()
    assert live.VIEWERS.open == 0


def test_codec_strings_as_browsers_name_them():
    params = PacketRing(1).params()
    assert codec_string(b"....avcC\x01\x64\x00\x1f....", params) == "avc1.64001f"
    # Main profile, level 3.1 (93), main tier, progressive-source constraint: x265's usual
    hvcc = bytes([1, 0x01, 0x60, 0, 0, 0, 0x90, 0, 0, 0, 0, 0, 93])
    assert codec_string(b"..hvc1...." + b"hvcC" + hvcc, params) == "hvc1.1.6.L93.90"
    assert codec_string(b"....hev1" + b"hvcC" + hvcc, params) == "hev1.1.6.L93.90"
