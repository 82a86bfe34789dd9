"""zerocopy.serve.exports: an export made once and kept for the range requests of the same clip, one whose footage
had not reached its end removed as soon as it is opened, a kept one removed after its time, and one a kill left
removed by the storage's next start; recording_routes answering them with their headers."""

from __future__ import annotations

import os
import time

import pytest
from conftest import wait_until
from recordings import fill_ring, make_gop_clip

from zerocopy.record.ring import PacketRing
from zerocopy.record.segments import SegmentWriter, recordings_folder
from zerocopy.serve import exports as exports_module
from zerocopy.serve.answers import Request
from zerocopy.serve.exports import Exports
from zerocopy.serve.recording_routes import recording_answer
from zerocopy.store.storage import Storage


@pytest.fixture
def storage(tmp_path):
    """Camera `gate`: 4 s recorded (segments of 2 s) a minute ago; (storage, its start)."""
    storage = Storage(tmp_path / "store", max_bytes=10**9, max_days=1e6, say=lambda line: None)
    ring = PacketRing(16 * 2**20)
    writer = SegmentWriter(ring, storage.folder, "gate", lambda line: None, index=storage.index.put, segment_s=2.0,
                           min_free_bytes=0)
    writer.start()
    t0 = time.time() - 60
    fill_ring(ring, make_gop_clip(tmp_path / "a.ts", seconds=4), t0)
    wait_until(lambda: ring.packets_added > 0, what="the packets")
    assert writer.close(5.0)
    yield storage, t0
    storage.close()


def exported(storage) -> list[str]:
    return sorted(n for n in os.listdir(recordings_folder(storage.folder, "gate")) if n.startswith(".export-"))


def test_an_export_is_made_once_for_its_range_requests_and_removed_after_its_time(storage, monkeypatch):
    storage, t0 = storage
    exports = Exports(storage)
    fd, result = exports.open("gate", t0 + 0.5, t0 + 3.0)
    again, same = exports.open("gate", t0 + 0.5, t0 + 3.0)
    try:
        assert same == result and len(exported(storage)) == 1  # the one kept, not made again
        assert os.fstat(fd).st_ino == os.fstat(again).st_ino and os.fstat(fd).st_size == result.bytes
    finally:
        os.close(fd)
        os.close(again)
    monkeypatch.setattr(exports_module, "KEEP_S", 0.0)
    fd, _ = exports.open("gate", t0 + 1.0, t0 + 2.0)  # (the first one expired: removed)
    os.close(fd)
    assert len(exported(storage)) == 1


def test_an_export_past_the_recording_is_not_kept_and_a_leftover_goes_at_the_next_start(storage, tmp_path):
    storage, t0 = storage
    fd, result = Exports(storage).open("gate", t0 + 3.0, t0 + 30.0)
    try:
        assert result.early_end and exported(storage) == []  # removed at once: its open file is still answered
        assert os.fstat(fd).st_size == result.bytes > 0
    finally:
        os.close(fd)
    left = recordings_folder(storage.folder, "gate") / ".export-1.000-2.000.zerocopy-1-abcdef.tmp"
    left.write_bytes(b"half an export")
    again = Storage(storage.folder, max_bytes=10**9, max_days=1e6, say=lambda line: None)
    again.close()
    assert not left.exists()


def test_the_clip_route_answers_a_range_of_the_export_and_says_where_it_starts(storage):
    storage, t0 = storage
    answer = recording_answer(storage, "gate", "clip.mp4", Request({"start": [str(t0 + 1.5)], "end": [str(t0 + 3)]},
                                                                   {"range": "bytes=0-99"}))
    try:
        headers = dict(answer.headers)
        assert answer.status == 206 and answer.content_type == "video/mp4" and len(answer.body) == 100
        assert float(headers[b"x-zerocopy-start"]) == pytest.approx(t0 + 1.0, abs=1e-3)
        assert b"x-zerocopy-cut-at-gap" not in headers
        assert answer.body.read(0, 100)[4:8] == b"ftyp"
    finally:
        answer.body.close()
    answer = recording_answer(storage, "gate", "recordings", Request({"after": [str(t0)], "before": [str(t0 + 9)]}))
    assert answer.status == 200 and b'"more": false' in answer.body
