"""zerocopy.resize.vaapi: the VA filter chain up to where the hardware starts."""

import av
import av.filter
import pytest

from zerocopy.errors import PathUnavailable
from zerocopy.frames import Geometry
from zerocopy.resize.vaapi import VaapiScaler, graph_chain

pytestmark = pytest.mark.native


def test_scale_graph_asks_for_bt601_limited_nv12_and_pads_for_letterbox():
    g = Geometry.fit(1920, 1080, 128, 128, "letterbox")
    chain = dict(graph_chain(g, download=False))
    scale = chain["scale_vaapi"]
    assert "w=128:h=72" in scale and "format=nv12" in scale
    assert not any("extra_hw_frames" in args for args in chain.values())  # ignored by VPP pools
    assert "out_color_matrix=smpte170m" in scale and "out_range=limited" in scale
    assert "width=128:height=128:x=0:y=28" in chain["pad_vaapi"]
    assert "hwdownload" not in chain
    copy = [name for name, _ in graph_chain(g, download=True)]
    assert copy == ["scale_vaapi", "pad_vaapi", "hwdownload", "format", "buffersink"]
    stretch = [name for name, _ in graph_chain(Geometry.fit(1920, 1080, 300, 300, "stretch"), False)]
    assert stretch == ["scale_vaapi", "buffersink"]


def test_scaler_refuses_when_the_filters_are_missing():
    if "scale_vaapi" in av.filter.filters_available:
        pytest.skip(reason="this PyAV has scale_vaapi")
    with pytest.raises(PathUnavailable, match="scale_vaapi"):
        VaapiScaler(None, 128, 128, "letterbox", download=False)
