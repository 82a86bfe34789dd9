"""Audio kept in recording (zerocopy/record/audio.py): a paced loopback camera sending H.264 and AAC in MPEG-TS,
recorded continuously: its segments, an export of them and an event's clip each hold an audio stream that decodes
and lasts as the pictures; and a camera sending G.711 (pcm_mulaw, which MP4 cannot hold) recorded without its audio,
said once (in the log and in its status) however often its stream is opened again."""

from __future__ import annotations

import time

import pytest
from conftest import wait_until
from livesource import LiveServer, make_ts_clip
from recordings import Done, clip_of_a_continuous_camera, read_audio, read_clip, with_audio

from zerocopy.record.camera import CameraRecording
from zerocopy.record.export import write_export
from zerocopy.store.storage import Storage

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

AAC_FRAME_S = 1024 / 16000


def test_an_aac_cameras_segments_export_and_event_clip_keep_its_audio(tmp_path):
    clip = with_audio(make_ts_clip(tmp_path / "v.ts", seconds=30, fps=25, keyint=25), tmp_path / "cam.ts")
    storage = Storage(tmp_path / "store", max_bytes=10**10, max_days=1e6, say=lambda line: None)
    lines: list[str] = []
    try:
        with LiveServer(clip, "http", lifetime=90) as server:
            result, status, _ = clip_of_a_continuous_camera(server.url, storage, lines.append, pre_s=1.0, post_s=1.0,
                                                            seen_ago=2.0, seen_for=1.0)
        rows = storage.segments("gate")
        export = write_export(storage.files, rows, rows[0].start + 0.5, rows[1].end + 1.0, tmp_path / "export.mp4")
    finally:
        storage.close()
    assert status["audio"] == "aac" and status["audio_note"] is None, status
    assert result is not None, lines
    for path in [*(storage.folder / r.path for r in rows[:-1]), export.path, result.path]:
        pictures, sound = read_clip(path), read_audio(path)
        assert sound is not None and sound["codec"] == "aac", path
        # it lasts as the pictures, short by at most an AAC frame at each end and at each segment joined
        assert pictures["duration"] - 6 * AAC_FRAME_S <= sound["seconds"] <= pictures["duration"] + AAC_FRAME_S
    assert lines == [f"camera gate: recording from {server.url} (h264 320×180)"]


def test_a_g711_camera_is_recorded_without_its_audio_and_says_so_once(tmp_path):
    source = with_audio(make_ts_clip(tmp_path / "v.ts", seconds=1, fps=25, keyint=25), tmp_path / "cam.mov",
                        codec="pcm_mulaw", container="mov", rate=8000)
    lines: list[str] = []
    camera = CameraRecording("door", str(source), tmp_path / "store", lines.append, loop=True, min_free_bytes=0)
    camera.start()
    try:
        wait_until(lambda: camera.status()["buffer_seconds"] >= 2.5, what="three loops of the file")
        status = camera.status()
        result = None
        done = Done()
        now = time.time()
        camera.request("ev", now - 1.5, now - 1.0, done)
        _, result = done.get(timeout=30)
    finally:
        assert camera.close()
    note = "its audio (pcm_mulaw) cannot be kept in MP4: recorded without it"
    assert status["audio"] is None and status["audio_note"] == note and status["state"] == "recording"
    assert [line for line in lines if "audio" in line] == [f"camera door: recording from {source}: {note}"]
    assert result is not None and read_audio(result.path) is None and read_clip(result.path)["frames"] > 0
