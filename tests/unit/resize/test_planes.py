"""zerocopy.resize.planes: area averaging, and the colours of the NV12 it makes.

The NV12 the resizer makes, converted to RGB by OpenVINO's own NV12 input, must give back the colours:
solid colour patches go through swscale (RGB → the source's Y'CbCr), our resize and colour
conversion, then a real OpenVINO identity graph wrapped exactly like a detector (NV12 in, RGB out).
"""

from pathlib import Path

import av
import numpy as np
import openvino as ov
import pytest

from zerocopy.infer.model import ModelSpec, WrappedModel
from zerocopy.resize.planes import PlaneResizer
from zerocopy.samples import rgb_to_frame

PATCHES = np.array([
    [255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0],
    [0, 255, 255], [255, 0, 255], [128, 128, 128], [224, 172, 105],
], np.uint8)


W, H, MW, MH = 640, 360, 64, 64


def patch_image() -> np.ndarray:
    img = np.zeros((H, W, 3), np.uint8)
    for i, c in enumerate(PATCHES):
        r, col = divmod(i, 4)
        img[r * 180 : (r + 1) * 180, col * 160 : (col + 1) * 160] = c
    return img


@pytest.fixture(scope="module")
def identity(tmp_path_factory, core):
    p = ov.opset13.parameter([1, MH, MW, 3], ov.Type.f32, name="image")
    model = ov.Model([ov.opset13.result(ov.opset13.multiply(p, np.float32(1.0)))], [p], "identity")
    path = Path(tmp_path_factory.mktemp("identity")) / "identity.xml"
    ov.save_model(model, path)
    spec = ModelSpec(path=path, name="identity", labels=(), postprocess=None, resize="stretch", colour="RGB",
                     mean=0.0, scale=1.0)
    wrapped = WrappedModel(core, spec, "nv12").compile("CPU")
    return wrapped, wrapped.compiled.create_infer_request()


def to_rgb(identity, frame) -> np.ndarray:
    wrapped, request = identity
    y, uv, _ = PlaneResizer(MW, MH, "stretch")(frame)
    request.infer(dict(zip(wrapped.input_names, (y, uv), strict=True)))
    return request.get_output_tensor(0).data[0]


def patch_centres(rgb: np.ndarray) -> np.ndarray:
    out = []
    for i in range(len(PATCHES)):
        r, col = divmod(i, 4)
        cy, cx = int((r + 0.5) * MH / 2), int((col + 0.5) * MW / 4)
        out.append(rgb[cy - 3 : cy + 3, cx - 2 : cx + 2].reshape(-1, 3).mean(0))
    return np.asarray(out)


def _frame(gray: np.ndarray):
    import av

    h, w = gray.shape
    f = av.VideoFrame(w, h, "yuv420p")
    f.planes[0].update(np.ascontiguousarray(gray))
    for p in f.planes[1:]:
        p.update(np.full((p.height, p.line_size), 128, np.uint8))
    f.colorspace, f.color_range = 6, 1  # BT.601 limited: no colour transform, codes pass through
    return f


@pytest.mark.parametrize("pix_fmt,matrix,full", [
    ("yuv420p", "bt601", False),
    ("yuv420p", "bt709", False),
    ("yuvj420p", "bt601", True),
    ("yuv420p", "bt709", True),
    ("yuv420p10le", "bt709", False),
    ("yuv420p10le", "bt2020", False),
    ("yuv444p", "bt709", False),
    ("yuv422p", "bt601", False),
    ("nv12", "bt709", False),
    ("p010le", "bt709", False),
])
def test_source_colours_survive_the_nv12_handoff(identity, pix_fmt, matrix, full):
    frame = rgb_to_frame(patch_image(), pix_fmt, matrix, full)
    got = patch_centres(to_rgb(identity, frame))
    err = np.abs(got - PATCHES.astype(np.float32)).max()
    assert err <= 4.0, f"{pix_fmt}/{matrix}/{'full' if full else 'limited'}: max error {err:.1f}\n{got.round()}"


def test_a_mislabelled_matrix_is_caught(identity):
    """The check above can fail: BT.709 pixels read as BT.601 shift saturated colours well past it."""
    frame = rgb_to_frame(patch_image(), "yuv420p", "bt709", False)
    frame.colorspace = 6  # claim BT.601
    err = np.abs(patch_centres(to_rgb(identity, frame)) - PATCHES.astype(np.float32)).max()
    assert err > 15.0


def test_gray_source_has_no_colour(identity):
    gray = rgb_to_frame(patch_image(), "yuv420p", "bt601", False).reformat(format="gray")
    rgb = patch_centres(to_rgb(identity, gray))
    assert np.abs(rgb - rgb.mean(axis=1, keepdims=True)).max() <= 2.0


def test_rgb_source_is_converted_first(identity):
    got = patch_centres(to_rgb(identity, av.VideoFrame.from_ndarray(patch_image(), "rgb24")))
    assert np.abs(got - PATCHES.astype(np.float32)).max() <= 8.0


def test_letterbox_bars_are_black(identity):
    wrapped, request = identity
    frame = rgb_to_frame(np.full((360, 640, 3), 255, np.uint8), "yuv420p", "bt601", False)
    y, uv, g = PlaneResizer(MW, MH, "letterbox")(frame)
    request.infer(dict(zip(wrapped.input_names, (y, uv), strict=True)))
    rgb = request.get_output_tensor(0).data[0]
    assert g.y0 > 0
    assert rgb[: g.y0 - 1].max() <= 2.0 and rgb[g.y0 + g.content_h + 1 :].max() <= 2.0
    assert rgb[g.y0 + 2 : g.y0 + g.content_h - 2].min() >= 250.0


def test_pillarbox_keeps_colours_in_place(identity):
    """A portrait frame sits between bars at the sides: each half keeps its own colour (the chroma
    plane lands at the same offset as the luma), and the bars stay black."""
    wrapped, request = identity
    img = np.zeros((640, 360, 3), np.uint8)
    img[:, :180] = (255, 0, 0)
    img[:, 180:] = (0, 0, 255)
    y, uv, g = PlaneResizer(MW, MH, "letterbox", ring=2)(rgb_to_frame(img, "yuv420p", "bt709", False))
    request.infer(dict(zip(wrapped.input_names, (y, uv), strict=True)))
    rgb = request.get_output_tensor(0).data[0]
    assert g.x0 > 0 and g.y0 == 0
    mid, q = MH // 2, g.content_w // 4
    assert np.abs(rgb[mid, g.x0 + q] - (255, 0, 0)).max() <= 6.0
    assert np.abs(rgb[mid, g.x0 + g.content_w - q] - (0, 0, 255)).max() <= 6.0
    assert rgb[:, : g.x0 - 1].max() <= 2.0 and rgb[:, g.x0 + g.content_w + 1 :].max() <= 2.0


def test_gray_is_read_full_range_as_the_baseline_reads_it():
    """A gray picture's black and white stay black and white (swscale reads gray as full range,
    as OpenCV does), so both paths feed the model the same levels."""
    for value, code in ((0, 16), (255, 235)):
        frame = av.VideoFrame.from_ndarray(np.full((360, 640), value, np.uint8), "gray")
        y, uv, _ = PlaneResizer(MW, MH, "stretch")(frame)
        assert (y == code).all() and (uv == 128).all()


def test_fine_detail_shrinks_to_its_mean_instead_of_aliasing():
    """1-pixel stripes shrunk 4.3 times: area averaging gives their mean grey, give or take the
    stripe a box's fractional edge cuts (±5 codes, as `cv2.INTER_AREA` gives); bilinear sampling
    gives a false pattern (what made small faces hinge on where the taps fell)."""
    from zerocopy.resize.planes import PlaneResizer

    stripes = np.tile(np.array([40, 200], np.uint8), (1080, 960))
    f = _frame(stripes)
    resized = PlaneResizer(448, 256, "letterbox")(f)
    g = resized.geometry
    area = resized.y[0, g.y0 : g.y0 + g.content_h, :, 0].astype(float)
    assert abs(area.mean() - 120) < 2 and area.std() < 5
    aliased = PlaneResizer(448, 256, "letterbox", antialias=False)(f).y[0, g.y0 : g.y0 + g.content_h, :, 0]
    aliased = aliased.astype(float)
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
    resized = PlaneResizer(*dst, "letterbox")(_frame(smooth))
    g = resized.geometry
    ours = resized.y[0, g.y0 : g.y0 + g.content_h, g.x0 : g.x0 + g.content_w, 0].astype(int)
    baseline = BGRResizer(cv2, *dst, "letterbox")(np.repeat(smooth[..., None], 3, axis=2))
    assert baseline.geometry == g
    theirs = baseline.tensor[0, g.y0 : g.y0 + g.content_h, g.x0 : g.x0 + g.content_w, 0].astype(int)
    diff = np.abs(ours - theirs)
    assert diff.mean() < 2.5 and diff.max() <= 16, (diff.mean(), diff.max())


def test_identity_size_is_an_exact_copy():
    from zerocopy.resize.planes import PlaneResizer

    rng = np.random.default_rng(1)
    img = rng.integers(16, 236, (256, 448)).astype(np.uint8)
    y, uv, _ = PlaneResizer(448, 256, "stretch")(_frame(img))
    assert np.array_equal(y[0, :, :, 0], img) and (uv == 128).all()
