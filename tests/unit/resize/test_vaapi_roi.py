"""zerocopy.resize.vaapi_roi: where a region lands, the graph made for it, and the refusals that need no GPU."""

import itertools

import av.filter
import numpy as np
import pytest

from zerocopy.errors import InferenceError, PathUnavailable
from zerocopy.frames import Geometry
from zerocopy.infer.model import WrappedModel, resolve_spec
from zerocopy.paths import CopyFront, ZeroCopyFront
from zerocopy.refusals import Code
from zerocopy.resize.crops import Crop, RoiPlacement, crop_for
from zerocopy.resize.vaapi import graph_chain, missing_filters
from zerocopy.resize.vaapi_roi import QUANTUM, GraphLayout, VaapiRoiFeed, central_crop, layout, roi_geometry


def test_a_square_region_fills_the_input_and_maps_back_exactly():
    crop = crop_for(np.array([300, 100, 380, 180]), 640, 360, expand=1.5, square=True)
    g = roi_geometry(crop, 192, 192, "letterbox")
    assert g.is_full and (g.src_w, g.src_h) == (crop.w, crop.h)
    corners = np.array([[0, 0], [192, 192]], np.float32)
    assert RoiPlacement(crop, g).points_to_source(corners).tolist() == [[crop.x0, crop.y0], [crop.x0 + crop.w,
                                                                                             crop.y0 + crop.h]]


def test_a_region_clipped_at_the_edge_is_letterboxed_to_a_quantised_size_and_maps_back_exactly():
    crop = Crop(0, 100, 70, 120)  # a face box ×1.5 that left the frame on the left
    exact = Geometry.fit(crop.w, crop.h, 192, 192, "letterbox")
    g = roi_geometry(crop, 192, 192, "letterbox")
    assert g.content_h == 192 and g.content_w % QUANTUM == 0 and abs(g.content_w - exact.content_w) <= QUANTUM // 2
    assert g.x0 == ((192 - g.content_w) // 2) & ~1 and g.y0 == 0
    # the content's corners are the region's corners: keypoints come back to frame pixels exactly
    content = np.array([[g.x0, g.y0], [g.x0 + g.content_w, g.y0 + g.content_h]], np.float32)
    back = RoiPlacement(crop, g).points_to_source(content)
    assert np.allclose(back, [[0, 100], [70, 220]], atol=1e-4)
    assert roi_geometry(crop, 192, 192, "stretch") == Geometry.fit(70, 120, 192, 192, "stretch")


def test_every_aspect_of_region_needs_only_a_bounded_set_of_graphs():
    sizes = range(8, 642, 2)
    geometries = set()
    for w, h in itertools.product(sizes, (8, 100, 360)):
        g = roi_geometry(Crop(0, 0, w, h), 192, 192, "letterbox")
        geometries.add((g.x0, g.y0, g.content_w, g.content_h))
    assert len(geometries) <= 2 * 192 // QUANTUM


def test_regions_of_any_size_with_one_layout_share_a_graph():
    """The crop fields carry the region: square regions of every size (face-mesh's) need one graph."""
    squares = {layout(roi_geometry(Crop(10, 20, s, s), 192, 192, "letterbox")) for s in range(8, 360, 2)}
    assert squares == {GraphLayout(dst_w=192, dst_h=192, x0=0, y0=0, content_w=192, content_h=192)}
    a, b = roi_geometry(Crop(0, 0, 70, 120), 192, 192, "letterbox"), roi_geometry(Crop(0, 0, 71, 122), 192, 192,
                                                                                    "letterbox")
    assert a != b and layout(a) == layout(b)


def test_the_graph_for_a_region_scales_to_its_content_and_pads_to_the_input():
    g = roi_geometry(Crop(0, 100, 70, 120), 192, 192, "letterbox")
    chain = dict(graph_chain(g, download=False))
    assert f"w={g.content_w}:h=192" in chain["scale_vaapi"] and "out_color_matrix=smpte170m" in chain["scale_vaapi"]
    assert f"width=192:height=192:x={g.x0}:y=0" in chain["pad_vaapi"]
    copy = [name for name, _ in graph_chain(g, download=True)]
    assert copy == ["scale_vaapi", "pad_vaapi", "hwdownload", "format", "buffersink"]
    full = [name for name, _ in graph_chain(roi_geometry(Crop(10, 10, 100, 100), 192, 192, "letterbox"), False)]
    assert full == ["scale_vaapi", "buffersink"]


def test_central_crop_is_even_and_inside():
    c = central_crop(641, 359)
    assert c == Crop(160, 88, 320, 178) and c.x0 + c.w <= 641 and c.y0 + c.h <= 359
    assert all(v % 2 == 0 for v in (c.x0, c.y0, c.w, c.h))


@pytest.fixture(scope="module")
def surface_model(core, face_model_path):
    return WrappedModel(core, resolve_spec("face", core=core), "nv12", 1, "GPU_SURFACE")


def _first_missing(download: bool) -> str:
    missing = missing_filters("letterbox", download)
    return f"lacks the {', '.join(missing)} filter" if missing else "native bridge is not loaded"


@pytest.mark.parametrize("front", [ZeroCopyFront(), CopyFront()], ids=["zero-copy", "copy"])
def test_a_feed_that_cannot_work_refuses_its_path_with_the_region_code(front, surface_model):
    """Here PyAV has no scale_vaapi (PyPI's wheel), in the VA stack root no bridge is passed: either way
    the path is refused with ROI_CROP before anything is cropped."""
    with pytest.raises(PathUnavailable) as e:
        VaapiRoiFeed(front.name, None, surface_model, None, download=front.download)
    (reason,) = e.value.reasons[front.name]
    assert reason.code is Code.ROI_CROP and _first_missing(front.download) in reason, reason


def test_zero_copy_without_a_remote_context_is_refused(surface_model):
    if missing_filters("letterbox", False):
        pytest.skip(reason="this PyAV has no scale_vaapi: refused earlier (see the test above)")
    from zerocopy.bridge import bridge_status

    bridge, why = bridge_status()
    if bridge is None:
        pytest.skip(reason=f"needs the bridge next to PyAV (the VA stack root): {why}")
    with pytest.raises(PathUnavailable, match="no VA remote context"):
        VaapiRoiFeed("zero-copy", bridge, surface_model, None)
    feed = VaapiRoiFeed("copy", bridge, surface_model, None, download=True)
    frame = av.VideoFrame(64, 48, "nv12")  # a software frame: the bridge refuses it, cleanly
    with pytest.raises(InferenceError, match="copy: cropping a region on the GPU failed: .*not a VA-API frame"):
        feed(frame, [Crop(8, 8, 32, 32)])
    with pytest.raises(PathUnavailable) as e:
        feed.prime(frame)
    assert e.value.reasons["copy"][0].code is Code.ROI_CROP and feed.graphs == 0


def test_the_filters_named_exist_where_pyav_has_va_api():
    if "scale_vaapi" not in av.filter.filters_available:
        pytest.skip(reason="PyPI's PyAV has no VA-API filters")
    assert not missing_filters("letterbox", True)
