"""Asynchronous inference with `nireq` requests in flight; results come back in frame order."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import openvino as ov

from zerocopy.frames import PreparedFrame
from zerocopy.infer.model import WrappedModel
from zerocopy.outputs.base import split_batch_major


class Handoff(Protocol):
    def bind(self, request: ov.InferRequest, frames: Sequence[PreparedFrame], slot: int) -> Any:
        """Set the request's inputs from `frames`; `slot` names the request (stable per request).
        Returns whatever must stay alive until the request completes."""


@dataclass
class Result:
    """One frame's raw outputs, with the wall time its request took (shared by a batch)."""

    frame: PreparedFrame
    outputs: dict[str, np.ndarray]
    inference_ms: float


class InferenceScheduler:
    """Submits batches to an `AsyncInferQueue` and hands results back strictly in submission order.

    Requests finish in any order; their outputs are copied in the completion callback and parked
    until every earlier batch is out, so sinks always see frames in decode order.
    """

    def __init__(self, model: WrappedModel, handoff: Handoff, nireq: int):
        self.model, self.handoff, self.nireq = model, handoff, nireq
        self._queue = ov.AsyncInferQueue(model.compiled, nireq)
        self._queue.set_callback(self._done)
        self._lock = threading.Condition()
        self._finished: dict[int, tuple[list[dict[str, np.ndarray]], float, BaseException | None]] = {}
        self._pending: dict[int, tuple[list[PreparedFrame], Any, float]] = {}
        self._next_submit = 0
        self._next_deliver = 0

    def submit(self, frames: Sequence[PreparedFrame]) -> None:
        """Start one batch (len == model batch; pad with repeats of the last frame if short)."""
        frames = list(frames)
        real = len(frames)
        while len(frames) < self.model.batch:
            frames.append(frames[-1])
        rid = self._queue.get_idle_request_id()
        held = self.handoff.bind(self._queue[rid], frames, rid)
        seq = self._next_submit
        self._next_submit += 1
        with self._lock:
            self._pending[seq] = (frames[:real], held, time.perf_counter())
        self._queue.start_async(userdata=seq)

    def _done(self, request: ov.InferRequest, seq: int) -> None:
        end = time.perf_counter()
        try:
            outputs = self.model.outputs_of(request)
            n = self.model.batch
            decoder = self.model.decoder
            if n == 1:
                per_frame = [outputs]
            elif decoder is not None:
                per_frame = decoder.split(outputs, n)
            else:
                per_frame = split_batch_major(outputs, n)
            err = None
        except BaseException as e:  # surfaced on the main thread by results()
            per_frame, err = [], e
        with self._lock:
            start = self._pending[seq][2]
            self._finished[seq] = (per_frame, (end - start) * 1e3, err)
            self._lock.notify_all()

    def results(self, wait: bool = False) -> Iterator[Result]:
        """Yield finished results in order; with `wait`, block until everything submitted is out."""
        while self._next_deliver < self._next_submit:
            with self._lock:
                if self._next_deliver not in self._finished:
                    if not wait:
                        return
                    self._lock.wait_for(lambda: self._next_deliver in self._finished)
                per_frame, ms, err = self._finished.pop(self._next_deliver)
                frames, _held, _start = self._pending.pop(self._next_deliver)
            self._next_deliver += 1
            if err is not None:
                raise err
            for frame, outputs in zip(frames, per_frame, strict=False):
                yield Result(frame, outputs, ms)

    def wait_all(self) -> None:
        self._queue.wait_all()
