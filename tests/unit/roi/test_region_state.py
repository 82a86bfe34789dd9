"""What regions around motion did, per camera (`roi.region_state`): the stage sums each camera's frames over its
openings and says them as a record at most once a second of media time and at its input's end; the record measures
serve's `zerocopy_camera_region_*` figures."""

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

from zerocopy.detections import Detections
from zerocopy.frames import Geometry, PreparedFrame
from zerocopy.infer.model import ModelSpec, WrappedModel
from zerocopy.motion.detector import Motion
from zerocopy.roi.region_state import REGION_COVER, REGION_FRAMES, REGIONS, RegionState, RegionSums
from zerocopy.roi.regions import Regions
from zerocopy.stages.base import InputInfo
from zerocopy.stages.figures import Figures

RATE = 10.0


@pytest.fixture(scope="module")
def stage(tmp_path_factory) -> Regions:
    """The stage on a real (tiny) model: only its input size is asked while no square is chosen."""
    p = ops.parameter([1, 32, 32, 3], ov.Type.f32, name="image")
    out = ops.reduce_mean(p, np.array([1, 2]), keep_dims=False)
    out.output(0).get_tensor().set_names({"scores"})
    path = tmp_path_factory.mktemp("regions") / "tiny.xml"
    ov.save_model(ov.Model([ops.result(out)], [p], "tiny"), path)
    spec = ModelSpec(path=path, name="tiny", labels=(), postprocess="classifier", resize="stretch", colour="BGR",
                     mean=0.0, scale=1.0, task="classify")
    return Regions(WrappedModel(ov.Core(), spec, "bgr"))


def frame(index: int) -> PreparedFrame:
    """An inferred frame whose motion chooses no square (nothing moves, nothing was found before)."""
    f = PreparedFrame(index=index, pts=index / RATE, width=640, height=360,
                      geometry=Geometry.fit(640, 360, 32, 32, "stretch"), inputs={}, motion=Motion())
    f.source = np.zeros((360, 640, 3), np.uint8)
    return f


def said(stage: Regions, frames: range, input: int = 0) -> list[RegionState]:
    out = []
    for i in frames:
        _, records = stage(frame(i), Detections.empty(), input)
        out += records
    return out


def test_a_cameras_figures_are_said_once_a_second_at_most_and_at_its_end_summed_over_its_openings(stage):
    stage.begin(InputInfo(index=0, source="door.mp4", camera="door", rate=RATE))
    first = said(stage, range(25))  # 2.4 s of media time
    assert [(r.camera, r.frames) for r in first] == [("door", 1), ("door", 11), ("door", 21)]
    assert first[0].type == "regions" and first[0].regions == 0 and first[0].covered == 0.0
    (last,) = stage.end(0)
    assert last.frames == 25
    stage.begin(InputInfo(index=0, source="door.mp4", camera="door", rate=RATE))  # opened again: its time anew
    assert [r.frames for r in said(stage, range(3))] == [26]
    assert stage.times.frames == 28  # the run report's figures: the whole run's
    assert stage.end(0)[0].frames == 28 and stage.end(0) == []  # (said once)


def test_a_frame_without_motion_measured_is_not_counted(stage):
    stage.begin(InputInfo(index=1, source="yard.mp4", camera="yard", rate=RATE))
    f = frame(0)
    f.motion = None
    assert stage(f, Detections.empty(), 1)[1] == [] and stage.end(1) == []


def test_a_region_state_measures_its_cameras_figures():
    sums = RegionSums()
    for squares, share in ((0, 0.0), (2, 0.25), (1, 0.125), (3, 0.5)):
        sums.add(squares, share)
    state = RegionState.of("door", sums)
    figures = Figures()
    state.measure(figures)
    assert figures.get(REGION_FRAMES) == {(): 4.0} and figures.get(REGIONS) == {(): 6.0}
    assert figures.get(REGION_COVER) == {(): pytest.approx(0.21875)}
    assert state.to_record() == {"type": "regions", "camera": "door", "frames": 4, "regions": 6, "covered": 0.2188}
