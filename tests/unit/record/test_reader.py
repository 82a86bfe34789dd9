"""zerocopy.record.reader: a record_url that cannot be opened is said once and shown, never raised, and retried
until close(), which returns promptly; the stream parameters a clip needs. (Recording live and looped streams
for real, with drops: tests/e2e/test_recording.py.)"""

from __future__ import annotations

import time

from conftest import wait_until
from recordings import FAST, refused_url

from zerocopy.record.reader import Recorder
from zerocopy.record.ring import PacketRing


def test_a_record_url_that_is_down_is_said_once_shown_and_retried_until_closed():
    lines: list[str] = []
    recorder = Recorder(refused_url(), PacketRing(10**6), lines.append, camera="front", policy=FAST)
    recorder.start()
    wait_until(lambda: recorder.live.attempts >= 3, what="three attempts to reconnect")
    status = recorder.status()
    assert status.state == "starting" and not status.recording
    assert "cannot open" in status.error and "refused" in status.error
    assert len(lines) == 1, lines  # however many attempts fail for the same reason
    assert lines[0].startswith("camera front: recording from http://user:***@127.0.0.1:")
    assert lines[0].endswith("; detection goes on") and "secret" not in lines[0]
    started = time.monotonic()
    assert recorder.close()
    assert time.monotonic() - started < 1.0  # a wait between attempts ends at once (aimed at: a few ms)
    assert recorder.status().state == "stopped"


def test_a_missing_file_ends_the_recorder_with_its_reason(tmp_path):
    lines: list[str] = []
    recorder = Recorder(str(tmp_path / "nothing.mp4"), PacketRing(10**6), lines.append, camera="desk", loop=True)
    recorder.start()
    wait_until(lambda: recorder.status().state == "ended", what="the recorder to end")
    assert "no such file" in recorder.status().error
    assert len(lines) == 1 and "detection goes on" in lines[0]
    assert recorder.close()
