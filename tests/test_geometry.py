import numpy as np
import pytest

from zerocopy.detections import Detections, box_iou
from zerocopy.frames import Geometry
from zerocopy.postprocess.nms import nms


def test_letterbox_16x9_centres_the_picture_on_even_offsets():
    g = Geometry.fit(1920, 1080, 128, 128, "letterbox")
    assert (g.content_w, g.content_h) == (128, 72)
    assert (g.x0, g.y0) == (0, 28)
    assert g.x0 % 2 == 0 and g.y0 % 2 == 0


def test_letterbox_portrait_and_odd_sizes_stay_even():
    g = Geometry.fit(641, 359, 128, 128, "letterbox")
    assert g.content_w % 2 == 0 and g.content_h % 2 == 0 and g.y0 % 2 == 0
    p = Geometry.fit(360, 640, 128, 128, "letterbox")
    assert p.content_h == 128 and p.content_w == 72 and p.x0 == 28


@pytest.mark.parametrize("mode", ["letterbox", "stretch"])
def test_to_source_inverts_the_placement(mode):
    g = Geometry.fit(1280, 720, 192, 192, mode)
    src = np.array([[100, 200, 400, 500]], np.float32)
    # forward: source pixels → model-normalised coordinates
    norm = src.copy()
    norm[:, 0::2] = (src[:, 0::2] * g.content_w / g.src_w + g.x0) / g.dst_w
    norm[:, 1::2] = (src[:, 1::2] * g.content_h / g.src_h + g.y0) / g.dst_h
    np.testing.assert_allclose(g.to_source(norm), src, atol=1e-3)


def test_to_source_clips_to_the_frame():
    g = Geometry.fit(640, 360, 128, 128, "letterbox")
    out = g.to_source(np.array([[-0.5, -0.5, 1.5, 1.5]]))
    assert out.tolist() == [[0, 0, 640, 360]]


def test_box_iou_known_values():
    a = np.array([[0, 0, 10, 10]])
    b = np.array([[0, 0, 10, 10], [5, 0, 15, 10], [20, 20, 30, 30]])
    np.testing.assert_allclose(box_iou(a, b), [[1.0, 50 / 150, 0.0]], atol=1e-6)


def test_nms_keeps_the_best_of_each_cluster_per_class():
    boxes = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [50, 50, 60, 60], [0, 0, 10, 10]], np.float32)
    scores = np.array([0.9, 0.8, 0.7, 0.6], np.float32)
    labels = np.array([0, 0, 0, 1])
    keep, out = nms(boxes, scores, 0.5, labels=labels)
    assert sorted(keep.tolist()) == [0, 2, 3]
    keep_w, out_w = nms(boxes[:2], scores[:2], 0.5, weighted=True)
    assert keep_w.tolist() == [0]
    np.testing.assert_allclose(out_w[0], (boxes[0] * 0.9 + boxes[1] * 0.8) / 1.7, atol=1e-5)


def test_detections_records_and_length_check():
    d = Detections(np.array([[1.04, 2, 3, 4]], np.float32), np.array([0.91234], np.float32), np.array([0]))
    assert d.to_records(["face"]) == [{"box": [1.0, 2.0, 3.0, 4.0], "score": 0.9123, "label": 0, "name": "face"}]
    with pytest.raises(ValueError):
        Detections(np.zeros((2, 4)), np.zeros(1), np.zeros(1))


def test_compare_runs_counts_matches_extras_and_score_drift():
    from zerocopy.agreement import compare_runs

    ref = [{"detections": [{"box": [0, 0, 10, 10], "score": 0.9}]},
           {"detections": [{"box": [0, 0, 10, 10], "score": 0.8}]}]
    other = [{"detections": [{"box": [1, 0, 11, 10], "score": 0.85}, {"box": [50, 50, 60, 60], "score": 0.6}]},
             {"detections": []}]
    r = compare_runs(ref, other)
    assert r["matched_share"] == 0.5 and r["extra"] == 1 and r["reference_detections"] == 2
    assert abs(r["max_score_diff"] - 0.05) < 1e-6 and abs(r["mean_iou"] - 90 / 110) < 1e-3


def _frame(gray: np.ndarray):
    import av

    h, w = gray.shape
    f = av.VideoFrame(w, h, "yuv420p")
    f.planes[0].update(np.ascontiguousarray(gray))
    for p in f.planes[1:]:
        p.update(np.full((p.height, p.line_size), 128, np.uint8))
    f.colorspace, f.color_range = 6, 1  # BT.601 limited: no colour transform, codes pass through
    return f


def test_fine_detail_shrinks_to_its_mean_instead_of_aliasing():
    """1-pixel stripes shrunk 4.3 times: area averaging gives their mean grey, give or take the
    stripe a box's fractional edge cuts (±5 codes, as `cv2.INTER_AREA` gives); bilinear sampling
    gives a false pattern (what made small faces hinge on where the taps fell)."""
    from zerocopy.resize.planes import PlaneResizer

    stripes = np.tile(np.array([40, 200], np.uint8), (1080, 960))
    f = _frame(stripes)
    y, _, g = PlaneResizer(448, 256, "letterbox")(f)
    area = y[0, g.y0 : g.y0 + g.content_h, :, 0].astype(float)
    assert abs(area.mean() - 120) < 2 and area.std() < 5
    y, _, _ = PlaneResizer(448, 256, "letterbox", antialias=False)(f)
    aliased = y[0, g.y0 : g.y0 + g.content_h, :, 0].astype(float)
    assert aliased.std() > 20


@pytest.mark.parametrize("src,dst", [((1920, 1080), (448, 256)), ((1280, 720), (448, 256)),
                                     ((1920, 1080), (128, 128)), ((640, 360), (448, 256))])
def test_area_averaging_matches_opencv(src, dst):
    """The software resizer and the baseline's cv2.resize (INTER_AREA from a shrink of 2 on, else
    INTER_LINEAR) give nearly the same picture: our boxes' edges fall on whole samples (on even ones
    for wide boxes), OpenCV's on fractions, which moves a mean by a few codes where the picture is
    steep (this one changes by up to ~14 codes per sample)."""
    import cv2

    from zerocopy.resize.bgr import BGRResizer
    from zerocopy.resize.planes import PlaneResizer

    rng = np.random.default_rng(0)
    w, h = src
    smooth = cv2.resize(rng.integers(16, 236, (h // 16, w // 16)).astype(np.uint8), (w, h),
                        interpolation=cv2.INTER_CUBIC)
    y, _, g = PlaneResizer(*dst, "letterbox")(_frame(smooth))
    ours = y[0, g.y0 : g.y0 + g.content_h, g.x0 : g.x0 + g.content_w, 0].astype(int)
    bgr, g2 = BGRResizer(cv2, *dst, "letterbox")(np.repeat(smooth[..., None], 3, axis=2))
    assert g2 == g
    theirs = bgr[0, g.y0 : g.y0 + g.content_h, g.x0 : g.x0 + g.content_w, 0].astype(int)
    diff = np.abs(ours - theirs)
    assert diff.mean() < 2.5 and diff.max() <= 16, (diff.mean(), diff.max())


def test_identity_size_is_an_exact_copy():
    from zerocopy.resize.planes import PlaneResizer

    rng = np.random.default_rng(1)
    img = rng.integers(16, 236, (256, 448)).astype(np.uint8)
    y, uv, _ = PlaneResizer(448, 256, "stretch")(_frame(img))
    assert np.array_equal(y[0, :, :, 0], img) and (uv == 128).all()
