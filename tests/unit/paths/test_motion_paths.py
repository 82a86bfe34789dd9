"""--motion on the host paths' fronts (software, baseline): every decoded frame gets its small luma picture and the
gate's verdict; frames it skips come out not inferred, like those --detect-fps leaves out. On a real clip of people
(real face photos) walking across a still scene, one after the other (tests/support/passes.py)."""

from __future__ import annotations

import numpy as np
import pytest
from passes import write_passes_clip

from zerocopy.config import RunConfig
from zerocopy.infer.model import WrappedModel, make_core, resolve_spec
from zerocopy.motion.detector import Motion
from zerocopy.paths import BaselineFront, OpenRequest, SoftwareFront
from zerocopy.paths.rate import DetectRate

FPS = 15


@pytest.fixture(scope="module")
def walks(tmp_path_factory):
    path = tmp_path_factory.mktemp("motion") / "walks.mp4"
    return path, write_passes_clip(path, passes=2, walk_s=2.0, gap_s=5.0, fps=FPS, width=320, height=180)


@pytest.fixture(scope="module")
def models(face_model_path):
    core = make_core(None)
    spec = resolve_spec("face", core=core)
    return {kind: WrappedModel(core, spec, kind) for kind in ("nv12", "bgr")}


def frames_of(front, clip, model, busy=None, keep_images=False, **settings) -> list:
    config = RunConfig(model="face", path=front.name, **settings).resolve(spec=model.spec, device="CPU")
    stream = front.open(clip, OpenRequest(model=model, config=config, va=None, busy=busy, keep_images=keep_images))
    try:
        return list(stream)
    finally:
        stream.close()


@pytest.mark.parametrize("front", [SoftwareFront(), BaselineFront()], ids=lambda f: f.name)
def test_the_gate_infers_while_people_walk_and_skips_the_still_scene(walks, models, front):
    clip, passes = walks
    frames = frames_of(front, clip, models[front.input_kind], detect_fps=5, motion=True, motion_keepalive=3.0)
    rate = DetectRate(5, FPS)
    due = [rate.take(f.index, f.pts) for f in frames]
    assert all(isinstance(f.motion, Motion) for f in frames)
    assert frames[0].inferred and frames[0].motion.calibrating
    for f, is_due in zip(frames, due, strict=True):
        assert f.skipped_by == (None if f.inferred else "motion" if is_due else "detect_fps")
        assert bool(f.inputs) is f.inferred  # a frame skipped is not scaled
    walking = {i for p in passes for i in range(p.first + 3, p.last - 3)}
    assert all(f.inferred for f, d in zip(frames, due, strict=True) if d and f.index in walking)
    assert all(f.motion.moving for f in frames if f.index in walking)
    inferred = sum(f.inferred for f in frames)
    assert inferred < 0.6 * sum(due)  # 2 s walks in 5 s gaps; measured 0.28 (27 of 95)
    away = [(p.first - FPS, p.last + FPS) for p in passes]  # a second around each pass
    quiet = [f for f in frames if f.index > 20 and not any(a <= f.index <= b for a, b in away)]
    assert quiet and not any(f.motion.moving for f in quiet)
    keepalive = [f.pts for f in quiet if f.inferred]
    assert keepalive and all(b - a >= 3.0 - 0.01 for a, b in zip(keepalive, keepalive[1:], strict=False))


@pytest.mark.parametrize("front", [SoftwareFront(), BaselineFront()], ids=lambda f: f.name)
def test_busy_infers_every_due_frame(walks, models, front):
    clip, _ = walks
    frames = frames_of(front, clip, models[front.input_kind], busy=lambda t: True, detect_fps=5, motion=True)
    rate = DetectRate(5, FPS)
    assert [f.inferred for f in frames] == [rate.take(f.index, f.pts) for f in frames]


@pytest.mark.parametrize("front", [SoftwareFront(), BaselineFront()], ids=lambda f: f.name)
def test_without_motion_nothing_changes(walks, models, front):
    clip, _ = walks
    frames = frames_of(front, clip, models[front.input_kind], detect_fps=5)
    rate = DetectRate(5, FPS)
    assert [f.inferred for f in frames] == [rate.take(f.index, f.pts) for f in frames]
    assert all(f.motion is None for f in frames)
    assert {f.skipped_by for f in frames} == {None, "detect_fps"}


def test_the_baseline_converts_each_frame_once_and_draws_the_frames_skipped(walks, models):
    clip, _ = walks
    frames = frames_of(BaselineFront(), clip, models["bgr"], keep_images=True, detect_fps=5, motion=True)
    skipped = [f for f in frames if not f.inferred]
    assert skipped and all(f.picture is not None for f in frames)
    plain = frames_of(BaselineFront(), clip, models["bgr"], keep_images=True)
    for f in skipped[::25] + [f for f in frames if f.inferred][::10]:
        assert np.array_equal(f.picture.to_ndarray(format="bgr24"), plain[f.index].picture.to_ndarray(format="bgr24"))
