"""A GPU path that fails at any stage before its first result ends in the next path, with the reason.

Faults are injected at each stage with the real failure of that stage (see `support/faults.py`): OpenVINO
refusing to compile, to bind, or to run the first request; a decoder that never gives a frame. The
run must commit to a path only after the first frame went through inference, so the sinks see
every frame exactly once, from the path that ran.
"""

from __future__ import annotations

import json

import av
import numpy as np
import pytest
from conftest import read_jsonl
from faults import StandInFront, write_undecodable, write_white_clip

from zerocopy.api import Detector
from zerocopy.cli.detect import Outputs, run_detect
from zerocopy.errors import PathUnavailable
from zerocopy.paths import SoftwareFront
from zerocopy.samples import ClipSpec

STAGE_REASONS = {
    "compile": "cannot compile poison for CPU: Device with \"not-a-remote-context\" name is not registered",
    "bind": "binding the first frame on CPU failed: ",
    "inference": "first frame on CPU: inference failed: [CPU] Reshape node",
    "decode": "the GPU cannot decode h264",
}


@pytest.fixture
def stand_in(tmp_path):
    """The paths for `auto` to try: a stand-in for `copy` failing at the given stage (with no static
    refusal, as on a machine with it all), then the real software path."""

    def fronts(stage: str) -> list:
        undecodable = write_undecodable(tmp_path / "undecodable.mkv") if stage == "decode" else None
        return [StandInFront("copy", stage, undecodable), SoftwareFront()]

    return fronts


def detect(inputs: list[str], *, fronts=None, model=None, path: str = "auto", **outputs):
    """`zerocopy detect` as the CLI runs it (the same `run_detect`), with the paths injected."""
    with Detector(model, path=path, fronts=fronts) as det:
        return run_detect(det, inputs, Outputs(**outputs))


def _frameless_clip(path) -> str:
    """An MP4 cut 50 bytes into its media data: it opens (the index comes first), then gives no frame."""
    from zerocopy.samples import write_clip

    write_clip(path, ClipSpec(width=320, height=240, frames=10), container_options={"movflags": "faststart"})
    data = path.read_bytes()
    path.write_bytes(data[: data.index(b"mdat") + 54])
    return str(path)


@pytest.mark.parametrize("stage", sorted(STAGE_REASONS))
def test_a_failure_before_the_first_result_falls_back_with_its_reason(stage, stand_in, clips, tmp_path,
                                                                       poison_model):
    clip, truth = clips("fallback.mp4", ClipSpec(frames=12))
    jsonl, video = tmp_path / "d.jsonl", tmp_path / "out.mp4"
    run = detect([str(clip)], fronts=stand_in(stage), model=str(poison_model), json=str(jsonl), output=str(video))
    assert run.choice.name == "software"
    assert STAGE_REASONS[stage] in run.choice.refused["copy"], run.choice.refused
    assert run.report["refused"]["copy"] == run.choice.refused["copy"]
    # every frame once, in order, from the path that ran; the MP4 is complete and playable
    assert [line["frame"] for line in read_jsonl(jsonl)] == list(range(len(truth)))
    with av.open(str(video)) as c:
        assert sum(1 for _ in c.decode(video=0)) == len(truth)


def test_parallel_inputs_try_the_path_on_the_first_input_that_gives_a_frame(stand_in, clips, tmp_path,
                                                                             poison_model):
    """`--parallel` with a first input that gives no frame: the trial runs on the next input, so the
    failing path is still refused before anything is delivered and `auto` ends on software."""
    clip, truth = clips("fallback.mp4", ClipSpec(frames=12))
    jsonl = tmp_path / "d.jsonl"
    run = detect([_frameless_clip(tmp_path / "cut.mp4"), str(clip)], fronts=stand_in("inference"),
                 model=str(poison_model), json=str(jsonl), parallel=True)
    assert run.choice.name == "software", run.choice
    assert STAGE_REASONS["inference"] in run.choice.refused["copy"]
    assert [line["frame"] for line in read_jsonl(jsonl) if line["input"] == 1] == list(range(len(truth)))


@pytest.mark.parametrize("stage", ["compile", "inference"])
def test_an_explicit_gpu_path_that_fails_at_first_contact_is_refused_naming_the_stage(stage, stand_in, clips,
                                                                                       poison_model, tmp_path):
    """(The CLI prints each reason of a `PathUnavailable` on a line and exits 1: tests/native, e2e/test_bench.)"""
    clip, _ = clips("fallback.mp4", ClipSpec(frames=12))
    jsonl = tmp_path / "d.jsonl"
    with pytest.raises(PathUnavailable) as e:
        detect([str(clip)], fronts=stand_in(stage), model=str(poison_model), path="copy", json=str(jsonl))
    assert STAGE_REASONS[stage] in e.value.reasons["copy"][0] and list(e.value.reasons) == ["copy"]
    assert not jsonl.exists()  # nothing was written by a path that did not commit


def test_a_failed_input_after_commit_is_that_inputs_error_and_the_next_one_runs(poison_model, clips, tmp_path):
    """After the path committed, a request failing mid-input ends that input only; the sinks stay valid."""
    bright = write_white_clip(tmp_path / "white.mp4")
    clip, truth = clips("fallback.mp4", ClipSpec(frames=12))
    jsonl = tmp_path / "d.jsonl"
    run = detect([str(clip), str(bright), str(clip)], model=str(poison_model), path="software", json=str(jsonl))
    errors = [i.error for i in run.result.inputs]
    assert errors[0] is None and errors[2] is None
    assert errors[1] and "inference failed" in errors[1]
    lines = read_jsonl(jsonl)
    assert [line["frame"] for line in lines if line["source"] == str(clip)] == list(range(len(truth))) * 2


def test_report_json_names_the_refusal(stand_in, clips, tmp_path, poison_model):
    clip, _ = clips("fallback.mp4", ClipSpec(frames=12))
    report = tmp_path / "r.json"
    detect([str(clip)], fronts=stand_in("bind"), model=str(poison_model), report=str(report))
    r = json.loads(report.read_text())
    assert r["path"] == "software" and "binding the first frame" in r["refused"]["copy"]
    assert r["refused_summary"] == "binding the first frame failed"  # from the reason's code
    assert np.isfinite(r["fps"])


def test_parallel_inputs_that_give_no_frame_do_not_stop_the_one_that_works(clips, tmp_path):
    """The first inputs give nothing (cut before its first frame; noise for parameter sets): the
    trial runs on the next, every input ends with its own outcome."""
    clip, truth = clips("fallback.mp4", ClipSpec(frames=12))
    jsonl, report = tmp_path / "d.jsonl", tmp_path / "r.json"
    inputs = [_frameless_clip(tmp_path / "cut.mp4"), str(write_undecodable(tmp_path / "noise.mkv")), str(clip)]
    run = detect(inputs, json=str(jsonl), report=str(report), parallel=True)
    assert run.choice.name == "software"
    assert [line["frame"] for line in read_jsonl(jsonl) if line["input"] == 2] == list(range(len(truth)))
    entries = json.loads(report.read_text())["inputs"]
    assert [e["frames"] for e in entries] == [0, 0, len(truth)]
    assert entries[0]["error"] and entries[1]["error"] and entries[2]["error"] is None
