"""zerocopy.samples: the true boxes, the scoring, the crowds."""

import numpy as np
import pytest
from footage import CROWDS
from PIL import Image

from zerocopy.agreement import score_detections
from zerocopy.samples import (
    FACE_BOXES,
    Sprite,
    crowd,
    load_photo,
    scene,
)


def test_true_boxes_hold_the_photos_faces():
    """The truth is by construction: the pixels inside each true box are the photo's own face box
    (resized, mirrored if the person is), not a guess."""
    spec = CROWDS["crowd-720p.mp4"]
    photos = {n: Image.fromarray(load_photo(n)) for n in ("motorcycle", "astronaut", "grace_hopper")}
    sprites = [Sprite.make(p, spec.width, spec.height, photos) for p in spec.people]
    rgb, boxes = scene(spec, 5, photos, sprites)
    assert len(boxes) == len(spec.people)
    for person, box in zip(spec.people, boxes, strict=True):
        x1, y1, x2, y2 = (int(round(v)) for v in box)
        got = np.asarray(Image.fromarray(rgb[y1:y2, x1:x2]).resize((32, 32), Image.BILINEAR), np.float32)
        face = photos[person.photo].crop(tuple(int(v) for v in FACE_BOXES[person.photo])).resize((32, 32))
        want = np.asarray(face, np.float32) * person.gain
        if person.flip:
            want = want[:, ::-1]
        assert np.abs(got - np.clip(want, 0, 255)).mean() < 12, person
        assert abs((y2 - y1) / spec.height - person.face_height) < 0.01


def test_score_detections_counts_misses_extras_and_second_boxes():
    truth = [np.array([[0, 0, 10, 10], [20, 20, 30, 30]], np.float32), np.zeros((0, 4), np.float32)]
    found = [
        {"detections": [{"box": [0, 0, 10, 10]}, {"box": [1, 1, 12, 12]}, {"box": [50, 50, 60, 60]}]},
        {"detections": [{"box": [5, 5, 6, 6]}]},
    ]
    s = score_detections(truth, found)
    assert s["recall"] == 0.5  # the second face is missed
    assert s["duplicates"] == 1 and s["duplicate_share"] == 0.5  # [1,1,12,12] is the first face's second box
    assert s["false"] == 2 and s["false_per_frame"] == 1.0 and s["false_per_free_frame"] == 1.0
    # a badly placed box on a missed face is a false detection, not a duplicate
    s = score_detections([truth[0]], [np.array([[20, 20, 40, 45]], np.float32)])
    assert s["recall"] == 0.0 and s["false"] == 1 and s["duplicates"] == 0


def test_crowds_never_cover_a_face():
    from zerocopy.detections import box_iou

    photos = {n: Image.fromarray(load_photo(n)) for n in ("astronaut", "grace_hopper")}
    canvas = np.zeros((360, 640, 3), np.float32)
    for seed in range(4):
        people = crowd(8, seed=seed)
        heights = sorted(p.face_height for p in people)
        assert heights[0] == pytest.approx(0.08) and heights[-1] == pytest.approx(0.2)
        sprites = [Sprite.make(p, 640, 360, photos) for p in people]
        for t in (0.0, 0.5, 1.0):
            boxes = np.array([s.paste(canvas, t) for s in sprites])
            iou = box_iou(boxes, boxes)
            assert np.allclose(iou - np.diag(np.diag(iou)), 0.0)
            assert (boxes[:, :2] >= 0).all() and (boxes[:, 2] <= 640).all()
