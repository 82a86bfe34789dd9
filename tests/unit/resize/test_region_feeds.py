"""Regions cut from the decoder's own planes, without copying them, in every pixel format decoders give; and
read in the whole frame's colour matrix."""

from types import SimpleNamespace

import av
import numpy as np
import pytest

from zerocopy.resize.crops import Crop
from zerocopy.resize.regions import PlanesRoiFeed, plane_layout, plane_views, region_planes


def region_frame(frame: av.VideoFrame, crop: Crop) -> av.VideoFrame:
    planes = region_planes(plane_views(frame), plane_layout(frame).planes, crop)
    return av.VideoFrame.from_dlpack(planes, format=frame.format.name, width=crop.w, height=crop.h)


@pytest.mark.parametrize("fmt", ["yuv420p", "yuvj420p", "nv12", "yuv422p", "yuv444p", "gray", "yuv420p10le",
                                 "p010le"])
def test_a_view_of_a_region_shows_the_pixels_of_that_region(fmt):
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, (120, 160, 3), np.uint8)
    frame = av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(format=fmt)
    crop = Crop(40, 20, 64, 48)
    view = region_frame(frame, crop)
    assert (view.width, view.height, view.format.name) == (64, 48, fmt)
    want = frame.reformat(format="rgb24").to_ndarray()[20:68, 40:104].astype(int)
    got = view.reformat(format="rgb24").to_ndarray().astype(int)
    # chroma upsampling at the region's edges differs by a level at most, on average far less
    assert np.abs(want - got).mean() < 0.5, fmt


def test_the_view_shares_the_frames_memory():
    frame = av.VideoFrame(1920, 1080, "yuv420p")
    np.frombuffer(frame.planes[0], np.uint8)[:] = 50
    for chroma in frame.planes[1:]:
        np.frombuffer(chroma, np.uint8)[:] = 128
    view = region_frame(frame, Crop(100, 100, 64, 64))
    np.frombuffer(frame.planes[0], np.uint8)[:] = 200  # written after the view was made
    assert view.to_ndarray(format="gray").min() >= 190  # the view sees the new pixels: nothing was copied


def test_the_feed_reads_a_region_in_the_whole_frames_colour_matrix():
    """A 1080p frame with no colour tag is BT.709: so are its regions, though a 64-px crop alone would be read
    as BT.601 (red and green differ by ~8 levels here)."""
    frame = av.VideoFrame(1920, 1080, "yuv420p")
    frame.colorspace = 2  # unspecified
    for plane, value in zip(frame.planes, (100, 110, 170), strict=True):  # limited range
        np.frombuffer(plane, np.uint8)[:] = value
    model = SimpleNamespace(width=64, height=64, spec=SimpleNamespace(resize="letterbox"), input_names=("x",))
    (inputs, _place, _keep), = PlanesRoiFeed(model)(frame, [Crop(100, 100, 64, 64)])
    _b, g, r = (int(v) for v in inputs["x"][0, 32, 32])
    y, u, v = 1.164 * (100 - 16), 110 - 128, 170 - 128
    bt709 = (y + 1.793 * v, y - 0.213 * u - 0.533 * v)
    bt601 = (y + 1.596 * v, y - 0.391 * u - 0.813 * v)
    for got, want, other in zip((r, g), bt709, bt601, strict=True):
        assert abs(got - want) <= 3 and abs(got - other) > 5, ((r, g), bt709, bt601)
