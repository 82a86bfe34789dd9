"""zerocopy.record.clip: a clip remuxed from the ring without decoding: it starts at a keyframe within pre_s + one
GOP before the first sighting, has its index first, decodes whole, lasts what it should, seeks, never spans a
gap, and is never left half-written under its name."""

from __future__ import annotations

import pytest
from recordings import FPS, GOP, fill_ring, gop_spec, read_clip, seek_and_decode

from zerocopy.record.clip import write_clip
from zerocopy.record.ring import NoFootage, PacketRing
from zerocopy.sinks.files import Staged, temporary

T0 = 1_800_000_000.0  # the first packet's arrival (Unix time)
GOP_S = GOP / FPS


@pytest.fixture(scope="module", params=["mpegts", "mp4"])
def source(request, clips):
    """3 s of H.264 at 30 fps with B-frames and a keyframe every second: from MPEG-TS (Annex B, as cameras send it)
    and from MP4 (length-prefixed, its parameter sets apart: turned into Annex B on reading)."""
    return clips(f"record-gop.{'ts' if request.param == 'mpegts' else 'mp4'}", gop_spec(3.0), request.param)[0]


def test_a_clip_starts_at_a_keyframe_within_pre_capture_and_a_gop_before_the_first_sighting(source, tmp_path):
    ring = PacketRing(10**8)
    fill_ring(ring, source, T0)
    first_seen, last_seen, pre, post = T0 + 1.6, T0 + 2.0, 0.5, 0.5
    result = write_clip(ring, first_seen, last_seen, pre, post, tmp_path / "ev.mp4")
    # the keyframe at or before first_seen - pre: the clip starts no later than pre, no earlier than pre + a GOP
    assert first_seen - pre - GOP_S - 1e-6 <= result.first_wall <= first_seen - pre
    assert result.last_wall <= last_seen + post
    assert not (result.cut_at_gap or result.late_start or result.early_end)
    clip = read_clip(result.path)
    assert clip["boxes"].index("moov") < clip["boxes"].index("mdat")  # the index first: a browser plays as it loads
    assert clip["frames"] == result.packets  # every packet decodes, nothing is missing at the start
    assert clip["first"] == 0.0  # rebased: the first picture at 0
    assert clip["duration"] == pytest.approx(result.seconds, abs=1.5 / FPS)
    assert result.seconds == pytest.approx(result.packets / FPS, abs=1e-3)
    assert clip["size"] == (192, 108)
    assert result.bytes == result.path.stat().st_size


def test_a_clip_is_seekable(source, tmp_path):
    ring = PacketRing(10**8)
    fill_ring(ring, source, T0)
    result = write_clip(ring, T0 + 0.5, T0 + 2.5, 0.5, 0.5, tmp_path / "ev.mp4")
    assert result.seconds == pytest.approx(3.0, abs=1e-3)
    assert seek_and_decode(result.path, 2.1) == pytest.approx(2.0)  # the keyframe before 2.1 s
    assert seek_and_decode(result.path, 1.0) == pytest.approx(1.0)


def test_a_clip_is_cut_at_a_gap_never_padded_across_it(source, tmp_path):
    ring = PacketRing(10**8)
    fill_ring(ring, source, T0)  # T0 … T0 + 3
    fill_ring(ring, source, T0 + 5.0)  # reconnected: T0 + 5 … T0 + 8, a new segment
    result = write_clip(ring, T0 + 2.0, T0 + 6.0, 0.5, 0.5, tmp_path / "ev.mp4")
    assert result.cut_at_gap
    assert result.first_wall == pytest.approx(T0 + 1.0) and result.last_wall < T0 + 3.0
    clip = read_clip(result.path)
    assert clip["frames"] == result.packets == 60  # 1 s … 3 s of the first segment, nothing of the second
    assert clip["duration"] == pytest.approx(2.0, abs=1.5 / FPS)


def test_nothing_recorded_then_is_an_error_and_leaves_no_file(tmp_path):
    ring = PacketRing(10**8)
    with pytest.raises(NoFootage):
        write_clip(ring, T0, T0 + 1, 5.0, 5.0, tmp_path / "ev.mp4")
    assert list(tmp_path.iterdir()) == []


def test_a_clip_being_written_is_never_under_its_own_name(source, tmp_path, monkeypatch):
    """FFmpeg writes the temporary; the clip's name appears only once it is whole (a rename)."""
    ring = PacketRing(10**8)
    fill_ring(ring, source, T0)
    target = tmp_path / "ev.mp4"
    seen = []
    real_finish = Staged.finish

    def finish(self, keep):
        seen.append((keep, target.exists(), read_clip(temporary(target))["frames"]))  # whole, under its temporary
        return real_finish(self, keep)

    monkeypatch.setattr(Staged, "finish", finish)
    result = write_clip(ring, T0 + 1.0, T0 + 1.5, 0.0, 0.0, target)
    assert seen == [(True, False, result.packets)]
    assert target.exists() and not temporary(target).exists()
