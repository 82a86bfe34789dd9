"""zerocopy.stages: the contract of what runs after inference, the chain that runs a run's stages in order, and the
stages of the labels rule. The built-in stages (tiles, region models, tracking) are checked against the contract."""

from __future__ import annotations

import av
import numpy as np
import pytest

from zerocopy.config import RunConfig
from zerocopy.detections import Detections
from zerocopy.errors import InferenceError
from zerocopy.frames import PreparedFrame
from zerocopy.postprocess import LabelChoice
from zerocopy.roi.stage import RoiStage
from zerocopy.roi.tiles import Tiler
from zerocopy.stages import InputInfo, Stage, StageBase, StageChain
from zerocopy.stages.labels import Anonymise, DetectedClasses, ShownClasses
from zerocopy.track.stage import InputTracks


def boxes(*labels: int) -> Detections:
    n = len(labels)
    xyxy = np.array([[10 + 40 * i, 10, 40 + 40 * i, 50] for i in range(n)], np.float32).reshape(n, 4)
    return Detections(xyxy, np.full(n, 0.9, np.float32), np.array(labels, np.int32))


def frame(source: object = "decoded") -> PreparedFrame:
    return PreparedFrame(index=0, pts=0.0, width=320, height=180, geometry=None, inputs={}, source=source)


def info(index: int = 0, classes: tuple[int, ...] | None = None) -> InputInfo:
    return InputInfo(index=index, source=f"cam{index}.mp4", camera=f"cam{index}", rate=25.0, classes=classes)


class Recorder(StageBase):
    """Keeps the boxes of one label, records what it saw and whether the decoded frame was still there."""

    def __init__(self, name: str, label: int | None = None, crops: bool = False, own_times: bool = False,
                 on_skipped: bool = False, fails: Exception | None = None):
        self.name, self.label, self.crops, self.own_times, self.on_skipped = name, label, crops, own_times, on_skipped
        self.fails = fails
        self.seen: list[tuple[int | None, bool]] = []
        self.begun: list[InputInfo] = []

    def begin(self, input: InputInfo) -> None:
        self.begun.append(input)

    def __call__(self, frame, detections, input):
        self.seen.append((None if detections is None else len(detections), frame.source is not None))
        if self.fails is not None:
            raise self.fails
        if detections is not None and self.label is not None:
            detections = detections[detections.labels == self.label]
        return detections, [f"{self.name}:{input}"]

    def end(self, input: int) -> list:
        return [f"{self.name} ended {input}"]


def no_failure(stage, e):
    raise AssertionError(f"not a stage that crops: {stage.name} {e}")


def test_every_stage_in_order_with_its_events_and_the_decoded_frame_let_go_after_the_last_that_crops():
    first, crop, last = Recorder("first", label=1), Recorder("crop", crops=True), Recorder("last")
    chain = StageChain([first, crop, last])
    chain.begin(info(3))
    f = frame()
    chained = chain(f, boxes(1, 2, 1), 3, no_failure)
    assert chained.detections.labels.tolist() == [1, 1]
    assert chained.events == ["first:3", "crop:3", "last:3"]
    assert crop.seen == [(2, True)] and last.seen == [(2, False)] and f.source is None
    assert [i.index for i in first.begun] == [3] and chain.end(3) == ("first ended 3", "crop ended 3", "last ended 3")
    assert chain.crops and not StageChain([first, last]).crops


def test_a_frame_left_out_goes_only_through_the_stages_that_see_such_frames():
    quiet, predicts = Recorder("quiet"), Recorder("predicts", on_skipped=True)
    chained = StageChain([quiet, predicts])(frame(), None, 0, no_failure)
    assert quiet.seen == [] and predicts.seen == [(None, True)]
    assert len(chained.detections) == 0 and chained.events == ["predicts:0"]  # an empty set, never None


def test_only_the_stages_that_do_not_time_themselves_count_as_postprocessing():
    class Slow(Recorder):
        def __call__(self, frame, detections, input):
            import time
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < 0.02:
                pass
            return detections, []

    assert StageChain([Slow("own", own_times=True)])(frame(), boxes(0), 0, no_failure).untimed < 0.02
    assert StageChain([Slow("counted")])(frame(), boxes(0), 0, no_failure).untimed >= 0.02


def test_a_failure_of_a_stage_that_crops_is_said_by_the_pipeline_others_propagate():
    said = []

    def failed(stage, e):
        said.append((stage.name, str(e)))
        return InferenceError(f"{stage.title} failed: {e}")

    with pytest.raises(InferenceError, match="crop failed: no surface"):
        StageChain([Recorder("crop", crops=True, fails=RuntimeError("no surface"))])(frame(), boxes(0), 0, failed)
    assert said == [("crop", "no surface")]
    with pytest.raises(KeyError):
        StageChain([Recorder("plain", fails=KeyError("bug"))])(frame(), boxes(0), 0, failed)
    assert len(said) == 1


def test_stage_names_are_unique_and_key_the_reports():
    with pytest.raises(ValueError, match="share a name"):
        StageChain([Recorder("a"), Recorder("a")])
    tracks = InputTracks(RunConfig.make({"track": True}), ("face",))
    chain = StageChain([Recorder("a"), tracks])
    assert chain.reports() == {"tracking": tracks} and chain.get("tracking") is tracks
    assert chain.reports()["tracking"].summary() == {"objects": 0, "per_label": {}}


def test_the_built_in_stages_keep_the_contract():
    tracks = InputTracks(RunConfig.make({"track": True}), ("face",))
    labels = LabelChoice(shown=(0,), hidden=(1,))
    made = [RoiStage([]), Tiler.__new__(Tiler), tracks, DetectedClasses(labels), Anonymise(labels, "fill"),
            ShownClasses(labels)]
    for stage in made:
        assert isinstance(stage, Stage), stage
    assert [s.name for s in made] == ["rois", "tiles", "tracking", "detected-classes", "anonymise", "classes"]
    assert RoiStage([]).crops and Tiler.crops and RoiStage([]).own_times and Tiler.own_times
    assert tracks.on_skipped and not tracks.crops
    assert RoiStage([]).title == "region models" and tracks.title == "tracking"


def test_an_inputs_own_classes_narrow_what_is_detected_and_reported_else_the_runs():
    labels = LabelChoice(shown=(0, 2), hidden=(1,))
    detected, shown = DetectedClasses(labels), ShownClasses(labels)
    chain = StageChain([detected, shown])
    chain.begin(info(0, classes=(2,)))
    chain.begin(info(1))
    # input 0's own classes: 2 reported; 1 detected (to be hidden) but never reported
    assert detected(frame(), boxes(0, 1, 2, 3), 0)[0].labels.tolist() == [1, 2]
    assert chain(frame(), boxes(0, 1, 2, 3), 0, no_failure).detections.labels.tolist() == [2]
    assert chain(frame(), boxes(0, 1, 2, 3), 1, no_failure).detections.labels.tolist() == [0, 2]  # the run's
    chain.begin(info(0))  # opened again without classes of its own: the run's
    assert chain(frame(), boxes(0, 1, 2), 0, no_failure).detections.labels.tolist() == [0, 2]


def test_anonymise_hides_the_hidden_labels_in_the_picture_before_anything_sees_it():
    picture = av.VideoFrame.from_ndarray(np.full((180, 320, 3), 200, np.uint8), format="rgb24")
    f = PreparedFrame(index=0, pts=0.0, width=320, height=180, geometry=None, inputs={}, picture=picture)
    dets, _ = Anonymise(LabelChoice(hidden=(1,)), "fill")(f, boxes(0, 1), 0)
    assert len(dets) == 2  # hiding is not filtering
    pixels = f.picture.to_ndarray(format="rgb24")
    assert (pixels[10:50, 10:40] == 200).all()  # label 0's box: untouched
    assert (pixels[15:45, 55:75] != 200).any()  # label 1's box: filled


def test_a_stage_that_guesses_boxes_for_a_frame_left_out_does_not_make_later_stages_see_it():
    """Tracking gives a frame `--detect-fps` left out the tracks' predicted boxes; a stage after it that does not
    see such frames (`on_skipped` False: zones, counts) is still not called on it."""
    class Predicts(Recorder):
        def __call__(self, frame, detections, input):
            super().__call__(frame, detections, input)
            return boxes(0), []

    predicts, later = Predicts("predicts", on_skipped=True), Recorder("later")
    assert len(StageChain([predicts, later])(frame(), None, 0, no_failure).detections) == 1 and later.seen == []
    StageChain([predicts, later])(frame(), boxes(0), 0, no_failure)
    assert later.seen == [(1, True)]


def test_an_input_s_own_settings_reach_the_stages_whole():
    from zerocopy.input_settings import InputSettings

    seen = Recorder("seen")
    own = InputSettings(detect_fps=2.0, classes=("face",))
    StageChain([seen]).begin(InputInfo(index=0, source="a", camera="a", rate=25.0, settings=own))
    assert seen.begun[0].settings is own and seen.begun[0].inferred_rate == 25.0  # (detect_fps given apart)


def test_a_stage_may_not_take_a_field_of_the_run_report():
    from zerocopy.pipeline.events import RunResult
    from zerocopy.report import _stage_reports
    from zerocopy.stats import RunClock, StepTimes

    tracks = InputTracks(RunConfig.make({"track": True}), ("face",))
    made = RunResult(inputs=[], steps=StepTimes(), clock=RunClock(), reports={"tracking": tracks})
    assert _stage_reports(made) == {"tracking": {"objects": 0, "per_label": {}}}
    assert made.stages is made.steps  # the deprecated name still reads the timed steps
    with pytest.raises(ValueError, match="a stage named 'config' would overwrite"):
        _stage_reports(RunResult(inputs=[], steps=StepTimes(), clock=RunClock(), reports={"config": tracks}))
