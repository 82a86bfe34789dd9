"""Regions cut from the decoder's own planes, without copying them, in every pixel format decoders give."""

import av
import numpy as np
import pytest

from zerocopy.roi.crops import Crop
from zerocopy.roi.feeds import crop_view


@pytest.mark.parametrize("fmt", ["yuv420p", "yuvj420p", "nv12", "yuv422p", "yuv444p", "gray", "yuv420p10le",
                                 "p010le"])
def test_a_view_of_a_region_shows_the_pixels_of_that_region(fmt):
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, (120, 160, 3), np.uint8)
    frame = av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(format=fmt)
    crop = Crop(40, 20, 64, 48)
    view = crop_view(frame, crop)
    assert (view.width, view.height, view.format.name) == (64, 48, fmt)
    want = frame.reformat(format="rgb24").to_ndarray()[20:68, 40:104].astype(int)
    got = view.reformat(format="rgb24").to_ndarray().astype(int)
    # chroma upsampling at the region's edges differs by a level at most, on average far less
    assert np.abs(want - got).mean() < 0.5, fmt


def test_the_view_shares_the_frames_memory_and_keeps_its_colour_matrix():
    frame = av.VideoFrame(1920, 1080, "yuv420p")
    frame.colorspace = 2  # unspecified: a 1080p frame is read as BT.709, and so must its regions be
    np.frombuffer(frame.planes[0], np.uint8)[:] = 50
    for chroma in frame.planes[1:]:
        np.frombuffer(chroma, np.uint8)[:] = 128
    view = crop_view(frame, Crop(100, 100, 64, 64))
    np.frombuffer(frame.planes[0], np.uint8)[:] = 200  # written after the view was made
    assert view.to_ndarray(format="gray").min() >= 190  # the view sees the new pixels: nothing was copied
    assert view.colorspace == 1
