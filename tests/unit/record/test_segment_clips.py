"""zerocopy.record.segment_clips: an event's clip made from a camera's segments (a real ring written to real segment
files, indexed in a real store): from the keyframe at or before `pre_capture`, across two segments, every picture
decoding, the segments it read busy only while it did; and a time no segment holds."""

from __future__ import annotations

import time

import pytest
from conftest import wait_until
from recordings import FPS, fill_ring, make_gop_clip, read_clip

from zerocopy.record.ring import NoFootage, PacketRing
from zerocopy.record.segment_clips import SegmentClips
from zerocopy.record.segments import SegmentWriter
from zerocopy.store.storage import Storage


@pytest.fixture
def storage(tmp_path):
    storage = Storage(tmp_path / "store", max_bytes=10**9, max_days=1e6, say=lambda line: None)
    yield storage
    storage.close()


def recorded(storage, clip, t0):
    """`clip` written in 3 s segments through a SegmentWriter whose rows `SegmentClips` keeps."""
    ring = PacketRing(64 * 2**20)
    clips = SegmentClips(storage.folder, storage.index.put)
    writer = SegmentWriter(ring, storage.folder, "gate", lambda line: None, index=clips.index, segment_s=3.0,
                           min_free_bytes=0)
    clips.writer = writer
    writer.start()
    fill_ring(ring, clip, t0)
    return clips, writer


def test_a_clip_from_the_segments_starts_at_a_keyframe_and_runs_across_two_of_them(storage, tmp_path):
    t0 = time.time() - 60
    clips, writer = recorded(storage, make_gop_clip(tmp_path / "a.ts", seconds=8), t0)
    wait_until(lambda: clips.through() >= t0 + 6.5, what="6.5 s of segments on disk")
    result = clips.write(t0 + 2.5, t0 + 4.2, 1.0, 1.0, tmp_path / "ev.mp4")
    assert writer.close(5.0)
    assert result.path == tmp_path / "ev.mp4" and result.bytes == result.path.stat().st_size
    assert result.first_wall == pytest.approx(t0 + 1.0, abs=1e-3)  # the keyframe at or before 2.5 - 1.0
    assert result.last_wall == pytest.approx(t0 + 5.2, abs=1.5 / FPS)  # the last picture at or before 4.2 + 1.0
    assert not (result.cut_at_gap or result.late_start or result.early_end)
    clip = read_clip(result.path)
    assert clip["frames"] == result.packets == round(4.2 * FPS) + 1
    assert clip["boxes"].index("moov") < clip["boxes"].index("mdat")
    assert clip["duration"] == pytest.approx(result.seconds, abs=1.5 / FPS)
    assert clips.busy_paths() == set() and list(tmp_path.glob("*ev.mp4*")) == [result.path]


def test_a_time_no_segment_holds_is_no_footage_and_leaves_nothing(storage, tmp_path):
    t0 = time.time() - 60
    clips, writer = recorded(storage, make_gop_clip(tmp_path / "a.ts", seconds=2), t0)
    wait_until(lambda: clips.through() >= t0 + 1.0, what="a second of segments on disk")
    assert writer.close(5.0)
    with pytest.raises(NoFootage):
        clips.write(t0 + 100, t0 + 101, 1.0, 1.0, tmp_path / "ev.mp4")
    assert list(tmp_path.glob("ev.mp4*")) == [] and clips.busy_paths() == set()
