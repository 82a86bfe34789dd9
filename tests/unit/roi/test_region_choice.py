"""Regions around motion and found boxes: which squares a frame gets (`choose_regions`), on plain boxes."""

import numpy as np
import pytest

from zerocopy.motion.detector import CALIBRATING, Motion
from zerocopy.resize.crops import SIZE_STEP, Crop
from zerocopy.roi.regions import (
    LARGEST,
    MOST,
    WHOLE_FRAME,
    RegionTimes,
    choose_regions,
    covered,
    square_around,
    squares,
)

W, H, SIDE = 1920, 1080, 300  # a 1080p frame, a 300×300 model


def _inside(c: Crop, box) -> bool:
    return c.x0 <= box[0] and c.y0 <= box[1] and c.x0 + c.w >= box[2] and c.y0 + c.h >= box[3]


def test_a_small_box_gets_a_square_of_the_model_size_around_it():
    box = (900, 500, 960, 640)  # a far person, 140 px tall
    (c,) = choose_regions(np.array([box]), W, H, SIDE)
    assert c.w == c.h >= SIDE and c.w < SIDE + SIZE_STEP and c.w % SIZE_STEP == 0
    assert all(v % 2 == 0 for v in (c.x0, c.y0, c.w, c.h))
    assert _inside(c, box)
    assert abs((c.x0 + c.w / 2) - 930) <= 2 and abs((c.y0 + c.h / 2) - 570) <= 2  # centred on it


def test_a_larger_box_gets_a_square_grown_around_it_and_one_at_the_edge_is_kept_inside():
    c = square_around((1800, 900, 1920, 1080), SIDE, W, H)  # 180 px tall, in the corner
    assert c.w == c.h >= 1.35 * 180 and c.w >= SIDE
    assert c.x0 + c.w <= W and c.y0 + c.h <= H and _inside(c, (1800, 900, 1920, 1080))


def test_a_frame_smaller_than_the_model_gets_squares_of_its_short_side():
    c = square_around((10, 10, 40, 40), SIDE, 320, 180)
    assert (c.w, c.h) == (180, 180) and c.x0 >= 0 and c.x0 + c.w <= 320


def test_overlapping_squares_become_one_around_both_boxes():
    a, b = (900, 500, 960, 640), (1000, 560, 1080, 620)  # a person and a cat side by side
    (c,) = choose_regions(np.array([a, b]), W, H, SIDE)
    assert _inside(c, a) and _inside(c, b)
    assert c.w == c.h < 2 * SIDE


def test_squares_apart_stay_apart_the_smallest_first():
    far, near = (100, 100, 150, 200), (1300, 500, 1600, 900)  # 100 px and 400 px tall
    crops = choose_regions(np.array([near, far]), W, H, SIDE)
    assert len(crops) == 2 and crops[0].w < crops[1].w
    assert _inside(crops[0], far) and _inside(crops[1], near)


def test_squares_too_large_to_magnify_are_left_to_the_whole_frame():
    close = (600, 100, 1200, 1000)  # 900 px tall: its square would be wider than LARGEST of the frame's width
    assert square_around(close, SIDE, W, H).w > LARGEST * W
    assert choose_regions(np.array([close]), W, H, SIDE) == []
    far = (100, 100, 150, 200)
    assert len(choose_regions(np.array([close, far]), W, H, SIDE)) == 1


def test_two_squares_whose_union_would_be_too_large_are_kept_apart():
    a, b = (100, 100, 400, 500), (420, 500, 700, 900)  # each ~540 px square, overlapping; together too large
    crops = choose_regions(np.array([a, b]), W, H, SIDE)
    assert len(crops) == 2 and all(c.w <= LARGEST * W for c in crops)


def test_at_most_most_squares_a_frame():
    boxes = np.array([(x, 50, x + 40, 120) for x in range(0, 1900, 320)] +
                     [(x, 800, x + 40, 870) for x in range(0, 1900, 320)], np.float32)  # 12 far boxes apart
    crops = choose_regions(boxes, W, H, SIDE)
    assert len(crops) == MOST
    assert len(choose_regions(boxes, W, H, SIDE, most=2)) == 2


def test_no_boxes_no_squares():
    assert choose_regions(np.zeros((0, 4)), W, H, SIDE) == []


def test_the_share_covered_counts_overlaps_once():
    assert covered([], W, H) == 0.0
    one = Crop(0, 0, 960, 1080)
    assert covered([one], W, H) == pytest.approx(0.5)
    assert covered([one, one], W, H) == pytest.approx(0.5)
    assert covered([one, Crop(960, 0, 960, 1080)], W, H) == pytest.approx(1.0)


def test_the_report_says_squares_per_frame_and_share_covered():
    t = RegionTimes()
    t.chose([Crop(0, 0, 960, 1080)], W, H)
    t.chose([], W, H)
    t.chose([Crop(0, 0, 480, 540)] * 3, W, H)
    s = t.summary()
    assert s["frames"] == 3 and s["per_frame"] == {"mean": pytest.approx(4 / 3, abs=1e-3), "max": 3}
    assert s["frames_by_count"] == {"0": 1, "1": 1, "3": 1}
    assert s["covered"] == pytest.approx((0.5 + 0 + 0.125) / 3, abs=1e-3)
    t.reset()
    assert t.summary()["frames"] == 0 and t.summary()["per_frame"]["max"] == 0


def test_a_frame_gets_squares_around_its_motion_and_the_boxes_found_before():
    moving = Motion(moving=True, boxes=((0.05, 0.1, 0.1, 0.2),), fraction=0.01)  # fractions of the frame
    before = np.array([[1500, 700, 1560, 800]], np.float32)  # a cat the frame before found, far from the motion
    crops = squares(moving, before, W, H, SIDE)
    assert len(crops) == 2
    assert any(_inside(c, (96, 108, 192, 216)) for c in crops) and any(_inside(c, before[0]) for c in crops)
    assert len(squares(moving, None, W, H, SIDE)) == 1


def test_no_squares_when_nothing_moves_and_nothing_was_found_or_motion_covers_most_of_the_picture():
    assert squares(Motion(), None, W, H, SIDE) == []
    assert squares(CALIBRATING, None, W, H, SIDE) == []
    found = np.array([[900, 500, 960, 640]], np.float32)
    assert len(squares(CALIBRATING, found, W, H, SIDE)) == 1  # what was found is looked at again while calibrating
    most = Motion(moving=True, boxes=((0.0, 0.0, 0.2, 0.2),), fraction=WHOLE_FRAME + 0.01)
    assert squares(most, found, W, H, SIDE) == []
    assert squares(Motion(fraction=0.9, calibrating=True, whole_scene=True), found, W, H, SIDE) == []
