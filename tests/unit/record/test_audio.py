"""zerocopy.record.audio: a camera's AAC kept beside its video (MPEG-TS's ADTS frames, their header taken off and
their AudioSpecificConfig given to the MP4): in the ring's clips, in segments and in exports made from them, each
audio stream decoding and lasting as the pictures do; the config read off an ADTS header as FFmpeg reads it back."""

from __future__ import annotations

import time

import av
import pytest
from conftest import wait_until
from recordings import fill_ring, make_gop_clip, read_audio, read_clip, with_audio

from zerocopy.record.audio import config_of
from zerocopy.record.clip import write_clip
from zerocopy.record.export import write_export
from zerocopy.record.ring import PacketRing
from zerocopy.record.segments import SegmentWriter
from zerocopy.store.storage import Storage

FRAME_S = 1024 / 16000  # an AAC frame at 16 kHz


@pytest.fixture(scope="module")
def aac_clip(tmp_path_factory):
    folder = tmp_path_factory.mktemp("audio")
    return with_audio(make_gop_clip(folder / "v.ts", seconds=8), folder / "va.ts")


def lasts_as_the_pictures(path, gaps: int = 0) -> dict:
    """The audio of `path` decodes and lasts as its pictures, short by at most an AAC frame at each end and at each
    of `gaps` segment joins (a frame across a segment's first keyframe goes to neither side)."""
    pictures, sound = read_clip(path), read_audio(path)
    assert sound is not None and sound["codec"] == "aac", path
    assert sound["first"] <= pictures["first"] + 2 * FRAME_S
    assert pictures["duration"] - (2 + 2 * gaps) * FRAME_S <= sound["seconds"] <= pictures["duration"] + FRAME_S
    return sound


def test_the_config_read_off_an_adts_header_is_the_one_ffmpeg_reads_back(aac_clip, tmp_path):
    with av.open(str(aac_clip)) as container:
        header = bytes(next(p for p in container.demux(container.streams.audio[0]) if p.size))[:7]
    ring = PacketRing(64 * 2**20)
    fill_ring(ring, aac_clip, 1.8e9)
    result = write_clip(ring, 1.8e9 + 1, 1.8e9 + 2, 0.5, 0.5, tmp_path / "ev.mp4")
    with av.open(str(result.path)) as container:
        assert container.streams.audio[0].codec_context.extradata == config_of(header) == b"\x14\x08"


def test_a_clip_cut_from_the_ring_keeps_the_audio(aac_clip, tmp_path):
    ring = PacketRing(64 * 2**20)
    fill_ring(ring, aac_clip, 1.8e9)
    assert ring.params().audio is not None and ring.params().audio.codec == "aac"
    assert all(not p.audio for p in ring.follow(0, 0.0).packets)  # live video and its like: the video alone
    result = write_clip(ring, 1.8e9 + 2.5, 1.8e9 + 4.2, 1.0, 1.0, tmp_path / "ev.mp4")
    assert read_clip(result.path)["frames"] == result.packets
    lasts_as_the_pictures(result.path)


def test_segments_and_an_export_across_them_keep_the_audio(aac_clip, tmp_path):
    storage = Storage(tmp_path / "store", max_bytes=10**9, max_days=1e6, say=lambda line: None)
    try:
        ring = PacketRing(64 * 2**20)
        writer = SegmentWriter(ring, storage.folder, "gate", lambda line: None, index=storage.index.put,
                               segment_s=3.0, min_free_bytes=0)
        writer.start()
        t0 = time.time() - 60
        fill_ring(ring, aac_clip, t0)
        wait_until(lambda: writer.written_through >= t0 + 6.0, what="two segments on disk")
        assert writer.close(5.0)
        rows = storage.segments("gate")
        assert len(rows) == 3
        for row in rows:
            assert read_clip(storage.folder / row.path)["boxes"][:2] == ["ftyp", "moov"]
            lasts_as_the_pictures(storage.folder / row.path)
        result = write_export(storage.files, rows, t0 + 1.5, t0 + 7.2, tmp_path / "export.mp4")
    finally:
        storage.close()
    assert not (result.cut_at_gap or result.late_start or result.early_end)
    assert read_clip(result.path)["frames"] == result.packets
    lasts_as_the_pictures(result.path, gaps=2)
