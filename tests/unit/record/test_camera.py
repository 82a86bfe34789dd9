"""zerocopy.record.camera: a camera's recording as serve holds it (its status, a clip asked for while its
record_url is down, closing)."""

from __future__ import annotations

from conftest import wait_until
from recordings import FAST, Done, refused_url

from zerocopy.record.camera import CameraRecording, clips_folder


def test_a_camera_whose_record_url_is_down_shows_why_and_its_clips_are_none(tmp_path):
    lines: list[str] = []
    camera = CameraRecording("gate", refused_url(), tmp_path, lines.append, policy=FAST, min_free_bytes=0)
    camera.start()
    wait_until(lambda: camera.status()["error"] is not None, what="the first failed opening")
    done = Done()
    camera.request("1800000000.0-abcdef", 1.8e9, 1.8e9 + 1, done)  # not waited for: nothing is recording
    assert done.get() == ("1800000000.0-abcdef", None)
    status = camera.status()
    assert status["state"] == "starting" and not status["recording"] and "refused" in status["error"]
    assert status["buffer_bytes"] == 0 and status["clips_failed"] == 1 and not status["disk_full"]
    assert camera.busy_paths() == set() and not camera.disk_full
    assert camera.close()
    assert not clips_folder(tmp_path, "gate").joinpath("1800000000.0-abcdef.mp4").exists()
    assert all(line.startswith("camera gate: ") for line in lines) and len(lines) == 2  # the opening, the clip
