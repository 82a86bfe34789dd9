"""zerocopy.motion.gate: which frames are inferred with --motion, on scenes made from real photos."""

from motionscenes import SOURCE, Scene

from zerocopy.motion.detector import CALIBRATE_S
from zerocopy.motion.gate import KEYFRAME_WAIT_S, MEASURE_EVERY_S, Luma, MotionGate, MotionSpec
from zerocopy.paths.rate import DetectRate

FPS = 30.0


def gate(detect_fps=None, keepalive=10.0, busy=None) -> MotionGate:
    spec = MotionSpec(luma=lambda frame: frame, keepalive=keepalive, busy=busy)
    return MotionGate(spec, FPS, DetectRate(detect_fps, FPS) if detect_fps else None)


def verdicts(g: MotionGate, scene: Scene, frames: range, pts=lambda i: i / FPS) -> list:
    out = []
    for i in frames:
        picture, _ = scene.picture(i)
        out.append((i, g(i, pts(i), Luma(picture, *SOURCE))))
    return out


def inferred_times(seen) -> list[float]:
    return [i / FPS for i, v in seen if v.infer]


def test_a_still_scene_is_inferred_while_calibrating_then_once_a_keepalive():
    seen = verdicts(gate(keepalive=2.0), Scene(), range(round(10 * FPS)))
    times = inferred_times(seen)
    calibration = [t for t in times if t < CALIBRATE_S]
    assert len(calibration) == round(CALIBRATE_S * FPS)  # every frame of the first second
    later = [t for t in times if t >= CALIBRATE_S]
    gaps = [b - a for a, b in zip([calibration[-1], *later], later, strict=False)]
    assert len(later) == 4 and all(abs(g - 2.0) < 1.5 / FPS for g in gaps), later  # one every 2 s of media time
    assert {v.skipped_by for _, v in seen if not v.infer} == {"motion"}


def test_with_detect_fps_the_gate_picks_among_the_frames_due():
    scene = Scene(walk=(3.0, 6.0))
    seen = verdicts(gate(detect_fps=5), scene, range(round(10 * FPS)))
    rate = DetectRate(5, FPS)
    due = {i for i in range(round(10 * FPS)) if rate.take(i, i / FPS)}
    inferred = {i for i, v in seen if v.infer}
    assert inferred <= due
    assert {i for i, v in seen if v.skipped_by == "detect_fps"} == set(range(round(10 * FPS))) - due
    walking = {i for i in due if 3.3 <= i / FPS <= 5.7}
    assert walking <= inferred  # each due frame while someone walks
    quiet = {i for i in due if 1.5 <= i / FPS <= 2.9 or i / FPS >= 7.5}
    assert not quiet & inferred
    assert all(v.skipped_by == "motion" for i, v in seen if i in quiet)


def test_motion_between_due_frames_makes_the_next_due_frame_inferred():
    scene = Scene()
    g = gate(detect_fps=1)
    before = verdicts(g, scene, range(62))
    assert [i for i, v in before if v.infer] == [0] and before[60][1].skipped_by == "motion"
    for i in range(62, 62 + round(MEASURE_EVERY_S * FPS)):  # a flash as long as the gap between measurements,
        picture, _ = scene.picture(i)                          # on frames that are not due
        picture[20:60, 20:60] = 255
        assert g(i, i / FPS, Luma(picture, *SOURCE)).skipped_by == "detect_fps"
    rest = verdicts(g, scene, range(62 + round(MEASURE_EVERY_S * FPS), 91))
    assert [i for i, v in rest if v.infer] == [90]


def counted(g: MotionGate) -> list[int]:
    """The frames `g` makes a luma picture of, from now on."""
    made, luma = [], g.luma
    g.luma = lambda frame: made.append(frame) or luma(frame)
    return made


def test_motion_is_measured_on_the_frames_due_and_at_least_every_fifth_of_a_second():
    scene = Scene(walk=(3.0, 6.0))
    frames = range(round(10 * FPS))
    for detect_fps, every in ((5, 6), (1, 6), (None, 1)):  # 30 fps: every 6th frame is 0.2 s
        g = gate(detect_fps=detect_fps)
        made = counted(g)
        seen = verdicts(g, scene, frames)
        assert len(made) == len(frames) // every == g.measured, detect_fps
        if every > 1:  # the frames in between carry the last measurement
            assert all(v.motion is seen[i - i % every][1].motion for i, v in seen), detect_fps
    drawn = MotionGate(MotionSpec(luma=lambda frame: frame, boxes=True), FPS, DetectRate(5, FPS))
    made = counted(drawn)
    verdicts(drawn, scene, frames)
    assert len(made) == len(frames)  # --draw-motion: boxes on every frame


def test_busy_makes_every_due_frame_inferred():
    busy = [False]
    g = gate(detect_fps=5, busy=lambda t: busy[0])
    verdicts(g, Scene(), range(60))
    assert not any(v.infer for _, v in verdicts(g, Scene(), range(60, 90)))
    busy[0] = True
    seen = verdicts(g, Scene(), range(90, 120))
    assert [i for i, v in seen if v.infer] == [90, 96, 102, 108, 114]


def test_a_gap_in_the_timestamps_calibrates_again():
    g = gate(detect_fps=5)
    scene = Scene()
    verdicts(g, scene, range(90))
    after = verdicts(g, scene, range(90, 150), pts=lambda i: i / FPS + 20.0)  # a reconnection 20 s later
    assert g.recalibrations == 1
    assert after[0][1].infer and after[0][1].motion.calibrating
    assert sum(v.infer for _, v in after if v.motion.calibrating) == 5  # a second at --detect-fps 5
    assert not any(v.infer for _, v in after[40:])
    back = verdicts(g, scene, range(150, 160), pts=lambda i: (i - 150) / FPS)  # the stream started again
    assert g.recalibrations == 2 and back[0][1].motion.calibrating


def test_a_live_input_silent_for_seconds_calibrates_again():
    g = gate()
    picture, _ = Scene().picture(0)
    for i in range(60):
        g(i, i / FPS, Luma(picture, *SOURCE), arrived=100.0 + i / FPS)
    v = g(60, 60 / FPS, Luma(picture, *SOURCE), arrived=110.0)  # timestamps carried on, the wall clock jumped
    assert g.recalibrations == 1 and v.infer and v.motion.calibrating


class KeyLuma:
    """A luma picture that says whether its frame is a keyframe, as PyAV's frames do (`key_frame`)."""

    def __init__(self, luma: Luma, key_frame: bool):
        self.luma, self.key_frame = luma, key_frame


def keyed(key_every_s: float, keepalive: float = 3.0, ends_due=None) -> tuple[MotionGate, list[float]]:
    """A still scene through a gate (--detect-fps 5) whose frames say a keyframe comes every `key_every_s`: the
    media times inferred after calibration."""
    spec = MotionSpec(luma=lambda k: k.luma, keepalive=keepalive, ends_due=ends_due)
    g = MotionGate(spec, FPS, DetectRate(5, FPS))
    picture, _ = Scene().picture(0)
    every = round(key_every_s * FPS)
    inferred = [i / FPS for i in range(round(20 * FPS))
                if g(i, i / FPS, KeyLuma(Luma(picture, *SOURCE), i % every == 0)).infer]
    return g, [t for t in inferred if t > CALIBRATE_S]


def test_a_keepalive_waits_for_the_next_keyframe_where_they_come_often():
    _, times = keyed(key_every_s=2.0)
    assert times == [4.0, 8.0, 12.0, 16.0]  # due 3 s after calibration (~1 s), then 3 s after each: the next keyframe


def test_a_keepalive_does_not_wait_where_keyframes_are_far_apart():
    _, times = keyed(key_every_s=8.0)
    assert len(times) == 6 and all(abs(b - a - 3.0) < 0.25 for a, b in zip(times, times[1:], strict=False)), times


def test_an_end_due_is_inferred_on_the_first_keyframe_from_then():
    _, times = keyed(key_every_s=2.0, keepalive=100.0, ends_due=lambda: 5.1)
    # each keyframe while the stages say it has not ended (here: never); KEYFRAME_WAIT_S after, every due frame
    assert [t for t in times if t < 5.1 + KEYFRAME_WAIT_S] == [6.0, 8.0, 10.0]
    assert [t for t in times if t >= 5.1 + KEYFRAME_WAIT_S] == [round(i / 5, 1) for i in range(51, 100)]
