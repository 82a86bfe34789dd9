"""The region stage on real frames and real (tiny) OpenVINO models whose answer depends on the pixels of
the region they are given: the mean colour of the crop. A crop taken from the wrong place, the wrong
plane or in the wrong colour order gives the wrong answer."""

import av
import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

from zerocopy.detections import Detections
from zerocopy.frames import Geometry, PreparedFrame
from zerocopy.infer.model import ModelSpec, WrappedModel
from zerocopy.resize.regions import BgrRoiFeed, PlanesRoiFeed
from zerocopy.roi.stage import RegionModel, RoiStage

SIZE = 32
RED, BLUE = (100, 100, 200, 200), (400, 200, 460, 260)  # regions of the frame, x1 y1 x2 y2


def colour_model(kind: str) -> ov.Model:
    """BGR input → per-channel means (a classifier: the brightest channel wins), or for `face-landmarks`
    468 points all at the input's centre and a presence logit that is high for red, low for blue."""
    p = ops.parameter([1, SIZE, SIZE, 3], ov.Type.f32, name="image")
    means = ops.reduce_mean(p, np.array([1, 2]), keep_dims=False)  # [1, 3] in B, G, R order
    if kind == "classifier":
        outs = {"scores": ops.multiply(means, np.float32(0.1))}
    else:
        zero = ops.multiply(ops.reduce_sum(means, np.array([1]), keep_dims=True), np.float32(0.0))  # [1, 1]
        centre = np.tile(np.array([SIZE / 2, SIZE / 2, 0], np.float32), 468)[None]
        red_minus_blue = ops.subtract(ops.gather(means, np.array([2]), 1), ops.gather(means, np.array([0]), 1))
        outs = {"points": ops.add(ops.constant(centre), zero), "presence": ops.multiply(red_minus_blue,
                                                                                       np.float32(0.1))}
    results = []
    for name, node in outs.items():
        node.output(0).get_tensor().set_names({name})
        results.append(ops.result(node))
    return ov.Model(results, [p], "colour")


def region_model(tmp_path, core, kind, feed_class, on_labels=None, max_rois=8):
    path = tmp_path / f"{kind}.xml"
    ov.save_model(colour_model(kind), path)
    spec = ModelSpec(path=path, name=kind, labels=(), postprocess=kind, resize="stretch", colour="BGR", mean=0.0,
                     scale=1.0, task="classify")
    model = RegionModel(WrappedModel(core, spec, "bgr"), kind, on_labels, max_rois, 1.0, False)
    model.start("CPU", None, {}, feed_class(model.wrapped))
    return model


def frame_with_squares() -> tuple[av.VideoFrame, np.ndarray]:
    rgb = np.zeros((360, 640, 3), np.uint8)
    rgb[RED[1] : RED[3], RED[0] : RED[2]] = (255, 0, 0)
    rgb[BLUE[1] : BLUE[3], BLUE[0] : BLUE[2]] = (0, 0, 255)
    frame = av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(format="yuv420p")
    return frame, frame.to_ndarray(format="bgr24")


def prepared(source) -> PreparedFrame:
    return PreparedFrame(index=0, pts=0.0, width=640, height=360, geometry=Geometry.fit(640, 360, 64, 64, "stretch"),
                         inputs={}, source=source)


BOXES = Detections(np.array([RED, BLUE], np.float32), np.array([0.9, 0.8], np.float32), np.array([0, 1], np.int32))


@pytest.fixture
def sources():
    frame, bgr = frame_with_squares()
    return {PlanesRoiFeed: frame, BgrRoiFeed: bgr}


@pytest.mark.parametrize("feed", [PlanesRoiFeed, BgrRoiFeed])
def test_each_box_gets_what_the_model_says_of_its_own_region(feed, sources, tmp_path, core):
    stage = RoiStage([region_model(tmp_path, core, "classifier", feed)])
    out = stage.apply(prepared(sources[feed]), BOXES)
    names = [[a.name for a in attrs] for attrs in out.attributes]
    assert names == [["2"], ["0"]]  # red is channel 2 in BGR, blue channel 0
    assert all(a.model == "classifier" and a.score > 0.9 for attrs in out.attributes for a in attrs)
    assert out.keypoints == (None, None)
    assert stage.times.regions == 2 and stage.times.crop.count == 2


@pytest.mark.parametrize("feed", [PlanesRoiFeed, BgrRoiFeed])
def test_keypoints_land_in_the_region_and_min_presence_drops_what_the_model_rejects(feed, sources, tmp_path,
                                                                                    core):
    model = region_model(tmp_path, core, "face-landmarks", feed)
    out = RoiStage([model]).apply(prepared(sources[feed]), BOXES)
    red_centre = ((RED[0] + RED[2]) / 2, (RED[1] + RED[3]) / 2)
    assert out.keypoints[0].shape == (468, 2)
    np.testing.assert_allclose(out.keypoints[0][0], red_centre, atol=2.0)  # the region's centre, in the frame
    presence = [attrs[0].score for attrs in out.attributes]
    assert presence[0] > 0.99 and presence[1] < 0.01
    kept = RoiStage([model], min_presence=0.5).apply(prepared(sources[feed]), BOXES)
    assert len(kept) == 1 and kept.labels.tolist() == [0] and kept.keypoints[0] is not None


def test_only_the_chosen_labels_and_at_most_max_rois_boxes_the_largest_first(sources, tmp_path, core):
    frame = sources[PlanesRoiFeed]
    only_blue = RoiStage([region_model(tmp_path, core, "classifier", PlanesRoiFeed, on_labels=(1,))])
    out = only_blue.apply(prepared(frame), BOXES)
    assert out.attributes[0] == () and [a.name for a in out.attributes[1]] == ["0"]
    one = RoiStage([region_model(tmp_path, core, "classifier", PlanesRoiFeed, max_rois=1)])
    out = one.apply(prepared(frame), BOXES)
    assert [a.name for a in out.attributes[0]] == ["2"] and out.attributes[1] == ()  # red is the larger


def test_a_frame_without_boxes_or_without_its_source_is_left_alone(sources, tmp_path, core):
    stage = RoiStage([region_model(tmp_path, core, "classifier", PlanesRoiFeed)])
    empty = Detections.empty()
    assert stage.apply(prepared(sources[PlanesRoiFeed]), empty) is empty
    assert stage.apply(prepared(None), BOXES) is BOXES
    assert stage.times.regions == 0
