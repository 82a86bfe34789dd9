"""zerocopy.handoff.surface: refusals without a GPU."""

import openvino as ov
import pytest

from zerocopy.bridge import (
    BridgeUnavailable,
)
from zerocopy.bridge.loader import (
    make_capsule,
)
from zerocopy.errors import PathUnavailable
from zerocopy.handoff.surface import SurfaceHandoff, va_context

pytestmark = pytest.mark.native


def test_va_context_without_a_gpu_becomes_a_refusal():
    core = ov.Core()
    if "GPU" in core.available_devices:
        pytest.skip(reason="this machine has a GPU")
    with pytest.raises(PathUnavailable) as e:
        va_context(core, make_capsule(0x1234))
    assert "[GPU]" in e.value.reasons["zero-copy"][0]
    with pytest.raises(PathUnavailable, match="cannot share"):
        va_context(core, 0x1234)  # not a capsule: OpenVINO's TypeError, refused the same way
    with pytest.raises(BridgeUnavailable):
        make_capsule(0)


def test_surface_handoff_takes_one_frame_per_request():
    handoff = SurfaceHandoff(context=None, input_names=["in/y", "in/uv"], bridge=None)
    with pytest.raises(PathUnavailable, match="batched"):
        handoff.bind(None, [object(), object()], 0)
