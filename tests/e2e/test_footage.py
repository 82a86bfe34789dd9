"""Detection with the defaults on footage as a fixed camera sees it (issue 9): several real faces
from 8 % of the frame height up, pasted at known places so the true boxes are known by construction,
720p H.264 and 1080p HEVC, plus face-free scenes (a cat, a cup of coffee, a rocket, a garage).

Targets: recall ≥ 0.9 (IoU ≥ 0.4 with the true box), ≤ 0.05 false detections per frame, at most 2 %
of faces with a second box, large faces still found, every frame in order, face-free scenes quiet.
"""

import numpy as np
import pytest
from conftest import read_jsonl, run_cli
from footage import CROWDS, FREE, LARGE

from zerocopy.agreement import score_detections
from zerocopy.catalog import CATALOG, DEFAULT_MODEL


def default_args() -> list[str]:
    """No --model and, once `detect` takes the model's own threshold by default, no --threshold."""
    from zerocopy.cli import build_parser

    if build_parser().parse_args(["detect", "x"]).threshold is None:
        return []
    return ["--threshold", str(CATALOG[DEFAULT_MODEL].threshold)]


def detect(clips, specs, tmp_path, *extra):
    truth, lines = [], []
    for name, spec in specs.items():
        path, t = clips(name, spec)
        out = tmp_path / f"{name}.jsonl"
        assert run_cli("detect", path, "--path", "software", "--json", out, "--quiet", *default_args(), *extra) == 0
        got = read_jsonl(out)
        assert [x["frame"] for x in got] == list(range(spec.frames)), name
        assert {(x["width"], x["height"]) for x in got} == {(spec.width, spec.height)}
        truth += t
        lines += got
    return truth, lines


@pytest.mark.parametrize("name", CROWDS)
def test_several_small_faces_are_found_once_each(name, clips, tmp_path):
    truth, lines = detect(clips, {name: CROWDS[name]}, tmp_path)
    heights = np.concatenate(truth)[:, 3] - np.concatenate(truth)[:, 1]
    assert heights.min() < 0.085 * CROWDS[name].height  # the smallest faces are there
    s = score_detections(truth, lines)
    assert s["recall"] >= 0.9, s
    assert s["false_per_frame"] <= 0.05, s
    assert s["duplicate_share"] <= 0.02, s


def test_face_free_scenes_stay_quiet(clips, tmp_path):
    truth, lines = detect(clips, FREE, tmp_path)
    s = score_detections(truth, lines)
    assert s["frames"] == sum(spec.frames for spec in FREE.values())
    assert s["false_per_frame"] <= 0.05, s


def test_large_faces_are_still_found(clips, tmp_path):
    truth, lines = detect(clips, LARGE, tmp_path)
    s = score_detections(truth, lines)
    assert s["recall"] >= 0.95, s
    assert s["false_per_frame"] <= 0.05 and s["duplicate_share"] <= 0.02, s


def test_the_baseline_finds_the_same_faces(clips, tmp_path):
    """The baseline antialiases as the software path does (cv2.INTER_AREA): same recall, same boxes."""
    from zerocopy.agreement import compare_runs

    name = "crowd-1080p-hevc.mp4"
    truth, sw = detect(clips, {name: CROWDS[name]}, tmp_path)
    path, _ = clips(name, CROWDS[name])
    out = tmp_path / "base.jsonl"
    assert run_cli("detect", path, "--path", "baseline", "--json", out, "--quiet", *default_args()) == 0
    base = read_jsonl(out)
    assert score_detections(truth, base)["recall"] >= 0.9
    agree = compare_runs(sw, base)
    assert agree["matched_share"] >= 0.95 and agree["extra"] <= 0.05 * len(truth), agree
