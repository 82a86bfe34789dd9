"""zerocopy.stages.motion: the motion gate's sums per camera, whether a scene is all motion, and `busy`: a tracked
object moving, or one due to end. Fed frames as a path makes them (the detector's records) and tracked boxes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame
from zerocopy.motion.detector import Motion
from zerocopy.stages import InputInfo, Stage
from zerocopy.stages.motion import ALL_MOTION_S, MOVING_S, MotionStage

FPS = 10.0
STILL, MOVING = Motion(), Motion(moving=True, boxes=((0.1, 0.1, 0.3, 0.4),), fraction=0.05)
CALIBRATING, WHOLE = Motion(calibrating=True), Motion(calibrating=True, whole_scene=True, fraction=0.9)


def frame(i: int, motion: Motion | None, inferred: bool = True, skipped_by: str | None = None,
          preprocess_ms: float = 0.0) -> PreparedFrame:
    return PreparedFrame(index=i, pts=i / FPS, width=640, height=360, geometry=None, inputs={}, inferred=inferred,
                         motion=motion, skipped_by=skipped_by, preprocess_ms=preprocess_ms)


def tracked(*boxes: tuple[int, float, float]) -> Detections:
    """Boxes 40×80 pixels at (id, x, y) of their top-left corner."""
    xyxy = np.array([[x, y, x + 40, y + 80] for _, x, y in boxes], np.float32).reshape(-1, 4)
    n = len(boxes)
    return Detections(xyxy, np.full(n, 0.9, np.float32), np.zeros(n, np.int32)).with_ids([b[0] for b in boxes])


def begun(stage: MotionStage, index: int = 0, camera: str = "cam0") -> MotionStage:
    stage.begin(InputInfo(index=index, source=f"{camera}.mp4", camera=camera, rate=FPS))
    return stage


def test_it_is_a_stage_that_sees_every_frame():
    stage = MotionStage()
    assert isinstance(stage, Stage) and stage.name == "motion" and stage.on_skipped and not stage.crops
    assert stage.report() is None  # a run without --motion has no `motion` section



def test_the_sums_of_a_camera():
    stage = begun(MotionStage())
    motions = [CALIBRATING] * 10 + [STILL] * 20 + [MOVING] * 10 + [WHOLE] * 5 + [STILL] * 5 + [CALIBRATING] * 3
    for i, m in enumerate(motions):
        skipped = "motion" if m is STILL and i % 2 else ("detect_fps" if i % 3 == 0 else None)
        stage(frame(i, m, inferred=skipped is None, skipped_by=skipped, preprocess_ms=0.1), None, 0)
    s = stage.summary()
    assert s["frames"] == len(motions) and s["with_motion"] == 10
    assert s["inferences_skipped"] == sum(1 for i, m in enumerate(motions) if m is STILL and i % 2)
    assert s["calibrations"] == 3  # the start, the whole-scene change, the reset at the end
    assert s["whole_scene"] == {"episodes": 1, "seconds": 0.5}
    assert s["ms_per_frame"] == pytest.approx(0.1) and s["all_motion_s"] == 0.0
    assert s["cameras"]["cam0"]["frames"] == len(motions) and s["cameras"]["cam0"]["all_motion"] is False
    stage.reset()
    assert stage.summary()["frames"] == 0
    stage(frame(len(motions), STILL), None, 0)
    assert stage.summary()["cameras"]["cam0"]["frames"] == 1  # the open input counts afresh


def test_frames_without_motion_records_are_not_counted():
    stage = begun(MotionStage())
    stage(frame(0, None), Detections.empty(), 0)
    assert stage.summary()["frames"] == 0 and not stage.busy(0)


@pytest.mark.parametrize("share,expected", [(1.0, True), (0.95, True), (0.5, False)])
def test_a_scene_in_motion_most_of_a_minute_is_all_motion(share, expected):
    stage = begun(MotionStage())
    n = round(2 * ALL_MOTION_S * FPS)
    for i in range(n):
        stage(frame(i, MOVING if (i % 20) < share * 20 else STILL), None, 0)
    assert stage.all_motion(0) is expected
    seconds = stage.summary()["all_motion_s"]
    assert (seconds > 0.5 * ALL_MOTION_S) if expected else seconds == 0.0
    assert stage.summary()["cameras"]["cam0"]["all_motion"] is expected


def test_a_tracked_object_moving_makes_the_input_busy_until_it_stops():
    stage = begun(MotionStage())
    for i in range(10):  # walking: 8 pixels a frame (a fifth of the box's height a second)
        stage(frame(i, STILL), tracked((1, 100 + 8 * i, 100)), 0)
        assert stage.busy(0)
    for i in range(10, 10 + round(2 * MOVING_S * FPS) + 1):  # standing: a pixel of jitter
        stage(frame(i, STILL), tracked((1, 172 + (i % 2), 100)), 0)
    assert not stage.busy(0)
    stage(frame(30, STILL, inferred=False, skipped_by="motion"), tracked((1, 300, 100)), 0)
    assert not stage.busy(0)  # predicted boxes of frames not inferred do not count


def test_an_object_gone_says_from_when_its_end_waits_for_an_inferred_frame_until_that_frame():
    stage = begun(MotionStage(max_lost=2.0))
    assert stage.ends_due(0) == math.inf
    stage(frame(0, STILL), tracked((1, 100, 100), (2, 300, 100)), 0)
    for i in range(1, 12):
        stage(frame(i, STILL), tracked((2, 300, 100)), 0)  # 1 is gone
        assert stage.busy(0) is (i < MOVING_S * FPS)  # both counted as moving for a second after they were new
        assert 2.0 < stage.ends_due(0) < 2.0 + 1e-9  # past max_lost (2 s) after it was last seen, at 0
    for i in range(12, 22):
        stage(frame(i, STILL, inferred=False, skipped_by="motion"), None, 0)
    assert not stage.busy(0) and not stage.busy(0, 2.1)  # an end due is not motion: the gate infers a keyframe
    assert stage.ends_due(0) <= 2.1
    stage(frame(22, STILL), tracked((2, 300, 100)), 0)  # that frame: the tracking stage ended it
    assert stage.ends_due(0) == math.inf


def test_busy_at_a_time_reads_what_the_inferred_frames_left():
    stage = begun(MotionStage())
    stage(frame(0, STILL), tracked((1, 100, 100)), 0)  # new: moving for MOVING_S from 0
    assert stage.busy(0, MOVING_S - 0.05) and not stage.busy(0, MOVING_S + 0.05)


def test_inputs_are_apart_and_a_restart_forgets_the_objects():
    stage = begun(begun(MotionStage()), 1, "cam1")
    stage(frame(0, STILL), tracked((1, 100, 100)), 0)
    assert stage.busy(0) and not stage.busy(1)
    for i in range(1, 5):
        stage(frame(i, STILL), Detections.empty().with_ids([]), 0)
    stage(frame(0, STILL), Detections.empty().with_ids([]), 0)  # its time went back: a new stream
    for i in range(1, 40):
        stage(frame(i, STILL, inferred=False, skipped_by="motion"), None, 0)
    assert not stage.busy(0)
    assert set(stage.summary()["cameras"]) == {"cam0", "cam1"}
    stage.end(0)
    assert not stage.busy(0) and stage.summary()["cameras"]["cam0"]["frames"] == 45


def run(stage: MotionStage, motions: list[Motion], start: int = 0, input: int = 0) -> list[tuple[int, object]]:
    """The states `stage` says of `motions` from frame `start` on (the frames without motion not inferred)."""
    said = []
    for i, m in enumerate(motions, start):
        skipped = "motion" if m is STILL else None
        said += [(i, r) for r in stage(frame(i, m, inferred=skipped is None, skipped_by=skipped), None, input)[1]]
    return said


def test_it_says_its_state_when_it_changes_and_its_counts_at_most_every_refresh():
    """Issue 37, item 3: the motion gate's state is the stage's own record (`MotionState`), so serve's figures come
    from it and not from a second count; Frigate's `CAMERA/motion` says ON when motion starts, OFF after the delay."""
    from zerocopy.stages.motion import REFRESH_S, MotionState
    from zerocopy.stages.records import Record

    stage = begun(MotionStage(off_delay=2.0))
    said = run(stage, [STILL] * 5 + [MOVING] * 3 + [STILL] * 40)
    assert all(isinstance(r, MotionState) and isinstance(r, Record) for _, r in said)
    assert [(i, r.active) for i, r in said[:3]] == [(0, False), (5, True), (8, False)]  # the gate's own reading
    assert [(i, r.to_mqtt()) for i, r in said if r.news] == [(5, "ON"), (27, "OFF")]  # 2 s after the last motion
    assert [r.topic for i, r in said if r.news] == ["cam0/motion"] * 2 and not MotionState.retained
    refreshes = [i for i, r in said if not r.news and not r.active and i > 8]
    assert refreshes and all(r.topic is None for i, r in said if not r.news)
    assert all(b - a >= REFRESH_S * FPS for a, b in zip([8, *refreshes], refreshes, strict=False))
    assert said[-1][1].inferences_skipped <= stage.summary()["inferences_skipped"] == 45
    stage(frame(48, MOVING), None, 0)
    ended = stage.end(0)  # motion was on: the camera says it is off
    assert [(r.active, r.on, r.news, r.to_mqtt()) for r in ended] == [(False, False, True, "OFF")]
    assert begun(MotionStage()).end(0) == []


def test_a_flickering_scene_says_on_once_and_off_only_after_the_delay_without_motion():
    """The review of issue 37: a scene whose motion flickers frame by frame said ON/OFF at every change (50
    messages in 10 s); Frigate says ON once and OFF `mqtt_off_delay` (30 s) after the last motion."""
    stage = begun(MotionStage())
    said = run(stage, [MOVING, STILL] * 50)  # 10 s of flicker
    assert [(i, r.to_mqtt()) for i, r in said if r.news] == [(0, "ON")]
    assert sum(r.active != s.active for (_, r), (_, s) in zip(said, said[1:], strict=False)) > 50  # (the figures)
    said = run(stage, [STILL] * 310, start=100)
    off = [(i, r.to_mqtt()) for i, r in said if r.news]
    assert len(off) == 1 and off[0][1] == "OFF"
    assert off[0][0] / FPS - 9.8 == pytest.approx(30.0, abs=1.01 / FPS)  # 30 s after the last motion, at 9.8 s


def test_an_input_has_its_own_off_delay():
    from zerocopy.input_settings import input_settings

    stage = MotionStage(off_delay=30.0)
    stage.begin(InputInfo(index=0, source="cam0.mp4", camera="cam0", rate=FPS,
                          settings=input_settings({"motion_off_delay": 0})))
    said = run(stage, [MOVING, STILL, MOVING, STILL])
    assert [(i, r.to_mqtt()) for i, r in said if r.news] == [(0, "ON"), (1, "OFF"), (2, "ON"), (3, "OFF")]


def test_after_a_restart_its_counts_are_said_again_and_its_on_ends_after_the_delay():
    """The review of issue 37: after the input's time went back, the media time its counts were last said at was
    ahead of every frame's, so serve's counts stopped being refreshed."""
    stage = begun(MotionStage(off_delay=2.0))
    run(stage, [STILL] * 100 + [MOVING])  # 10 s, motion on at its end
    said = run(stage, [STILL] * 40)  # its time went back to 0
    assert [i for i, r in said if not r.news] == [0, 10, 30]  # its counts said again, every second (and at 20)
    assert [(i, r.to_mqtt()) for i, r in said if r.news] == [(20, "OFF")]  # 2 s after the restart


def test_its_input_ending_says_its_final_counts_even_with_motion_off():
    stage = begun(MotionStage())
    said = run(stage, [STILL] * 5)
    ended = stage.end(0)
    assert len(ended) == 1 and not ended[0].news and ended[0].inferences_skipped == 5 > said[-1][1].inferences_skipped
