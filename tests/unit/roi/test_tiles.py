"""`--tiles`: where the tiles of a frame are, which boxes a tile cut off, and how the passes' boxes merge."""

import numpy as np
import pytest

from zerocopy.detections import Detections
from zerocopy.resize.crops import Crop
from zerocopy.roi.tiles import OVERLAP, cut_by, merge, tile_crops


def _covered(crops, width, height) -> bool:
    seen = np.zeros((height, width), bool)
    for c in crops:
        seen[c.y0 : c.y0 + c.h, c.x0 : c.x0 + c.w] = True
    return bool(seen[: height & ~1, : width & ~1].all())


@pytest.mark.parametrize(("width", "height", "rows", "count"), [
    (640, 360, 1, 2), (1920, 1080, 1, 2), (640, 360, 2, 8), (1280, 720, 3, 18), (360, 640, 1, 2), (720, 576, 1, 2)])
def test_tiles_are_square_even_overlapping_and_cover_the_frame(width, height, rows, count):
    crops = tile_crops(width, height, rows)
    assert len(crops) == count
    side = crops[0].w
    assert all(c.w == c.h == side for c in crops)
    assert all(v % 2 == 0 for c in crops for v in (c.x0, c.y0, c.w, c.h))
    assert all(c.x0 + c.w <= width and c.y0 + c.h <= height for c in crops)
    assert _covered(crops, width, height)
    for axis in (0, 1):  # neighbours along each axis share at least OVERLAP of the side
        starts = sorted({(c.x0, c.y0)[axis] for c in crops})
        assert all(b - a <= side * (1 - OVERLAP) + 2 for a, b in zip(starts, starts[1:], strict=False))
    assert side * rows >= min(width, height)  # N rows span the short side


def test_one_row_of_a_square_frame_is_the_frame_itself_so_no_tiles():
    assert tile_crops(480, 480, 1) == ()
    assert len(tile_crops(480, 480, 2)) == 4


def test_a_box_is_cut_only_at_a_tile_edge_inside_the_frame():
    tile = Crop(280, 0, 360, 360)  # the right tile of a 640×360 frame: its left edge is inside the frame
    boxes = np.array([[281, 100, 330, 200],  # at the inner (left) edge: cut
                      [400, 100, 500, 200],  # inside: whole
                      [560, 100, 640, 200],  # at the frame's right edge: whole (the frame ends there)
                      [400, 0, 500, 80]], np.float32)  # at the frame's top: whole
    assert cut_by(tile, boxes, 640, 360).tolist() == [[True, False, False, False]] + [[False] * 4] * 3


def _dets(*rows):
    a = np.asarray(rows, np.float32).reshape(-1, 6)
    return Detections(a[:, :4], a[:, 4], a[:, 5].astype(np.int32))


NONE, LEFT, RIGHT = [[False] * 4], [[True, False, False, False]], [[False, False, True, False]]


def test_a_piece_a_tile_cut_off_goes_when_another_pass_has_the_object_whole():
    whole = _dets([200, 100, 400, 300, 0.6, 1])
    piece = _dets([200, 100, 360, 300, 0.7, 1])  # the left tile's view, cut at its edge (x = 360), scored higher
    out = merge([(whole, np.array(NONE)), (piece, np.array(RIGHT))], iou=0.5)
    assert out.xyxy.tolist() == [[200, 100, 400, 300]] and out.scores.tolist() == [pytest.approx(0.6)]


def test_a_piece_stays_when_the_whole_box_beside_it_does_not_reach_across_its_cut():
    """Two people side by side: the whole frame found the left one; a tile cut the right one at its right edge."""
    whole = _dets([100, 100, 200, 300, 0.6, 1])
    piece = _dets([150, 100, 360, 300, 0.5, 1])  # half inside the first's box, but cut on the far side
    out = merge([(whole, np.array(NONE)), (piece, np.array(RIGHT))], iou=0.5)
    assert len(out) == 2


@pytest.mark.parametrize("width", [110, 350])  # within the strip the tiles share (280–360), and far wider
def test_two_tiles_pieces_of_one_object_become_one_box(width):
    left = _dets([250 if width < 200 else 10, 100, 360, 200, 0.5, 3])  # cut at the left tile's right edge (360)
    right = _dets([280, 100, 390 if width < 200 else 360 + 150, 200, 0.6, 3])  # cut at the right tile's left (280)
    out = merge([(Detections.empty(), np.zeros((0, 4), bool)), (left, np.array(RIGHT)), (right, np.array(LEFT))], 0.5)
    assert len(out) == 1 and out.scores.tolist() == [pytest.approx(0.6)]
    assert out.xyxy[0].tolist() == [left.xyxy[0, 0], 100, right.xyxy[0, 2], 200]


def test_pieces_of_two_objects_at_different_heights_stay_two():
    left = _dets([250, 0, 360, 100, 0.5, 3])
    right = _dets([280, 150, 390, 250, 0.6, 3])
    out = merge([(left, np.array(RIGHT)), (right, np.array(LEFT))], 0.5)
    assert len(out) == 2


def test_the_same_object_in_two_passes_is_one_box_and_other_objects_stay():
    frame = _dets([10, 10, 60, 110, 0.5, 1], [300, 10, 340, 50, 0.45, 2])
    tile = _dets([12, 11, 61, 108, 0.7, 1],  # the first again, better seen
                 [100, 10, 140, 110, 0.5, 1],  # a person the whole frame missed
                 [300, 10, 340, 50, 0.8, 5])  # another label on the same spot: not the same object
    out = merge([(frame, np.zeros((2, 4), bool)), (tile, np.zeros((3, 4), bool))], iou=0.4)
    assert sorted(out.labels.tolist()) == [1, 1, 2, 5]
    people = out.xyxy[out.labels == 1]
    assert people[:, 0].tolist() == [12, 100]  # the better-scored copy kept, the new one added


def test_a_cut_box_with_nothing_else_of_its_label_stays():
    piece = _dets([300, 50, 360, 120, 0.55, 4])
    other = _dets([300, 50, 360, 120, 0.9, 2])  # another label does not hold it
    out = merge([(other, np.array(NONE)), (piece, np.array(RIGHT))], iou=0.5)
    assert sorted(out.labels.tolist()) == [2, 4]


def test_an_object_taller_than_the_rows_strip_is_cut_in_four_and_comes_back_whole():
    """Measured on a cup at 20 % of a 640×360 frame with 2 rows (200 px tiles at x 0/146…, y 0/160): every tile
    cut it, the whole frame missed it."""
    def piece(box, score, sides):
        return _dets([*box, score, 13]), np.array([sides])

    passes = [(Detections.empty(), np.zeros((0, 4), bool)),
              piece([163, 143, 199, 196], 0.44, [0, 0, 1, 1]), piece([173, 145, 232, 199], 0.52, [0, 0, 0, 1]),
              piece([168, 161, 198, 206], 0.51, [0, 1, 1, 0]), piece([176, 162, 222, 200], 0.6, [0, 1, 0, 0])]
    out = merge(passes, iou=0.4, margin=4)
    assert out.xyxy.tolist() == [[173, 145, 232, 200]] and out.scores.tolist() == [pytest.approx(0.6)]
