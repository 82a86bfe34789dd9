"""zerocopy.record.export: a camera's segments (real files written by a SegmentWriter from a clip with a keyframe
every second and B-frames) exported as one MP4: cut at the keyframe at or before the start, ending with the last
picture at or before the end, across segments without a seam, stopped at a gap, nothing of the time refused."""

from __future__ import annotations

import time

import pytest
from conftest import wait_until
from recordings import FPS, GOP, fill_ring, make_gop_clip, read_clip

from zerocopy.record.export import write_export
from zerocopy.record.ring import NoFootage, PacketRing
from zerocopy.record.segments import SegmentWriter
from zerocopy.store.storage import Storage

KEYINT_S = GOP / FPS


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A storage with camera `gate` (8 s in segments of 3 s: 3 + 3 + 2) and camera `yard` (2 s, a 8 s gap, 2 s)."""
    folder = tmp_path_factory.mktemp("export")
    storage = Storage(folder / "store", max_bytes=10**9, max_days=1e6, say=lambda line: None)
    t0 = time.time() - 120
    for camera, clips, offsets in (("gate", [make_gop_clip(folder / "a.ts", seconds=8)], [0]),
                                   ("yard", [make_gop_clip(folder / "b.ts", seconds=2)] * 2, [0, 10])):
        ring = PacketRing(64 * 2**20)
        writer = SegmentWriter(ring, storage.folder, camera, lambda line: None, index=storage.index.put,
                               segment_s=3.0, min_free_bytes=0)
        writer.start()
        for clip, offset in zip(clips, offsets, strict=True):
            fill_ring(ring, clip, t0 + offset)
        wait_until(lambda w=writer, r=ring: w.segments >= 1 and r.packets_added > 0, what="the first segment")
        assert writer.close(5.0)
    yield storage, t0
    storage.close()


def export(storage, camera, start, end, path):
    return write_export(storage.files, storage.segments(camera, start, end), start, end, path)


def test_an_export_across_segments_starts_at_the_keyframe_before_and_lasts_what_was_asked(recorded, tmp_path):
    storage, t0 = recorded
    assert len(storage.segments("gate")) == 3
    start, end = t0 + 1.5, t0 + 5.5  # across the first segments' seam (t0 + 3)
    result = export(storage, "gate", start, end, tmp_path / "out.mp4")
    assert result.first_wall == pytest.approx(t0 + 1.0, abs=1e-3)  # the keyframe at or before the start
    assert end - start <= result.seconds <= end - start + KEYINT_S + 1 / FPS
    assert not (result.cut_at_gap or result.late_start or result.early_end)
    held = read_clip(tmp_path / "out.mp4")
    assert held["boxes"][:2] == ["ftyp", "moov"]  # its index first
    assert held["first"] == 0 and held["frames"] == round(result.seconds * FPS)  # every picture decodes, no seam
    assert held["last"] == pytest.approx(end - result.first_wall, abs=1.5 / FPS)  # the last shown at the end
    assert result.bytes == (tmp_path / "out.mp4").stat().st_size


def test_an_export_starting_on_a_keyframe_lasts_exactly_the_time(recorded, tmp_path):
    storage, t0 = recorded
    result = export(storage, "gate", t0 + 2.0, t0 + 8.0, tmp_path / "out.mp4")
    assert result.seconds == pytest.approx(6.0, abs=1.5 / FPS) and not result.early_end
    assert read_clip(tmp_path / "out.mp4")["frames"] == 6 * FPS


def test_an_export_stops_at_a_gap_and_says_so(recorded, tmp_path):
    storage, t0 = recorded
    result = export(storage, "yard", t0 + 0.5, t0 + 11.0, tmp_path / "out.mp4")
    assert result.cut_at_gap and result.early_end
    assert result.seconds == pytest.approx(2.0, abs=1.5 / FPS)  # the first side only, never padded
    assert read_clip(tmp_path / "out.mp4")["frames"] == 2 * FPS


def test_an_export_of_a_time_before_the_recording_starts_late_and_one_past_it_ends_early(recorded, tmp_path):
    storage, t0 = recorded
    result = export(storage, "gate", t0 - 5.0, t0 + 1.0, tmp_path / "late.mp4")
    assert result.late_start and result.first_wall == pytest.approx(t0, abs=1e-3)
    assert result.seconds == pytest.approx(1.0, abs=1.5 / FPS)
    result = export(storage, "gate", t0 + 7.0, t0 + 30.0, tmp_path / "early.mp4")
    assert result.early_end and not result.cut_at_gap
    assert result.seconds == pytest.approx(1.0, abs=1.5 / FPS)


def test_a_time_without_footage_is_refused(recorded, tmp_path):
    storage, t0 = recorded
    with pytest.raises(NoFootage, match="no footage"):
        export(storage, "gate", t0 + 100, t0 + 110, tmp_path / "none.mp4")
    with pytest.raises(NoFootage):  # a time within the gap
        export(storage, "yard", t0 + 4.0, t0 + 8.0, tmp_path / "none.mp4")
