"""`--detect-fps`: which frames are inferred (paths/rate.py), and that the others keep their place."""

import json

import pytest
from conftest import detect_quiet

from zerocopy.paths.rate import DetectRate
from zerocopy.samples import ClipSpec


def _taken(fps: float, rate: float, pts: list[float | None]) -> list[int]:
    sampler = DetectRate(fps, rate)
    return [i for i, t in enumerate(pts) if sampler.take(i, t)]


def test_five_a_second_of_30_fps_is_every_sixth_frame():
    assert _taken(5, 30, [i / 30 for i in range(60)]) == list(range(0, 60, 6))


@pytest.mark.parametrize("rate", [25.0, 29.97, 15.0, 12.5])
def test_the_rate_holds_over_a_minute_without_drift(rate):
    frames = int(60 * rate)
    taken = _taken(5, rate, [round(i / rate, 3) for i in range(frames)])  # timestamps rounded, as containers do
    assert abs(len(taken) - 300) <= 1
    gaps = {b - a for a, b in zip(taken, taken[1:], strict=False)}
    assert max(gaps) - min(gaps) <= 1  # evenly spread


def test_without_timestamps_the_index_and_rate_are_the_clock():
    assert _taken(10, 30, [None] * 30) == list(range(0, 30, 3))


def test_a_rate_above_the_inputs_takes_every_frame():
    assert _taken(60, 30, [i / 30 for i in range(30)]) == list(range(30))


def test_a_gap_or_a_jump_back_restarts_the_schedule():
    pts = [i / 30 for i in range(10)] + [100 + i / 30 for i in range(10)] + [i / 30 for i in range(10)]
    taken = _taken(5, 30, pts)
    assert 10 in taken and 20 in taken  # the first frame after the gap, and after the jump back


def test_detect_fps_infers_that_many_frames_and_keeps_the_rest_in_order(clips, tmp_path, face_model_path):
    clip, _ = clips("rate30.mp4", ClipSpec(frames=60, fps=30, width=320, height=180))
    out = tmp_path / "o.jsonl"
    report = tmp_path / "r.json"
    assert detect_quiet(clip, "--model", face_model_path, "--path", "software", "--detect-fps", "5",
                        "--json", out, "--report", report) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [rec["frame"] for rec in lines] == list(range(60))
    inferred = [rec["frame"] for rec in lines if rec.get("inferred", True)]
    assert inferred == list(range(0, 60, 6))
    assert all(rec["detections"] == [] for rec in lines if not rec.get("inferred", True))  # no tracking: no boxes
    r = json.loads(report.read_text())
    assert (r["frames"], r["inferred_frames"]) == (60, 10)
