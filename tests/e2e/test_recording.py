"""Recording for real (zerocopy/record): a live MPEG-TS record_url over HTTP on the loopback that drops in the
middle (a new segment; a clip across the drop is cut at the gap), a looped file played as a camera (its loops are
one continuous recording), a camera's clips written once the stream reached their end, a real full disk, and
the measuring script."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import wait_until
from livesource import LiveServer
from recordings import FAST, FPS, GOP, Done, fill_ring, gop_spec, make_gop_clip, read_clip

from zerocopy.record.camera import CameraRecording
from zerocopy.record.clip import write_clip as remux_clip
from zerocopy.record.reader import Recorder
from zerocopy.record.ring import PacketRing
from zerocopy.samples import write_clip

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]
GOP_S = GOP / FPS
T0 = 1_800_000_000.0


@pytest.fixture(scope="module")
def ts_clip(tmp_path_factory):
    """6 s of H.264 in MPEG-TS at 30 fps, a keyframe every second. (Served looped, each loop's timestamps start
    over: a new segment for the ring, as a camera's encoder restarting would be.)"""
    return make_gop_clip(tmp_path_factory.mktemp("record") / "main.ts", seconds=6.0)


def test_a_live_record_url_that_drops_is_recorded_in_two_segments_and_a_clip_is_cut_at_the_gap(ts_clip, tmp_path):
    lines: list[str] = []
    ring = PacketRing(10**8)
    with LiveServer(ts_clip, "http", lifetime=90, loops=20) as server:
        recorder = Recorder(server.url, ring, lines.append, camera="front", policy=FAST)
        recorder.start()
        wait_until(lambda: ring.stats()["seconds"] >= 3.5, what="3.5 s recorded")  # (past the opening's burst)
        dropped_at = time.time()
        server.kill()
        wait_until(lambda: recorder.status().state == "reconnecting", what="the recorder to see the drop")
        assert not recorder.recording and "dropped" in recorder.status().error
        dropped_segment = ring.segment
        server.restart()
        wait_until(lambda: recorder.recording and ring.segment > dropped_segment, what="recording again")
        wait_until(lambda: ring.window(time.time() - 1, time.time(), 0, 0).packets[0].segment > dropped_segment,
                   what="a keyframe after the drop")
        assert recorder.status().reconnects == 1
        result = remux_clip(ring, dropped_at - 1.0, time.time(), 0.5, 0.5, tmp_path / "ev.mp4")
        assert recorder.close()
    assert result.cut_at_gap and result.last_wall <= dropped_at + 0.5  # nothing of the second segment
    assert dropped_at - 1.5 - GOP_S - 0.1 <= result.first_wall <= dropped_at - 1.5 + 0.1
    clip = read_clip(result.path)
    assert clip["frames"] == result.packets and clip["boxes"].index("moov") < clip["boxes"].index("mdat")
    # `seconds` runs from the first picture to the end of the last, as the clip's decoded pictures do; not the MP4's
    # duration, the sum of its samples', which is short where the drop cut B-frames that never arrived (68 pictures
    # spanning 70 frame times were seen: 2.267 s of samples for 2.333 s of pictures)
    assert clip["last"] - clip["first"] + 1 / FPS == pytest.approx(result.seconds, abs=1.5 / FPS), (clip, result)
    assert lines[0].startswith(f"camera front: recording from {server.url} (h264 192×108)")
    assert any("dropped (" in line and line.endswith("; reconnecting; detection goes on") for line in lines)


def test_closing_a_recorder_blocked_in_a_read_returns_at_once_and_the_thread_ends_at_the_read_timeout(ts_clip):
    ring = PacketRing(10**8)
    with LiveServer(ts_clip, "http", lifetime=60) as server:
        recorder = Recorder(server.url, ring, [].append, camera="front", policy=FAST)
        recorder.start()
        wait_until(lambda: ring.stats()["packets"] > 10, what="packets")
        server.stall()  # the connection stays open, nothing more comes: FFmpeg's read blocks
        packets = ring.packets_added
        wait_until(lambda: ring.packets_added == packets and ring.stats()["packets"] > 0, what="no more packets")
        started = time.monotonic()
        recorder.close()
        assert time.monotonic() - started < 2.0  # CLOSE_GRACE_S (0.5 s), then the thread is left to end alone
        assert recorder.join(FAST.read_timeout + 10)  # it ends at the read timeout (2 s here), closing its input
        assert recorder.status().state == "stopped"


def test_a_looped_file_is_one_recording_and_its_clips_run_on_across_the_loop(tmp_path):
    lines: list[str] = []
    one_second = make_gop_clip(tmp_path / "one.ts", seconds=1.0)
    camera = CameraRecording("desk", str(one_second), tmp_path / "storage", lines.append, loop=True, pre_s=0.5,
                             post_s=0.5, min_free_bytes=0)
    camera.start()
    wait_until(lambda: camera.status()["buffer_seconds"] >= 0.3, what="recording to start")
    started = camera.ring.window(0, 2e9, 0, 0).packets[0].wall
    first_seen, last_seen = started + 0.8, started + 1.4  # across the first loop, at 1 s
    done = Done()
    camera.request("ev", first_seen, last_seen, done)
    event_id, result = done.get()
    status = camera.status()
    assert camera.close()
    assert status["state"] == "recording" and status["clips_written"] == 1 and status["reconnects"] == 0
    assert result.path == tmp_path / "storage" / "clips" / "desk" / "ev.mp4"
    assert not (result.cut_at_gap or result.early_end or result.late_start)
    assert result.last_wall >= last_seen + 0.5 - 1.5 / FPS  # it waited for post_capture to be recorded
    clip = read_clip(result.path)
    assert clip["frames"] == result.packets  # every packet decodes: the loops join cleanly
    assert clip["duration"] == pytest.approx(result.packets / FPS, abs=1.5 / FPS)  # timestamps run on: no jump
    assert clip["duration"] >= 1.1
    assert lines == ["camera desk: recording from " + str(one_second) + " (h264 192×108)"]


@pytest.mark.parametrize("container", ["mpegts", "mp4"])
def test_an_h265_main_stream_is_clipped_without_decoding(tmp_path, container):
    source = tmp_path / f"main.{'ts' if container == 'mpegts' else 'mp4'}"
    spec = dataclasses.replace(gop_spec(2.0), codec="libx265",
                               options=(("x265-params", f"log-level=error:keyint={GOP}:min-keyint={GOP}:bframes=2"),))
    write_clip(source, spec, container_format=container)
    ring = PacketRing(10**8)
    fill_ring(ring, source, T0)
    result = remux_clip(ring, T0 + 1.2, T0 + 1.5, 0.1, 0.3, tmp_path / "ev.mp4")
    assert result.first_wall == pytest.approx(T0 + 1.0) and not result.cut_at_gap
    clip = read_clip(result.path)
    assert clip["frames"] == result.packets and clip["boxes"].index("moov") < clip["boxes"].index("mdat")
    assert clip["duration"] == pytest.approx(result.seconds, abs=1.5 / FPS)


def test_a_real_full_disk_stops_the_clips_with_one_line_and_leaves_nothing_half_written(tmp_path, ts_clip):
    from smalldisk import small_disk

    lines: list[str] = []
    with LiveServer(ts_clip, "http", lifetime=60, loops=20) as server:
        camera = CameraRecording("yard", server.url, tmp_path / "storage", lines.append, pre_s=1.0, post_s=0.0,
                                 min_free_bytes=0, policy=FAST)
        ring = camera.ring
        with small_disk(tmp_path / "storage" / "clips" / "yard", size="8k") as folder:
            camera.start()
            wait_until(lambda: ring.stats()["seconds"] >= 2.5, what="2.5 s recorded")
            done = Done()
            now = time.time()
            camera.request("ev1", now - 1.0, now - 0.5, done)  # ~50 kB of clip on an 8 kB disk: ENOSPC
            assert done.get() == ("ev1", None)
            assert camera.disk_full and camera.status()["disk_full"]
            assert list(folder.iterdir()) == []  # no temporary left behind, no clip under its name
            camera.request("ev2", now - 1.0, now - 0.5, done)
            assert done.get() == ("ev2", None)
            assert camera.recorder.recording  # recording into memory goes on, ready for when space comes back
            assert camera.close()
    full = [line for line in lines if "full" in line]
    assert len(full) == 1 and "no space left on device" in full[0] and full[0].endswith("detection goes on")


def test_the_measuring_script_prints_its_figures():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "measure_recording.py"), "--seconds", "2",
                           "--clip-seconds", "2", "--width", "320", "--height", "180", "--bitrate", "1M",
                           "--buffer-mb", "1",
                           "--pre", "1", "--post", "0.5", "--json"], cwd=ROOT, capture_output=True, text=True,
                          timeout=110)
    assert proc.returncode == 0, proc.stderr
    figures = json.loads(proc.stdout)
    assert figures["packets_per_s"] == pytest.approx(30, abs=5)
    assert 0 <= figures["reader_core_percent"] < 50  # (the figure itself is measured at 1080p: docs/serve.md)
    assert 0 < figures["clip_starts_before_first_sighting_s"] <= figures["target_at_most_s"] + 0.1
    assert figures["said"] == [line for line in figures["said"] if line.endswith("(h264 320×180)")]
