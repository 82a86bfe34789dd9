"""zerocopy.frames: the geometry of placing a picture in the model's input."""

import numpy as np
import pytest

from zerocopy.frames import Geometry


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
