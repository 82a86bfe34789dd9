"""Far objects found without tiles (issue 39): on a 1080p garden where a person at 13 % and a cat at 9 % of the frame
height walk across (tests/support/farclip.py), `--model objects --detect-fps 5 --motion` finds each on ≥ 90 % of the
inferred frames with regions (the default), where the whole frame alone misses the cat (measured: 0 of 51) and about
a quarter of the person's frames (measured 36 and 37 of 51). The figures and the CPU beside `--tiles 2`:
scripts/bench_regions.py."""

from __future__ import annotations

import json

import pytest
from conftest import load_script, read_jsonl, run_cli
from farclip import WALKERS, write_far_clip

from zerocopy.roi.regions import MOST

pytestmark = pytest.mark.slow
BENCH = load_script("bench_regions")  # the truth (the model's box on each still photo) and the recall count


@pytest.fixture(scope="module")
def far(tmp_path_factory):
    path = tmp_path_factory.mktemp("far") / "far.mp4"
    return path, BENCH.truth_boxes(write_far_clip(path))


def detect(clip, out, *extra) -> tuple[list[dict], dict]:
    lines, report = out / "run.jsonl", out / "run.report.json"
    assert run_cli("detect", clip, "--model", "objects", "--detect-fps", "5", "--motion", "--path", "software",
                   "--json", lines, "--report", report, "--quiet", *extra) == 0
    return read_jsonl(lines), json.loads(report.read_text())


def test_regions_find_the_far_person_and_cat_on_nine_inferred_frames_in_ten(far, tmp_path):
    clip, truth = far
    lines, report = detect(clip, tmp_path)
    for w in WALKERS:
        hits, total = BENCH.recall(lines, truth[w.label], w.label)
        assert total >= 40 and hits >= 0.9 * total, (w.label, hits, total)
    regions = report["regions"]
    assert regions["frames"] == report["inferred_frames"]  # every inferred frame measured motion
    assert 0 < regions["per_frame"]["mean"] <= regions["per_frame"]["max"] <= MOST
    assert 0 < regions["covered"] < 0.25 and regions["inferences_added"] == regions["regions"] > 0


def test_without_regions_the_whole_frame_misses_the_cat(far, tmp_path):
    clip, truth = far
    lines, report = detect(clip, tmp_path, "--regions", "false")
    assert "regions" not in report
    hits, total = BENCH.recall(lines, truth["cat"], "cat")
    assert hits <= 0.1 * total, (hits, total)  # measured 0
