"""zerocopy.motion.detector on scenes made from real photos at the motion picture's size
(tests/support/motionscenes.py): a still camera with sensor noise, a person walking, a clock overlay masked out,
an IR switch."""

import numpy as np
import pytest
from motionscenes import SOURCE, Scene

from zerocopy.analytics.specs import parse_mask
from zerocopy.motion.detector import CALIBRATE_S, MotionDetector, luma_size


def run(scene: Scene, seconds: float, detector: MotionDetector, start: int = 0) -> list:
    out = []
    for i in range(start, start + round(seconds * scene.fps)):
        picture, box = scene.picture(i)
        out.append((i / scene.fps, detector(picture, i / scene.fps, SOURCE), box))
    return out


def test_the_picture_is_192_pixels_on_its_long_side_in_whole_cells():
    assert luma_size(1920, 1080) == (192, 112)
    assert luma_size(1280, 720) == (192, 112)
    assert luma_size(640, 480) == (192, 144)
    assert luma_size(1080, 1920) == (112, 192)
    assert luma_size(4000, 100) == (192, 8)


def test_a_still_scene_with_sensor_noise_has_no_motion_once_calibrated():
    seen = run(Scene(noise=4.0), 6.0, MotionDetector(25))
    calibrating = [t for t, m, _ in seen if m.calibrating]
    assert calibrating and max(calibrating) < CALIBRATE_S + 0.05  # about a second, then it stops
    after = [m for t, m, _ in seen if t > CALIBRATE_S + 0.05]
    assert after and not any(m.moving or m.whole_scene or m.calibrating for m in after)
    assert max(m.fraction for m in after) == 0.0


def test_a_person_walking_is_motion_with_a_box_where_they_are():
    seen = run(Scene(walk=(2.0, 5.0)), 6.0, MotionDetector(25))
    before = [m for t, m, _ in seen if CALIBRATE_S + 0.05 < t < 2.0]
    assert before and not any(m.moving for m in before)
    walking = [(m, box) for t, m, box in seen if box is not None and box[0] > 0.15 and box[2] < 0.85]
    assert len(walking) > 30
    for m, face in walking:
        assert m.moving and not m.whole_scene and 0 < m.fraction < 0.5
        cx, cy = (face[0] + face[2]) / 2, (face[1] + face[3]) / 2
        assert any(b[0] <= cx <= b[2] and b[1] <= cy <= b[3] for b in m.boxes), (face, m.boxes)
        assert all(0 <= v <= 1 for b in m.boxes for v in b)


def test_two_things_moving_apart_make_two_boxes():
    scene = Scene(noise=2.0)
    detector = MotionDetector(25)
    run(scene, 2.0, detector)
    picture, _ = scene.picture(60)
    picture[8:32, 8:40] = 255  # top left
    picture[80:104, 150:180] = 0  # bottom right
    m = detector(picture, 2.1, SOURCE)
    assert m.moving and len(m.boxes) == 2
    (a, b) = m.boxes
    assert a[0] < 0.25 and a[1] < 0.3 and b[2] > 0.75 and b[3] > 0.7


def test_a_mask_hides_a_clock_overlay():
    seen = run(Scene(clock=True), 6.0, MotionDetector(25))
    ticks = [m for t, m, _ in seen if t > CALIBRATE_S + 0.05 and m.moving]
    assert ticks and all(b[0] < 0.35 and b[1] < 0.2 for m in ticks for b in m.boxes)  # the clock, top left
    masked = MotionDetector(25, [parse_mask("0,0,0.35,0,0.35,0.15,0,0.15")])
    seen = run(Scene(clock=True), 6.0, masked)
    assert not any(m.moving for t, m, _ in seen if t > CALIBRATE_S + 0.05)
    in_pixels = MotionDetector(25, [parse_mask("0,0,672,0,672,162,0,162")])  # the same polygon in 1080p pixels
    seen = run(Scene(clock=True), 6.0, in_pixels)
    assert not any(m.moving for t, m, _ in seen if t > CALIBRATE_S + 0.05)


def test_the_mask_leaves_motion_elsewhere_seen():
    masked = MotionDetector(25, [parse_mask("0,0,0.35,0,0.35,0.15,0,0.15")])
    seen = run(Scene(clock=True, walk=(2.0, 5.0)), 6.0, masked)
    assert sum(m.moving for _, m, box in seen if box is not None and 0.15 < box[0] < 0.7) > 20


def test_an_ir_switch_is_a_whole_scene_change_then_quiet_again():
    seen = run(Scene(ir_at=3.0), 7.0, MotionDetector(25))
    switch = [(t, m) for t, m, _ in seen if 2.9 < t < 3.1]
    first = next(m for t, m in switch if t >= 3.0)
    assert first.whole_scene and first.fraction > 0.8 and not first.moving and first.calibrating
    episode = [t for t, m, _ in seen if m.whole_scene]
    assert min(episode) == pytest.approx(3.0, abs=0.05) and max(episode) < 3.0 + CALIBRATE_S + 0.1
    after = [m for t, m, _ in seen if t > 3.0 + CALIBRATE_S + 0.1]
    assert after and not any(m.moving or m.whole_scene or m.calibrating for m in after)


def test_reset_calibrates_again():
    scene = Scene()
    detector = MotionDetector(25)
    run(scene, 2.0, detector)
    detector.reset()
    again = run(scene, 2.0, detector, start=60)
    assert again[0][1].calibrating and not again[0][1].whole_scene
    assert not any(m.calibrating for t, m, _ in again if t > 2.0 + CALIBRATE_S + 0.05)


def test_the_threshold_is_a_brightness_change():
    scene = Scene(noise=0.0)
    for threshold, moves in ((25, False), (15, True)):
        detector = MotionDetector(threshold)
        run(scene, 2.0, detector)
        picture, _ = scene.picture(60)
        brighter = np.clip(picture.astype(np.int16) + np.where(np.arange(picture.shape[1]) < 40, 20, 0), 0, 255)
        assert detector(brighter.astype(np.uint8), 2.1, SOURCE).moving is moves
