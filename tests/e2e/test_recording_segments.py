"""Continuous recording for real (zerocopy/record/segments.py): a paced loopback camera recorded by a child process
into segments that cover its time with no gap over a keyframe interval + 1 s, and that child killed with SIGKILL
mid-segment: its last segment plays up to its last fragment and its row says what it held."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import av
import pytest
from conftest import wait_until
from livesource import LiveServer, make_ts_clip

from zerocopy.store.storage import Storage

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

ROOT = Path(__file__).resolve().parents[2]
KEYINT_S = 1.0
CHILD = """
import sys, time
sys.path.insert(0, {support!r})
from recordings import FAST
from zerocopy.record.camera import CameraRecording
from zerocopy.store.storage import Storage
storage = Storage({folder!r}, max_bytes=10**10, max_days=1e6, say=print)
camera = CameraRecording("gate", {url!r}, storage.folder, print, policy=FAST, min_free_bytes=0,
                         index=storage.index.put)
camera.segments.segment_s = 4.0
camera.start()
print("started", flush=True)
time.sleep(600)
"""


def decoded(path: Path) -> int:
    """The pictures of a file read to its end (a segment cut short ends at its last whole fragment)."""
    with av.open(str(path)) as container:
        return sum(1 for _ in container.decode(video=0))


def test_a_killed_writer_leaves_segments_that_cover_the_time_and_a_last_one_that_plays(tmp_path):
    clip = make_ts_clip(tmp_path / "cam.ts", seconds=30, fps=25, keyint=int(25 * KEYINT_S))
    folder = tmp_path / "store"
    with LiveServer(clip, "http", lifetime=90) as server:
        child = subprocess.Popen([sys.executable, "-c", CHILD.format(support=str(ROOT / "tests" / "support"),
                                                                     folder=str(folder), url=server.url)],
                                 cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            recordings = folder / "recordings" / "gate"
            files = lambda: sorted(recordings.rglob("*.mp4"), key=lambda f: f.stat().st_mtime)  # noqa: E731
            wait_until(lambda: len(files()) >= 3, timeout=60, what="three segments")
            # the third at least two fragments (seconds) in, about half its size to come: then the kill
            wait_until(lambda: files()[2].stat().st_size > files()[1].stat().st_size / 2, timeout=30,
                       what="two fragments of the third segment")
            os.kill(child.pid, signal.SIGKILL)
            child.wait(10)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(10)
    storage = Storage(folder, max_bytes=10**10, max_days=1e6, say=lambda line: None)
    try:
        rows = storage.segments("gate")
        assert storage.stats().unnamed_files == 0  # every file has its row, the killed one too
    finally:
        storage.close()
    files = sorted(recordings.rglob("*.mp4"))
    assert [folder / r.path for r in rows] == files and len(rows) >= 3
    for before, after in zip(rows, rows[1:], strict=False):
        assert after.start - before.end < KEYINT_S + 1.0  # no gap over a keyframe interval + 1 s
        assert before.end - before.start == pytest.approx(4.0, abs=KEYINT_S + 0.1)
    last = rows[-1]
    frames = decoded(files[-1])  # the killed segment: no error, its pictures up to its last fragment
    assert frames >= 25  # at least its first fragment (a second)
    assert frames / 25 <= last.end - last.start + 2 * KEYINT_S  # its row says about as much as the file holds
    assert all(decoded(f) == pytest.approx((r.end - r.start) * 25, abs=2) for f, r in zip(files[:-1], rows,
                                                                                           strict=False))


def test_a_continuous_cameras_event_clip_is_made_from_its_segments_and_its_ring_is_small(tmp_path):
    from recordings import clip_of_a_continuous_camera, read_clip

    from zerocopy.record.camera import SEGMENTS_BUFFER_MB

    clip = make_ts_clip(tmp_path / "cam.ts", seconds=30, fps=25, keyint=int(25 * KEYINT_S))
    storage = Storage(tmp_path / "store", max_bytes=10**10, max_days=1e6, say=lambda line: None)
    lines: list[str] = []
    try:
        with LiveServer(clip, "http", lifetime=90) as server:
            # an object seen across the first segment's end, still in view
            result, status, first_seen = clip_of_a_continuous_camera(server.url, storage, lines.append, pre_s=2.0,
                                                                     post_s=1.0, seen_ago=1.5, seen_for=2.0)
    finally:
        storage.close()
    assert result is not None, lines
    assert status["buffer_limit_bytes"] == SEGMENTS_BUFFER_MB * 2**20 >= status["buffer_bytes"]
    assert status["clips_written"] == 1
    assert result.path == storage.folder / "clips" / "gate" / "ev.mp4"
    assert first_seen - 2.0 - KEYINT_S - 0.1 <= result.first_wall <= first_seen - 2.0 + 0.1  # pre_capture, a keyframe
    assert result.last_wall >= first_seen + 3.0 - 0.1  # it waited for post_capture to be in the segments
    assert not (result.cut_at_gap or result.late_start or result.early_end)
    held = read_clip(result.path)
    assert held["frames"] == result.packets and held["boxes"].index("moov") < held["boxes"].index("mdat")
    assert held["last"] - held["first"] >= 5.0 - 0.1  # first_seen - pre … last_seen + post: 5 s at least
