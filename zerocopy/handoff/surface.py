"""VA surface → OpenVINO remote NV12 tensors: the zero-copy hand-off.

`ov.VAContext` wraps the decoder's VADisplay (as a PyCapsule); the shared wrapped model is
compiled with that context and `GPU_SURFACE` memory. Per frame, `create_tensor_nv12` makes Y and
UV remote tensors over the scaled surface; the frame stays referenced by the `PreparedFrame`
until its request completes, so the surface is not recycled under the GPU.
"""

from __future__ import annotations

from collections.abc import Sequence

import av
import openvino as ov

from zerocopy.errors import PathUnavailable
from zerocopy.frames import PreparedFrame
from zerocopy.refusals import Code, Reason

# What a request bound to a surface holds until it completes: its Y and UV remote tensors, and the VA frame whose
# surface they are over (so that FFmpeg's pool does not hand the surface out again meanwhile)
SurfaceHold = tuple[ov.VASurfaceTensor, ov.VASurfaceTensor, av.VideoFrame]


def va_context(core: ov.Core, display_capsule) -> ov.VAContext:
    """The remote context, or a refusal with OpenVINO's own first line (e.g. no GPU)."""
    try:
        return ov.VAContext(core, display_capsule)
    except (RuntimeError, TypeError) as e:
        first = next((line.strip() for line in str(e).splitlines() if "[GPU]" in line),
                     (str(e).strip().splitlines() or ["failed"])[0])
        raise PathUnavailable({"zero-copy": Reason(Code.NO_SURFACE_SHARING,
                                                   f"OpenVINO cannot share the VA display: {first}")}) from None


class SurfaceHandoff:
    """Binds one frame's VA surface to a request as remote Y/UV tensors (batch 1 only)."""

    def __init__(self, context: ov.VAContext, input_names: Sequence[str], bridge):
        self.context, self.bridge = context, bridge
        self.y_name, self.uv_name = input_names

    def bind(self, request: ov.InferRequest, frames: Sequence[PreparedFrame], slot: int) -> SurfaceHold:
        if len(frames) != 1:
            raise PathUnavailable({"zero-copy": Reason(Code.BATCH,
                                                       "remote NV12 surfaces cannot be batched from Python")})
        frame = frames[0]
        surface = frame.keepalive
        y, uv = self.context.create_tensor_nv12(frame.geometry.dst_h, frame.geometry.dst_w,
                                                self.bridge.surface_id(surface))
        request.set_tensor(self.y_name, y)
        request.set_tensor(self.uv_name, uv)
        return (y, uv, surface)
