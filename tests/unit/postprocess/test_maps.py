"""zerocopy.postprocess.maps: a map over the model input back over the source frame (the inverse of
`Geometry.fit`), which map output a model has, and a map summed up."""

import numpy as np
import pytest

from zerocopy.errors import ModelError
from zerocopy.frames import Geometry
from zerocopy.postprocess.maps import ProbabilityMap, frame_map, map_output, summary, to_source


def picture_part(g: Geometry) -> np.ndarray:
    """A map over the model input that is 1 on the picture and 0 on the bars."""
    m = np.zeros((g.dst_h, g.dst_w), np.float32)
    m[g.y0 : g.y0 + g.content_h, g.x0 : g.x0 + g.content_w] = 1.0
    return m


@pytest.mark.parametrize(("src", "dst", "mode"), [
    ((640, 360), (960, 544), "letterbox"),   # text-map: 2-row bars
    ((640, 480), (256, 256), "letterbox"),   # a crop into person-mask's input: 32-row bars
    ((360, 640), (256, 256), "letterbox"),   # portrait: bars left and right
    ((1920, 1080), (300, 300), "stretch"),
])
def test_the_bars_are_cut_off_and_never_blended_in(src, dst, mode):
    g = Geometry.fit(*src, *dst, mode)
    out = to_source(picture_part(g), g)
    assert out.shape == (src[1], src[0]) and out.dtype == np.float32
    assert out.min() == 1.0  # the border pixels too: a bar would pull them below 1


def test_an_edge_lands_where_the_geometry_puts_it():
    g = Geometry.fit(640, 480, 256, 256, "letterbox")  # content 256×192 at y0 = 32: 2.5 source px per input px
    m = np.zeros((256, 256), np.float32)
    m[:, :128] = 1.0  # the left half of the input, so the left half of the frame
    out = to_source(m, g)
    assert (out[:, :318] == 1).all() and (out[:, 322:] == 0).all()
    assert np.allclose(out[:, 319] + out[:, 320], 1.0)  # the edge straddles x = 320, symmetric


def test_a_vertical_position_in_the_input_maps_to_the_frame():
    g = Geometry.fit(1280, 720, 192, 192, "letterbox")
    m = np.zeros((192, 192), np.float32)
    row = g.y0 + g.content_h // 4  # a quarter down the picture
    m[row, :] = 1.0
    out = to_source(m, g)
    peak = int(np.argmax(out[:, 640]))
    expected = (row + 0.5 - g.y0) * g.src_h / g.content_h - 0.5
    assert abs(peak - expected) <= 2


def test_a_map_at_half_the_input_size_is_stretched_over_the_input():
    g = Geometry.fit(640, 360, 960, 544, "letterbox")
    full = picture_part(g)
    half = full[::2, ::2]
    np.testing.assert_allclose(to_source(half, g), to_source(full, g), atol=1e-6)


def test_identity_geometry_returns_the_map_itself():
    g = Geometry.fit(320, 240, 320, 240, "stretch")
    m = np.random.default_rng(0).random((240, 320), np.float32)
    out = to_source(m, g)
    np.testing.assert_array_equal(out, m)
    assert out is not m


def test_the_map_output_is_the_single_channel_one():
    pose = {"Identity": (1, 195), "Identity_1": (1, 1), "Identity_2": (1, 256, 256, 1), "Identity_3": (1, 64, 64, 39),
            "Identity_4": (1, 117)}
    assert map_output("person-mask", pose) == ("Identity_2", (256, 256))
    assert map_output("text-map", {"sigmoid_0.tmp_0": (1, 1, 544, 960)}) == ("sigmoid_0.tmp_0", (544, 960))
    with pytest.raises(ModelError, match="no single-channel map output"):
        map_output("det", {"boxes": (1, 896, 16), "scores": (1, 896, 1)})


def test_probability_map_clips_into_0_1_and_frame_map_knows_its_kinds():
    shapes = {"out": (1, 1, 4, 4)}
    pm = frame_map("probability-map", "m", shapes)
    assert isinstance(pm, ProbabilityMap)
    g = Geometry.fit(4, 4, 4, 4, "stretch")
    out = pm({"out": np.array([[-1.0, 0.5, 2.0, 1.0]] * 4, np.float32).reshape(1, 1, 4, 4)}, g)
    assert out.min() == 0.0 and out.max() == 1.0
    assert frame_map("anchor-ssd", "m", shapes) is None and frame_map("segmentation", "m", shapes) is None


def test_summary_counts_the_pixels_from_one_half_up():
    m = np.zeros((10, 10), np.float32)
    m[:2] = 0.5
    m[2, 0] = 0.49
    assert summary(m) == {"share": 0.2, "max": 0.5, "mean": round(10.49 / 100, 5)}
