"""`ObjectEvents`: `new` after `min_hits`, `update` when changed (at most every `update_interval`), `end` after
`max_lost` unseen or at the end of the input; and the event's record and MQTT payload."""

import json

import numpy as np
import pytest

from zerocopy.detections import Detections
from zerocopy.track import ObjectEvents


def tracked(*rows, score=0.9, label=0) -> Detections:
    """Boxes with their ids: rows of (id, x1, y1, x2, y2)."""
    a = np.array(rows, np.float32).reshape(-1, 5)
    n = len(a)
    return Detections(a[:, 1:], np.full(n, score, np.float32), np.full(n, label, np.int32)).with_ids(a[:, 0])


def make(**kw) -> ObjectEvents:
    args = dict(min_hits=3, max_lost=2.0, update_interval=5.0)
    args.update(kw)
    return ObjectEvents(("face", "Person"), source="rtsp://cam/1", camera="front", node="box1", **args)


def feed(events: ObjectEvents, frames, rate=10.0, t0=0.0):
    out = []
    for i, dets in enumerate(frames):
        t = t0 + i / rate
        out += events.update(dets, t, 1_700_000_000.0 + t)
    return out


def test_new_after_min_hits_then_end_after_max_lost():
    ev = make()
    out = feed(ev, [tracked((1, 10, 10, 50, 50))] * 5 + [Detections.empty()] * 25)
    assert [e.type for e in out] == ["new", "end"]
    new, end = out
    assert new.id == end.id and new.frames == 3 and end.frames == 5
    assert new.last_pts == pytest.approx(0.2) and end.last_pts == pytest.approx(0.4)
    assert end.end_time == pytest.approx(1_700_000_000.4) and new.end_time is None
    assert end.frame_time > end.end_time + 2.0  # noticed once it had been gone max_lost


def test_a_box_seen_fewer_than_min_hits_makes_no_event():
    out = feed(make(), [tracked((1, 10, 10, 50, 50))] * 2 + [Detections.empty()] * 30)
    assert out == []


def test_untracked_boxes_make_no_event():
    out = feed(make(min_hits=1), [tracked((-1, 10, 10, 50, 50))] * 10)
    assert out == []


def test_update_only_when_changed_and_not_more_often_than_the_interval():
    ev = make(update_interval=1.0)
    still = [tracked((1, 10, 10, 50, 50))] * 30  # 3 s without moving: no update
    moving = [tracked((1, 10 + 20 * i, 10, 50 + 20 * i, 50)) for i in range(30)]  # 3 s moving fast
    out = feed(ev, still + moving)
    kinds = [e.type for e in out]
    assert kinds[0] == "new" and "end" not in kinds
    updates = [e for e in out if e.type == "update"]
    assert 2 <= len(updates) <= 3  # one a second at most while it moves
    assert all(b.last_pts - a.last_pts >= 1.0 - 1e-6 for a, b in zip(updates, updates[1:], strict=False))
    assert all(e.last_pts >= 3.0 for e in updates)


def test_finish_ends_every_confirmed_object_and_counts_their_dwell():
    ev = make()
    feed(ev, [tracked((1, 10, 10, 50, 50), (2, 100, 10, 150, 50))] * 11 + [tracked((3, 0, 0, 5, 5))])
    out = ev.finish(1_700_000_100.0)
    assert sorted(e.tracker_id for e in out) == [1, 2] and all(e.type == "end" for e in out)
    assert ev.totals == {"face": [2, pytest.approx(2.0)]}
    assert ev.finish(1_700_000_100.0) == []


def test_event_ids_are_unique_per_object():
    ev = make(min_hits=1)
    out = feed(ev, [tracked(*[(i, 10 * i, 0, 10 * i + 8, 8) for i in range(1, 50)])])
    assert len({e.id for e in out}) == 49


def test_record_and_mqtt_payload():
    ev = make(min_hits=1)
    new = feed(ev, [tracked((7, 10.04, 20, 50, 80), label=1)])[0]
    rec = new.to_record()
    json.dumps(rec)
    assert {k: rec[k] for k in ("type", "tracker_id", "node", "camera", "source", "label", "box", "frames")} == {
        "type": "new", "tracker_id": 7, "node": "box1", "camera": "front", "source": "rtsp://cam/1",
        "label": "Person", "box": [10.0, 20.0, 50.0, 80.0], "frames": 1}
    msg = new.to_mqtt()
    json.dumps(msg)
    for key in ("type", "id", "label", "score", "box", "start_time"):
        assert key in msg
    assert msg["label"] == "person" and msg["after"]["label"] == "person"  # lowercased, as Frigate's labels
    assert msg["before"] == msg["after"] and msg["after"]["box"] == [10, 20, 50, 80]
    assert msg["after"]["area"] == 40 * 60 and msg["after"]["active"] is True
    end = ev.finish(1_700_000_001.0)[0]
    m = end.to_mqtt(new)
    assert m["type"] == "end" and m["after"]["active"] is False and m["after"]["end_time"] is not None
    assert m["before"]["end_time"] is None


def test_ids_show_only_once_the_object_had_its_new():
    ev = make()
    frames = [tracked((4, 10, 10, 50, 50), (5, 99, 99, 120, 120))] + [tracked((4, 10, 10, 50, 50))] * 2
    shown = []
    for i, dets in enumerate(frames):
        ev.update(dets, i / 10, 1_700_000_000.0 + i / 10)
        shown.append(list(ev.confirmed(np.array([4, 5, -1]))))
    assert shown == [[-1, -1, -1], [-1, -1, -1], [4, -1, -1]]  # min_hits 3


def test_end_comes_once_at_the_first_frame_gone_longer_than_max_lost():
    ev = make(max_lost=2.0)
    seen = feed(ev, [tracked((1, 10, 10, 50, 50))] * 5, rate=4.0)  # last seen at 1.0 s (exact in binary)
    assert [e.type for e in seen] == ["new"]
    at = {t: ev.update(Detections.empty(), t, 1_700_000_000.0 + t) for t in (2.75, 3.0, 3.25, 3.5, 6.0)}
    assert at[2.75] == [] and at[3.0] == []  # gone exactly max_lost: not yet
    (end,) = at[3.25]
    assert end.type == "end" and end.id == seen[0].id and end.frame_time == 1_700_000_003.25
    assert end.last_pts == 1.0 and end.end_time == 1_700_000_001.0
    assert at[3.5] == [] and at[6.0] == []


def test_an_object_not_looked_for_has_not_gone():
    """The motion gate infers a still scene once every --motion-keepalive seconds: a parked car seen at each of
    those frames is one object, however far apart they are; it ends once a frame looked and did not see it for
    longer than max_lost."""
    ev = make(max_lost=2.0)
    box = tracked((1, 10, 10, 50, 50))
    made = feed(ev, [box] * 3, rate=4.0)
    for t in (10.5, 20.5, 30.5):  # keepalive inferences, the car still there
        made += ev.update(box, t, 1_700_000_000.0 + t)
    assert [e.type for e in made] == ["new"]
    assert ev.update(tracked(), 40.5, 1_700_000_040.5) == []  # gone at some time since 30.5: looked, not seen
    (end,) = ev.update(tracked(), 41.0, 1_700_000_041.0)
    assert end.type == "end" and end.last_pts == 30.5


def test_an_id_seen_again_after_max_lost_ends_its_object_and_starts_a_new_one():
    ev = make(max_lost=2.0)
    box = tracked((1, 10, 10, 50, 50))
    first = feed(ev, [box] * 3, rate=4.0)  # 0, 0.25, 0.5 s; the next inferred frame with it is 2.5 s later
    assert ev.update(tracked(), 1.0, 1_700_000_001.0) == []  # an inferred frame that looked and did not see it
    (end,) = ev.update(box, 3.0, 1_700_000_003.0)
    assert end.type == "end" and end.id == first[0].id and end.last_pts == 0.5 and end.frames == 3
    again = feed(ev, [box] * 2, rate=4.0, t0=3.25) + ev.finish(1_700_000_004.0)
    assert [e.type for e in again] == ["new", "end"]
    assert again[0].id != end.id and again[0].first_pts == 3.0 and again[0].frames == 3
    assert ev.totals == {"face": [2, pytest.approx(0.5 + 0.5)]}


def test_a_labels_threshold_holds_new_back_until_the_median_of_its_scores_reaches_it():
    """Frigate's rule: an object is a true positive once the median of its last scores reaches its label's
    threshold; other labels, and objects of it whose median does, get their `new` at `min_hits` as before."""
    ev = make(min_hits=2, thresholds={"person": 0.7})  # (the model's label is "Person": compared lowercased)
    scores = [0.6, 0.65, 0.8, 0.9, 0.9]  # medians from the 2nd: 0.625, 0.65, 0.725: `new` at the 4th sighting
    out = []
    for i, s in enumerate(scores):
        out += ev.update(tracked((1, 10, 10, 50, 50), score=s, label=1), i / 10, 1_700_000_000.0 + i / 10)
    assert [(e.type, e.frames) for e in out] == [("new", 4)]
    low = feed(make(min_hits=2, thresholds={"person": 0.7}), [tracked((2, 10, 10, 50, 50), score=0.6, label=1)] * 12)
    assert low == []  # never confirmed: no `new`, no `end`
    faces = feed(make(min_hits=2, thresholds={"person": 0.7}), [tracked((3, 10, 10, 50, 50), score=0.6)] * 3)
    assert [e.type for e in faces] == ["new"]  # a face has no threshold: confirmed at min_hits


def test_an_event_is_hashable_with_what_a_stage_added():
    """The review of issue 37: `extra` (a dict) made every `ObjectEvent` unhashable (no set of events, no dict
    keyed by one); it is left out of the hash, and still in the event's equality and record."""
    import dataclasses

    (new,) = feed(make(min_hits=1), [tracked((1, 10, 10, 50, 50))])
    ended = dataclasses.replace(new, type="end", extra={"dwell": {"door": 2.0}})
    assert len({new, ended, dataclasses.replace(ended)}) == 2 and hash(ended) == hash(dataclasses.replace(ended))
    assert ended != dataclasses.replace(ended, extra={}) and ended.to_record()["dwell"] == {"door": 2.0}
