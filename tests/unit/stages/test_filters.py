"""`--filter`'s box filters as the run's stage (`stages.filters.ObjectFilters`): each filter drops the boxes it
should on real `Detections`, the others pass, an input's own filters replace the run's, and the report counts the
boxes dropped per label and filter."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import detect_quiet, run_cli

from zerocopy.config import RunConfig
from zerocopy.detections import Detections
from zerocopy.errors import ConfigError
from zerocopy.frames import PreparedFrame
from zerocopy.input_settings import InputSettings, input_settings
from zerocopy.samples import ClipSpec
from zerocopy.stages import InputInfo, StageChain
from zerocopy.stages.filters import ObjectFilters

W, H = 640, 360
NAMES = ["Person", "car", "dog"]


def frame(i: int = 0) -> PreparedFrame:
    return PreparedFrame(index=i, pts=i / 5.0, width=W, height=H, geometry=None, inputs={})


def dets(*rows: tuple[float, float, float, float, float, int]) -> Detections:
    """Boxes from rows of (x1, y1, x2, y2, score, label)."""
    a = np.array(rows, np.float32).reshape(-1, 6)
    return Detections(a[:, :4], a[:, 4], a[:, 5].astype(np.int32))


def kept(filters, detections: Detections, settings: InputSettings | None = None) -> tuple[Detections, ObjectFilters]:
    """The boxes one frame keeps through the stage, in a chain as the run has it, and the stage."""
    stage = ObjectFilters(RunConfig(filters=filters).filters, NAMES)
    chain = StageChain([stage])
    chain.begin(InputInfo(index=0, source="cam.mp4", camera="cam", rate=5.0, settings=settings or InputSettings()))
    return chain(frame(), detections, 0, lambda s, e: e).detections, stage


def boxes_of(d: Detections) -> list[list[float]]:
    return d.xyxy.tolist()


def test_min_score_drops_boxes_scored_below_it_of_its_label_only():
    out, stage = kept(["person:min_score=0.6"], dets((0, 0, 50, 100, 0.55, 0), (0, 0, 50, 100, 0.7, 0),
                                                    (0, 0, 50, 100, 0.55, 1)))
    assert out.scores.tolist() == pytest.approx([0.7, 0.55]) and out.labels.tolist() == [0, 1]
    assert stage.report().summary() == {"dropped": 1, "per_label": {"Person": {"min_score": 1}}}


def test_area_in_pixels_and_as_a_fraction_of_the_frame():
    small, mid, large = (0, 0, 40, 50, 0.9, 0), (0, 0, 100, 100, 0.9, 0), (0, 0, 400, 300, 0.9, 0)  # 2000, 1e4, 1.2e5
    out, stage = kept({"person": {"min_area": 5000, "max_area": 100000}}, dets(small, mid, large))
    assert boxes_of(out) == [[0, 0, 100, 100]]
    assert stage.summary()["per_label"] == {"Person": {"max_area": 1, "min_area": 1}}
    # a fraction of the 640x360 frame's 230400 px: 0.02 is 4608 px, 0.5 is 115200 px
    out, _ = kept(["person:min_area=0.02:max_area=0.5"], dets(small, mid, large))
    assert boxes_of(out) == [[0, 0, 100, 100]]


def test_an_area_of_1_is_one_pixel_not_the_whole_frame():
    tiny, small = (0, 0, 1, 1, 0.9, 0), (0, 0, 40, 50, 0.9, 0)
    out, stage = kept(["person:min_area=1"], dets(tiny, small))
    assert len(out) == 2 and stage.summary()["dropped"] == 0
    out, stage = kept(["person:max_area=1"], dets(tiny, small))
    assert boxes_of(out) == [[0, 0, 1, 1]] and stage.summary()["per_label"] == {"Person": {"max_area": 1}}


def test_ratio_is_width_over_height():
    tall, square, wide = (0, 0, 50, 200, 0.9, 1), (0, 0, 100, 100, 0.9, 1), (0, 0, 300, 100, 0.9, 1)
    out, stage = kept(["car:min_ratio=0.5:max_ratio=2"], dets(tall, square, wide))
    assert boxes_of(out) == [[0, 0, 100, 100]]
    assert stage.summary()["per_label"] == {"car": {"max_ratio": 1, "min_ratio": 1}}


def test_a_mask_drops_a_box_whose_bottom_centre_is_in_it():
    # the mask: the frame's left half (fractions); a box's bottom-centre, not its area, decides
    mask = "0,0,0.5,0,0.5,1,0,1"
    left, straddling, right = (100, 50, 200, 150, 0.9, 2), (250, 50, 350, 150, 0.9, 2), (400, 50, 500, 150, 0.9, 2)
    out, stage = kept([f"dog:mask={mask}"], dets(left, straddling, right))
    assert boxes_of(out) == [[400, 50, 500, 150]]  # the straddling box's bottom-centre, x = 300, is in the mask
    assert stage.summary() == {"dropped": 2, "per_label": {"dog": {"mask": 2}}}
    out, _ = kept({"dog": {"mask": [mask, "400,0,640,0,640,360,400,360"]}}, dets(left, right))  # pixels too
    assert len(out) == 0


def test_a_box_failing_several_filters_counts_once_under_the_first():
    out, stage = kept(["person:min_area=5000:min_score=0.8"], dets((0, 0, 10, 10, 0.5, 0)))
    assert len(out) == 0 and stage.summary()["per_label"] == {"Person": {"min_area": 1}}


def test_an_inputs_own_filters_replace_the_runs():
    own = input_settings({"filters": ["car:min_score=0.9"]})
    out, stage = kept(["person:min_score=0.95"], dets((0, 0, 50, 100, 0.9, 0), (0, 0, 50, 100, 0.8, 1)), own)
    assert out.labels.tolist() == [0]  # the person stays: the run's filter is not this input's
    assert stage.summary()["per_label"] == {"car": {"min_score": 1}}


def test_only_a_threshold_drops_nothing_and_reports_nothing():
    out, stage = kept(["person:threshold=0.9"], dets((0, 0, 50, 100, 0.5, 0)))
    assert len(out) == 1 and stage.report() is None


def test_a_label_the_model_lacks_is_an_error():
    with pytest.raises(ConfigError, match="filter: the model has no label 'cat'"):
        ObjectFilters(RunConfig(filters=["cat:min_score=0.5"]).filters, NAMES)


def test_frames_not_inferred_and_empty_frames_pass_unchanged():
    stage = ObjectFilters(RunConfig(filters=["person:min_score=0.5"]).filters, NAMES)
    stage.begin(InputInfo(index=0, source="cam.mp4", camera="cam", rate=5.0))
    assert stage(frame(), None, 0) == (None, [])
    empty = Detections.empty()
    assert stage(frame(), empty, 0)[0] is empty


@pytest.mark.slow
def test_a_detect_run_drops_the_boxes_a_filter_says_and_reports_them(clips, tmp_path, capsys):
    """`zerocopy detect --filter`: the common clip's faces, found without a filter, all dropped by a min_area of
    nine tenths of the frame; the report counts them, and the run's summary line says so."""
    path, _ = clips("h264.mp4", ClipSpec(frames=20))
    plain, filtered = tmp_path / "plain.json", tmp_path / "filtered.json"
    assert detect_quiet(path, "--report", plain) == 0
    found = json.loads(plain.read_text())["detections"]
    assert found > 0 and "filters" not in json.loads(plain.read_text())
    assert run_cli("detect", path, "--filter", "face:min_area=0.9", "--report", filtered) == 0
    report = json.loads(filtered.read_text())
    assert report["detections"] == 0 and report["filters"] == {"dropped": found,
                                                               "per_label": {"face": {"min_area": found}}}
    assert f"filters dropped {found} box(es); face: min_area {found}" in capsys.readouterr().err
