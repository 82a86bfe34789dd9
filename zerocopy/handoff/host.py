"""Host arrays → the request's input tensors. The arrays are shared with OpenVINO, not copied."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import openvino as ov

from zerocopy.frames import PreparedFrame


class HostHandoff:
    """Binds the frames' host planes (NV12 Y/UV or BGR) to a request; a batch is stacked once."""

    def __init__(self, input_names: Sequence[str]):
        self.input_names = list(input_names)

    def bind(self, request: ov.InferRequest, frames: Sequence[PreparedFrame]) -> list[np.ndarray]:
        """Set the inputs; returns the arrays that must stay alive until the request completes."""
        held = []
        for name in self.input_names:
            if len(frames) == 1:
                arr = frames[0].inputs[name]
            else:
                arr = np.concatenate([f.inputs[name] for f in frames], axis=0)
            request.set_tensor(name, ov.Tensor(np.ascontiguousarray(arr), shared_memory=True))
            held.append(arr)
        return held
