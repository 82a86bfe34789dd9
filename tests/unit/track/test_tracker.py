"""`Tracker`: ids that last across an input's inferred frames (supervision's ByteTrack, one per label)."""

import numpy as np

from zerocopy.detections import Detections
from zerocopy.track import Tracker


def boxes(*rows, labels=None, score=0.9) -> Detections:
    xyxy = np.array(rows, np.float32).reshape(-1, 4)
    n = len(xyxy)
    return Detections(xyxy, np.full(n, score, np.float32),
                      np.array(labels if labels is not None else [0] * n, np.int32))


def walk(tracker: Tracker, frames: int, step: float = 4.0, rate: float = 15.0, start: int = 0, label: int = 0,
         y: float = 100.0):
    """One box moving right `step` px a frame: the ids it got, frame by frame."""
    out = []
    for i in range(start, start + frames):
        x = 10 + step * i
        out.append(int(tracker.update(boxes((x, y, x + 60, y + 60), labels=[label]), i / rate)[0]))
    return out


def test_a_moving_box_keeps_one_id_once_confirmed():
    ids = walk(Tracker(15, 2.0), 30)
    assert ids[0] == -1  # a new track is confirmed on its second sighting
    assert len(set(ids[1:])) == 1 and ids[1] >= 1


def test_two_objects_get_two_ids_and_keep_them_when_they_swap_order_in_the_list():
    t = Tracker(15, 2.0)
    seen = []
    for i in range(20):
        a, b = (10 + 3 * i, 50, 70 + 3 * i, 110), (400 - 3 * i, 200, 460 - 3 * i, 260)
        dets = boxes(a, b) if i % 2 else boxes(b, a)
        ids = t.update(dets, i / 15)
        seen.append((ids[0], ids[1]) if i % 2 else (ids[1], ids[0]))
    assert len({s for s in seen[2:]}) == 1 and seen[-1][0] != seen[-1][1]


def test_labels_are_tracked_apart_with_ids_unique_across_them():
    t = Tracker(15, 2.0)
    for i in range(10):  # a person and the dog beside it, in the same place
        ids = t.update(boxes((100, 100, 200, 300), (100, 100, 200, 300), labels=[0, 1]), i / 15)
    assert ids[0] != ids[1] and min(ids) >= 1


def test_an_object_that_leaves_and_comes_back_after_max_lost_gets_a_new_id():
    t = Tracker(15, 1.0)
    first = walk(t, 10, step=0)
    for i in range(10, 10 + 30):  # two seconds of nothing
        t.update(Detections.empty(), i / 15)
    again = walk(t, 10, step=0, start=40)
    assert first[-1] != again[-1] and again[-1] >= 1


def test_the_id_map_stays_as_small_as_the_tracks_alive():
    t = Tracker(15, 0.5)
    for n in range(50):  # fifty objects, one after the other, each gone for a second before the next
        walk(t, 5, step=0, start=n * 25, y=10.0 * (n % 20))
        for i in range(n * 25 + 5, n * 25 + 25):
            t.update(Detections.empty(), i / 15)
    assert len(t._ids) <= 2


def test_predict_moves_the_boxes_on_at_their_last_speed():
    t = Tracker(5, 2.0)
    for i in range(4):  # 5 inferred frames a second, 30 px a frame: 150 px/s
        x = 30.0 * i
        ids = t.update(boxes((x, 0, x + 50, 50)), i / 5)
    predicted, pids = t.predict(3 / 5 + 0.1)
    assert list(pids) == [ids[0]]
    np.testing.assert_allclose(predicted.xyxy[0], [90 + 15, 0, 140 + 15, 50], atol=2.0)


def test_predict_holds_a_box_after_its_horizon():
    """Between the motion gate's keepalive inferences (10 s apart) a box that stopped is not carried off."""
    t = Tracker(5, 2.0)
    for i in range(4):
        x = 30.0 * i
        t.update(boxes((x, 0, x + 50, 50)), i / 5)
    assert t.horizon == 0.5
    far, _ = t.predict(3 / 5 + 10.0)
    np.testing.assert_allclose(far.xyxy[0], [90 + 75, 0, 140 + 75, 50], atol=3.0)  # 150 px/s for 0.5 s, then held


def test_predict_with_nothing_seen_is_empty():
    predicted, ids = Tracker(5, 2.0).predict(1.0)
    assert len(predicted) == 0 and len(ids) == 0


def test_at_five_inferences_a_second_a_box_moving_its_own_width_each_time_keeps_one_id():
    ids = walk(Tracker(5, 2.0), 12, step=60.0, rate=5)  # 60 px boxes, 60 px apart: no overlap at all
    assert ids[0] == -1 and len(set(ids[1:])) == 1 and ids[1] >= 1


def test_labels_no_longer_in_view_cost_nothing():
    """A label's tracker goes once none of its tracks is left (each costs ~0.4 ms an inferred frame)."""
    t = Tracker(5, 1.0)
    for label in range(20):  # twenty kinds of thing, each seen a moment
        walk(t, 3, step=0, start=label * 3, label=label)
    for i in range(60, 80):  # four seconds of nothing
        t.update(Detections.empty(), i / 5)
    assert t._trackers == {}
    assert walk(t, 3, step=0, start=80, label=3)[-1] >= 1  # a label that comes back is tracked again
