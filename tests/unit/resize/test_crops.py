"""Which region a box becomes, and the way back from the region model's input to frame pixels."""

import numpy as np
import pytest

from zerocopy.resize.crops import SIZE_STEP, Crop, RoiPlacement, crop_for


def test_a_box_grows_about_its_centre_square_even_and_in_steps():
    c = crop_for(np.array([100, 100, 140, 180]), 640, 360, expand=1.5, square=True)
    assert c.w == c.h and c.w >= 80 * 1.5 and c.w % SIZE_STEP == 0
    assert all(v % 2 == 0 for v in (c.x0, c.y0, c.w, c.h))
    cx, cy = c.x0 + c.w / 2, c.y0 + c.h / 2
    assert abs(cx - 120) <= 2 and abs(cy - 140) <= 2


def test_a_region_that_leaves_the_frame_is_clipped_to_it():
    c = crop_for(np.array([600, 300, 639, 359]), 641, 359, expand=2.0, square=True)
    assert c.x0 + c.w <= 640 and c.y0 + c.h <= 358  # even edges inside an odd-sized frame
    assert c.crop_fields(641, 359) == (c.x0, c.y0, 641 - c.x0 - c.w, 359 - c.y0 - c.h)


def test_a_box_with_almost_nothing_inside_the_frame_gives_no_region():
    assert crop_for(np.array([-80, -80, -2, -2]), 640, 360) is None
    assert crop_for(np.array([-60, 100, 3, 160]), 640, 360) is None  # 3 px wide once clipped


@pytest.mark.parametrize("mode", ["letterbox", "stretch"])
def test_points_map_back_to_where_they_are_in_the_frame(mode):
    crop = Crop(100, 40, 160, 96)
    place = RoiPlacement.fit(crop, 192, 192, mode)
    g = place.geometry
    # the region's corners and centre, as they land in the model input
    inside = np.array([[g.x0, g.y0], [g.x0 + g.content_w, g.y0 + g.content_h],
                       [g.x0 + g.content_w / 2, g.y0 + g.content_h / 2]], np.float32)
    np.testing.assert_allclose(place.points_to_source(inside), [[100, 40], [260, 136], [180, 88]], atol=1e-3)
