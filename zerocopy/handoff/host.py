"""Host arrays → the request's own input memory.

The planes (a few tens of KB at model size) are copied into each request's input tensors, found
once per request. So the arrays can be reused as soon as `bind` returns (the resizers keep a small
ring of output buffers), and a batch is filled slot by slot with no concatenation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import openvino as ov

from zerocopy.frames import PreparedFrame


class HostHandoff:
    def __init__(self, input_names: Sequence[str]):
        self.input_names = list(input_names)
        self._views: dict[int, list[np.ndarray]] = {}

    def bind(self, request: ov.InferRequest, frames: Sequence[PreparedFrame], slot: int) -> None:
        views = self._views.get(slot)
        if views is None:
            views = self._views[slot] = [request.get_tensor(name).data for name in self.input_names]
        for name, view in zip(self.input_names, views, strict=True):
            for i, frame in enumerate(frames):
                view[i] = frame.inputs[name][0]
