"""zerocopy.record.segments: a camera's ring written to disk in segments that start on keyframes, each indexed in a
real store (rows that match the files), a break in the stream ending a file, and what detection saw in each."""

from __future__ import annotations

import time

import pytest
from conftest import wait_until
from recordings import FPS, fill_ring, make_gop_clip, read_clip

from zerocopy.record.activity import Activity
from zerocopy.record.ring import PacketRing
from zerocopy.record.segments import SegmentWriter, recordings_folder
from zerocopy.store.storage import Storage


@pytest.fixture
def storage(tmp_path):
    storage = Storage(tmp_path / "store", max_bytes=10**9, max_days=1e6, say=lambda line: None)
    yield storage
    storage.close()


class Burst:
    """A ring whose packets arrive no sooner than `until`: those before it come all at once, late, as after FFmpeg's
    probe at an opening."""

    def __init__(self, ring: PacketRing, until: float):
        self.ring, self.until = ring, until

    def new_segment(self, params):
        return self.ring.new_segment(params)

    def add(self, *, wall: float, **packet):
        self.ring.add(wall=max(wall, self.until), **packet)


def write(storage, clips, activity=None, segment_s=3.0, t0=None, burst_s=0.0):
    """Each of `clips` as a segment of a ring (one after the other in time), written through a SegmentWriter; the
    packets of each clip's first `burst_s` arrive together at its end."""
    ring = PacketRing(64 * 2**20)
    lines: list[str] = []
    writer = SegmentWriter(ring, storage.folder, "gate", lines.append, index=storage.index.put, activity=activity,
                           segment_s=segment_s, min_free_bytes=0)
    writer.start()
    t0 = time.time() - 60 if t0 is None else t0
    for i, clip in enumerate(clips):
        fill_ring(Burst(ring, t0 + 10 * i + burst_s), clip, t0 + 10 * i)
    wait_until(lambda: writer.segments >= 1 and ring.packets_added > 0, what="the first segment")
    assert writer.close(5.0)
    return storage.segments("gate"), lines, t0


def test_segments_cover_the_stream_from_keyframes_and_their_rows_match_the_files(storage, tmp_path):
    clip = make_gop_clip(tmp_path / "a.ts", seconds=8)
    rows, lines, t0 = write(storage, [clip])
    assert lines == []
    assert len(rows) == 3  # 3 s each, cut at the keyframe (every second) after: 3 + 3 + 2
    frames = 0
    for row in rows:
        path = storage.folder / row.path
        assert path.parent.parent == recordings_folder(storage.folder, "gate")
        assert path.stat().st_size == row.bytes and oct(path.stat().st_mode & 0o777) == "0o600"
        assert path.name == time.strftime("%H-%M-%S.mp4", time.gmtime(row.start))
        held = read_clip(path)
        assert held["boxes"][:2] == ["ftyp", "moov"] and "moof" in held["boxes"]  # fragmented, its index first
        frames += held["frames"]
        assert held["frames"] / FPS == pytest.approx(row.end - row.start, abs=1 / FPS)
    assert frames == 8 * FPS
    assert rows[0].start == pytest.approx(t0, abs=1e-6)
    for before, after in zip(rows, rows[1:], strict=False):
        assert after.start - before.end == pytest.approx(0, abs=1e-3)  # no gap, no overlap
    assert storage.segments("gate", after=rows[1].start + 0.5, before=rows[1].end - 0.5) == [rows[1]]
    assert storage.segments("other") == []


def test_a_late_burst_at_the_opening_does_not_set_the_segments_clock_ahead(storage, tmp_path):
    """The first 1.5 s of packets arrive together 1.5 s late (FFmpeg's probe), the rest as they are sent: the
    segments' times are the real arrivals', not 1.5 s ahead for the whole stream."""
    clip = make_gop_clip(tmp_path / "a.ts", seconds=8)
    rows, lines, t0 = write(storage, [clip], burst_s=1.5)
    assert lines == [] and len(rows) == 3
    assert rows[0].start == pytest.approx(t0, abs=1e-3)
    assert rows[-1].end == pytest.approx(t0 + 8, abs=1e-3)
    for before, after in zip(rows, rows[1:], strict=False):
        assert after.start - before.end == pytest.approx(0, abs=1e-3)


def test_a_break_in_the_stream_ends_the_file_and_motion_and_objects_are_indexed(storage, tmp_path):
    clip = make_gop_clip(tmp_path / "a.ts", seconds=2)
    activity = Activity()
    t0 = time.time() - 60
    activity.motion(True, t0 + 10.5)
    activity.motion(False, t0 + 11.0)
    activity.object("1", t0 + 10.2, t0 + 10.4)
    activity.object("2", t0 + 10.3, t0 + 11.5)
    rows, _, _ = write(storage, [clip, clip], activity=activity, segment_s=10.0, t0=t0)
    assert [round(r.end - r.start, 2) for r in rows] == [2.0, 2.0]  # one file per ring segment
    assert [(r.motion, r.objects) for r in rows] == [(False, 0), (True, 2)]
    assert all(read_clip(storage.folder / r.path)["frames"] == 2 * FPS for r in rows)
