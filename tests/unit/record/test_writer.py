"""zerocopy.record.writer: a camera's clip requests, each written once the record stream reached its end (or
dropped), into <storage>/clips/<camera>/<event id>.mp4; a full disk said once and shown, never raised."""

from __future__ import annotations

import queue
import threading

import pytest
from recordings import GOP, Done, fill_ring, gop_spec, read_clip

from zerocopy.record.camera import clips_folder
from zerocopy.record.ring import PacketRing
from zerocopy.record.writer import ClipWriter

T0 = 1_800_000_000.0


@pytest.fixture(scope="module")
def source(clips):
    return clips("record-gop.ts", gop_spec(3.0), "mpegts")[0]


def started(source, tmp_path, **kwargs) -> tuple[PacketRing, list[str], Done, ClipWriter]:
    """A ring holding `source` (3 s from T0; None: nothing), what the writer says, its on_done, the writer."""
    ring, lines, done = PacketRing(10**8), [], Done()
    if source is not None:
        fill_ring(ring, source, T0)
    kwargs = {"clock": lambda: T0, "min_free_bytes": 0, "pre_s": 0.5, "post_s": 0.5, **kwargs}
    writer = ClipWriter(ring, clips_folder(tmp_path, "desk"), lines.append, camera="desk", **kwargs)
    writer.start()
    return ring, lines, done, writer


def test_a_clip_already_recorded_is_written_at_once_under_its_event_id(source, tmp_path):
    ring, lines, done, writer = started(source, tmp_path)
    writer.request("1800000001.5-abc123", T0 + 1.5, T0 + 2.0, done)
    event_id, result = done.get()
    assert event_id == "1800000001.5-abc123"
    assert result.path == tmp_path / "clips" / "desk" / "1800000001.5-abc123.mp4"
    assert read_clip(result.path)["frames"] == result.packets
    assert writer.busy_paths() == set() and writer.written == 1 and lines == []
    assert writer.close()


def test_a_clip_waits_for_the_end_asked_for_or_the_gap_that_cuts_it(source, tmp_path):
    ring, lines, done, writer = started(source, tmp_path, post_s=1.0)  # to T0 + 2.97, the segment going on
    writer.request("ev", T0 + 2.0, T0 + 2.5, done)  # due at T0 + 3.5: not recorded yet
    with pytest.raises(queue.Empty):
        done.get(timeout=0.3)
    assert writer.pending() == 1
    ring.end_segment()  # the record stream dropped: what it has is written, cut at the gap
    _, result = done.get()
    assert result.cut_at_gap and result.last_wall < T0 + 3.0
    assert writer.close()


def test_a_clip_is_written_once_the_stream_reaches_its_end(source, tmp_path):
    ring, lines, done, writer = started(source, tmp_path, post_s=1.0)
    writer.request("ev", T0 + 2.0, T0 + 2.5, done)
    fill_ring(ring, source, T0 + 2.98)  # (a new segment: the clip is still the first one's)
    _, result = done.get()
    assert not result.early_end and result.first_wall == pytest.approx(T0 + 1.0)
    assert writer.close()


def test_no_clip_is_waited_for_while_the_record_stream_is_down(source, tmp_path):
    ring, lines, done, writer = started(source, tmp_path, recording=lambda: False, post_s=10.0)
    writer.request("ev", T0 + 2.0, T0 + 2.5, done)
    _, result = done.get()
    assert result.early_end and result.packets == 2 * GOP - 1 + 1  # 1.0 s … 2.97 s
    assert writer.close()


def test_a_full_disk_is_said_once_shown_and_never_raised(source, tmp_path):
    ring, lines, done, writer = started(source, tmp_path, min_free_bytes=2**62)
    writer.request("ev1", T0 + 1.0, T0 + 1.5, done)
    writer.request("ev2", T0 + 1.0, T0 + 1.6, done)
    assert [done.get(), done.get()] == [("ev1", None), ("ev2", None)]
    assert writer.disk_full and writer.failed == 2
    assert len(lines) == 1 and "camera desk: clips: the disk of" in lines[0] and "is full" in lines[0]
    assert "detection goes on" in lines[0]
    assert not (tmp_path / "clips" / "desk" / "ev1.mp4").exists()
    writer.min_free_bytes = 0  # space was freed
    writer.request("ev3", T0 + 1.0, T0 + 1.5, done)
    assert done.get()[1] is not None and not writer.disk_full
    assert "has room again" in lines[1] and len(lines) == 2
    assert writer.close()


def test_a_bad_event_id_or_a_failing_callback_is_said_not_raised(source, tmp_path):
    ring, lines, done, writer = started(source, tmp_path)
    writer.request("../../etc/passwd", T0 + 1.0, T0 + 1.5, done)
    assert done.get() == ("../../etc/passwd", None)
    assert "cannot be a file name" in lines[-1]

    def broken(event_id, result):
        raise RuntimeError("the store is closed")

    writer.request("ev", T0 + 1.0, T0 + 1.5, broken)
    writer.request("ev2", T0 + 1.0, T0 + 1.5, done)
    assert done.get()[0] == "ev2"
    assert any("on_done(ev) failed: RuntimeError: the store is closed" in line for line in lines)
    assert writer.close()


def test_nothing_recorded_is_said_once_per_kind(tmp_path):
    ring, lines, done, writer = started(None, tmp_path, recording=lambda: False)
    for n in range(3):
        writer.request(f"ev{n}", T0, T0 + 1, done)
    assert [done.get()[1] for _ in range(3)] == [None] * 3
    assert len(lines) == 1 and "no clip for event ev0: the ring holds nothing of that time" in lines[0]
    assert writer.failed == 3 and writer.last_error.startswith("ev2:")
    assert writer.close()


def test_closing_writes_what_is_queued_with_what_the_ring_holds(source, tmp_path):
    ring, lines, done, writer = started(source, tmp_path, post_s=30.0)
    writer.request("ev", T0 + 2.0, T0 + 2.5, done)
    ended = threading.Event()
    threading.Thread(target=lambda: (writer.close(timeout=5.0), ended.set())).start()
    _, result = done.get()
    assert result is not None and result.early_end
    assert ended.wait(30)
    writer.request("late", T0 + 2.0, T0 + 2.5, done)  # after close: given up, not raised
    assert done.get() == ("late", None)
