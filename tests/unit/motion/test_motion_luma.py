"""zerocopy.motion.luma: each path's small luma picture, from real decoded frames (the VA graph's chain here; the
graph itself in tests/native/test_vastack_motion.py)."""

import av
import av.filter
import numpy as np
import pytest
from PIL import Image

from zerocopy.errors import PathUnavailable
from zerocopy.motion.luma import FULL_FROM_LIMITED, BgrLuma, PlanesLuma, VaapiLuma
from zerocopy.samples import ClipSpec


def first_frame(path) -> av.VideoFrame:
    with av.open(str(path)) as container:
        return next(container.decode(video=0))


def reference(frame: av.VideoFrame, size: tuple[int, int]) -> np.ndarray:
    """The frame's full-range brightness (its Y plane; limited range, 16–235, stretched to 0–255), area-averaged to
    `size` (what the small picture should look like)."""
    plane = frame.planes[0]
    y = np.frombuffer(plane, np.uint8).reshape(-1, plane.line_size)[: frame.height, : frame.width].astype(np.float32)
    if frame.color_range != 2:
        y = np.clip((y - 16) * 255 / 219, 0, 255)
    return np.asarray(Image.fromarray(y, mode="F").resize(size, Image.BOX), np.float32)


def cells(picture: np.ndarray) -> np.ndarray:
    """Mean brightness per 8×8 cell: the scale motion is measured at."""
    h, w = picture.shape
    return picture.astype(np.float32).reshape(h // 8, 8, w // 8, 8).mean(axis=(1, 3))


@pytest.mark.parametrize("full_range", [False, True])
def test_the_software_luma_is_the_frames_brightness_small(clips, full_range):
    path, _ = clips(f"luma-{full_range}.mp4", ClipSpec(width=1280, height=720, frames=2, full_range=full_range,
                                                        face="grace_hopper"))
    frame = first_frame(path)
    luma = PlanesLuma()(frame)
    assert (luma.width, luma.height) == (1280, 720)
    assert luma.picture.shape == (112, 192) and luma.picture.dtype == np.uint8
    error = cells(luma.picture) - cells(reference(frame, (192, 112)))
    assert abs(error.mean()) < 1  # full range, whatever the frame's
    assert np.abs(error).mean() < 2  # point samples against a box average


def test_a_frame_of_another_format_gives_the_same_picture(clips):
    path, _ = clips("luma-False.mp4", ClipSpec(width=1280, height=720, frames=2, face="grace_hopper"))
    frame = first_frame(path)
    eight = PlanesLuma()(frame).picture  # sampled in place
    for fmt in ("yuv420p10le", "rgb24"):  # 10-bit planes; packed RGB (no Y plane at all)
        other = PlanesLuma()(frame.reformat(format=fmt)).picture
        assert other.shape == (112, 192)
        assert np.abs(cells(other) - cells(eight)).mean() < 2, fmt


def test_gray_without_a_range_tag_is_full_range_with_one_it_follows_it():
    levels = np.repeat(np.array([0, 32, 64, 224, 255], np.uint8), 64)[None].repeat(360, axis=0)  # 320 wide
    frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(levels), format="gray")
    assert frame.color_range == 0  # unspecified
    assert set(np.unique(PlanesLuma()(frame).picture)) == {0, 32, 64, 224, 255}  # as they are
    frame.color_range = 1  # said to be limited range (MPEG)
    assert set(np.unique(PlanesLuma()(frame).picture)) == {0, 19, 56, 242, 255}  # 16–235 stretched


def test_the_baseline_luma_samples_the_bgr_picture(clips):
    path, _ = clips("luma-bgr.mp4", ClipSpec(width=1280, height=720, frames=2, face="grace_hopper"))
    frame = first_frame(path)
    bgr = frame.to_ndarray(format="bgr24")
    luma = BgrLuma()(bgr)
    assert (luma.width, luma.height) == (1280, 720) and luma.picture.shape == (112, 192)
    brightness = bgr.astype(np.float32) @ np.array([0.114, 0.587, 0.299], np.float32)  # BT.601 luma of the picture
    whole = np.asarray(Image.fromarray(brightness, mode="F").resize((192, 112), Image.BOX), np.float32)
    error = cells(luma.picture) - cells(whole)
    assert abs(error.mean()) < 1 and np.abs(error).mean() < 2  # point samples against a box average
    assert luma.picture[0, 0] == round(float(bgr[3, 3] @ np.array([0.114, 0.587, 0.299])))  # the pixel at (3.3, 3.2)


def test_limited_range_luma_becomes_full_range():
    assert FULL_FROM_LIMITED[16] == 0 and FULL_FROM_LIMITED[235] == 255
    assert FULL_FROM_LIMITED[0] == 0 and FULL_FROM_LIMITED[255] == 255 and FULL_FROM_LIMITED[126] == 128


def test_the_va_luma_chain_is_the_scalers_own_at_the_luma_size():
    if "scale_vaapi" not in av.filter.filters_available:
        with pytest.raises(PathUnavailable, match="scale_vaapi"):
            VaapiLuma(None, "copy")
        return
    chain = VaapiLuma(None, "copy").chain(1920, 1080)
    assert [name for name, _ in chain] == ["scale_vaapi", "hwdownload", "format", "buffersink"]
    assert "w=192:h=112" in chain[0][1] and "format=nv12" in chain[0][1] and chain[2][1] == "nv12"
