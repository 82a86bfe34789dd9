"""`Detector.run()`'s per-input settings and camera names (run_args.py, config.input_settings)."""

from __future__ import annotations

import pytest

import zerocopy
from zerocopy.names import camera_name
from zerocopy.samples import ClipSpec


def test_each_input_of_a_parallel_run_has_its_own_detection_rate(clips, face_model_path):
    clip, truth = clips("h264-25.mp4", ClipSpec(frames=25, fps=25))
    inferred: dict[int, list[int]] = {0: [], 1: []}
    frames: dict[int, list[int]] = {0: [], 1: []}
    with zerocopy.Detector("face", path="software") as det:
        for r in det.run([clip, clip], parallel=True, per_input=[{"detect_fps": 5}, {}]):
            frames[r.input].append(r.index)
            if r.inferred:
                inferred[r.input].append(r.index)
    assert frames == {0: list(range(25)), 1: list(range(25))}
    assert inferred == {0: [0, 5, 10, 15, 20], 1: list(range(25))}
    assert det.report()["inferred_frames"] == 30


@pytest.mark.parametrize(("per_input", "says"), [
    ([{"detect_fps": 0}], "detect_fps must be"),
    ([{"threshold": 0.5}], "an input may set only classes, detect_fps"),
    ([{"classes": "cat"}], "the model has no class 'cat'"),
    ([{}, {}], "one dict per input (1)"),
    ({"detect_fps": 5}, "one dict per input"),
])
def test_bad_per_input_settings_are_refused_before_anything_runs(per_input, says, face_model_path):
    with zerocopy.Detector("face") as det, pytest.raises(zerocopy.ConfigError) as e:
        det.run("clip.mp4", per_input=per_input)
    assert says in str(e.value)


@pytest.mark.parametrize("cameras", [["front door"], ["a", "b"], "x/y", [""], [3]])
def test_camera_names_are_topic_levels_one_per_input(cameras, face_model_path):
    with zerocopy.Detector("face") as det, pytest.raises(zerocopy.ConfigError) as e:
        det.run("clip.mp4", cameras=cameras)
    assert e.value.setting == "cameras"


@pytest.mark.parametrize(("source", "name"), [
    ("/videos/front-door.mp4", "front-door"), ("rtsp://user:secret@cam.lan:554/stream1", "stream1"),
    ("http://10.0.0.5/", "10_0_0_5"), ("/dev/video0", "video0"), ("clips/a b.c.mkv", "a_b_c"),
])
def test_default_camera_names(source, name):
    assert camera_name(source) == name
