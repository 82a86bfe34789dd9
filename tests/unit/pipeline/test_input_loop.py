"""zerocopy.pipeline.inputs: one input loop, whether inputs run one after the other or all at once."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np
import pytest
from faults import write_poison_model

from zerocopy import paths
from zerocopy.config import RunConfig
from zerocopy.infer.model import WrappedModel, make_core, resolve_spec
from zerocopy.pipeline import FrameDone, InputBegin, InputEnd, Pipeline
from zerocopy.samples import ClipSpec

FAILS_AT = 5  # the failing input's first white frame: the poison model's request for it fails


def _white_from(path: Path, first_white: int, frames: int = 12) -> str:
    """A real H.264 clip of grey frames that turns white at `first_white`."""
    with av.open(str(path), "w") as out:
        s = out.add_stream("libx264", rate=25)
        s.width, s.height, s.pix_fmt = 320, 240, "yuv420p"
        for i in range(frames):
            level = 255 if i >= first_white else 96
            frame = av.VideoFrame.from_ndarray(np.full((240, 320, 3), level, np.uint8), format="rgb24")
            frame.pts = i
            out.mux(s.encode(frame))
        out.mux(s.encode(None))
    return str(path)


def _run(model_path: Path, sources: list[str], inputs: int, max_frames: int | None) -> list:
    """Every event of a software run on the CPU, each as (kind, input, what it says of that input)."""
    core = make_core(None)
    model = WrappedModel(core, resolve_spec(str(model_path), core=core), "nv12")
    config = RunConfig(model=str(model_path), path="software").resolve(spec=model.spec, device="CPU")
    pipeline = Pipeline(model, paths.front_for("software"), config, inputs=inputs)
    said = []
    for event in pipeline.events(sources, max_frames):
        if isinstance(event, InputBegin):
            said.append(("begin", event.input, event.source))
        elif isinstance(event, FrameDone):
            said.append(("frame", event.input, event.frame.index))
        else:
            assert isinstance(event, InputEnd)
            error = (event.outcome.error or "").split(": ", 1)[-1]  # (the source's name comes first)
            said.append(("end", event.input, (event.outcome.frames, error, event.began)))
    return said


@pytest.mark.parametrize("max_frames", [None, 8])
def test_one_after_the_other_and_all_at_once_give_each_input_the_same_events(max_frames, clips, tmp_path):
    """An input whose request fails at its 6th frame, between two good ones: run one after the other and all at
    once, each input gets the same events (its frames up to the failure, then its end with the error), because
    both are the one loop; one after the other, each input's events come together, in the list's order."""
    poison = write_poison_model(tmp_path / "poison.xml")
    good, truth = clips("loop.mp4", ClipSpec(frames=12, width=320, height=240))
    failing = _white_from(tmp_path / "turns-white.mp4", FAILS_AT)
    sources = [str(good), failing, str(good)]
    one_by_one = _run(poison, sources, inputs=1, max_frames=max_frames)
    at_once = _run(poison, sources, inputs=3, max_frames=max_frames)

    def of(said: list, i: int) -> list:
        return [e for e in said if e[1] == i]

    frames = min(len(truth), max_frames or len(truth))
    for i in (0, 2):
        assert of(one_by_one, i) == of(at_once, i)
        assert [e[2] for e in of(one_by_one, i) if e[0] == "frame"] == list(range(frames))
        assert of(one_by_one, i)[-1] == ("end", i, (frames, "", True))
    assert of(one_by_one, 1) == of(at_once, 1)
    assert [e[2] for e in of(one_by_one, 1) if e[0] == "frame"] == list(range(FAILS_AT))
    end = of(one_by_one, 1)[-1]
    assert end[2][0] == FAILS_AT and end[2][1].startswith("inference failed") and end[2][2]
    assert [e[1] for e in one_by_one] == sorted(e[1] for e in one_by_one)  # input by input
    assert [e[0] for e in one_by_one if e[0] != "frame"] == ["begin", "end"] * 3


def test_inputs_one_after_the_other_are_let_go_as_each_ends(face_model_path, clips):
    """The review of issue 37: the one loop kept every ended input's stream (its decoder, its frames' buffers) until
    the run ended, so `detect` over a folder of thousands of clips grew without bound (1.6 GB for 200). Counted by
    the opened streams still alive at each input's end: those under way, never one per input so far."""
    import weakref

    clip, _ = clips("short.mp4", ClipSpec(frames=3, width=320, height=240))
    software = paths.front_for("software")
    opened: list[weakref.ref] = []

    class Watched(type(software)):
        def open(self, source, req):
            stream = super().open(source, req)
            opened.append(weakref.ref(stream))
            return stream

    core = make_core(None)
    model = WrappedModel(core, resolve_spec(str(face_model_path), core=core), "nv12")
    config = RunConfig(model=str(face_model_path), path="software").resolve(spec=model.spec, device="CPU")
    pipeline = Pipeline(model, Watched(), config, inputs=1)
    alive = []
    for event in pipeline.events([str(clip)] * 8, None):
        if isinstance(event, InputEnd):
            alive.append(sum(ref() is not None for ref in opened))
    assert len(opened) == 8 and max(alive) <= 2, alive


def test_a_feeder_reads_only_the_first_frame_before_the_run_commits_to_its_path(face_model_path, clips):
    """The review of issue 37: a feeder read `feeder_depth` frames ahead while the model compiled for the first
    frame's trial, and those came out together, late (a paced run's p95 latency went from 97 ms to 1.7 s). Now only
    the first frame is prepared before the commit: counted by the frames prepared while the run was not committed."""
    clip, _ = clips("twelve.mp4", ClipSpec(frames=12, width=320, height=240))
    software = paths.front_for("software")

    class Counting(type(software)):
        early = 0

        def open(self, source, req):
            stream = super().open(source, req)
            prepare = stream.prepare

            def counted(picture):
                Counting.early += not pipeline.committed
                return prepare(picture)

            stream.prepare = counted
            return stream

    core = make_core(None)
    model = WrappedModel(core, resolve_spec(str(face_model_path), core=core), "nv12")
    config = RunConfig(model=str(face_model_path), path="software").resolve(spec=model.spec, device="CPU")
    pipeline = Pipeline(model, Counting(), config, inputs=1)
    frames = [e for e in pipeline.events([str(clip)], None) if isinstance(e, FrameDone)]
    assert len(frames) == 12 and Counting.early == 1
