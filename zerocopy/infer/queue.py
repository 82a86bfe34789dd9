"""Asynchronous inference with `nireq` requests in flight; results come back in frame order."""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import openvino as ov

from zerocopy.errors import InferenceError, openvino_reason
from zerocopy.frames import PreparedFrame
from zerocopy.infer.model import WrappedModel
from zerocopy.infer.requests import RequestQueue
from zerocopy.postprocess.base import split_batch_major


class Handoff(Protocol):
    def bind(self, request: ov.InferRequest, frames: Sequence[PreparedFrame], slot: int) -> Any:
        """Set the request's inputs from `frames`; `slot` names the request (stable per request).
        Returns whatever must stay alive until the request completes."""


@dataclass
class Result:
    """One frame's raw outputs, with the wall time its request took (shared by a batch); `outputs` is
    None for a frame that was not inferred (`pass_through`)."""

    frame: PreparedFrame
    outputs: dict[str, np.ndarray] | None
    inference_ms: float


@dataclass
class _Pending:
    frames: list[PreparedFrame]
    rid: int
    start: float


class InferenceScheduler:
    """Submits batches to an `AsyncInferQueue` and hands results back strictly in submission order.

    Requests finish in any order; their outputs are copied in the completion callback and parked
    until every earlier batch is out, so sinks always see frames in decode order.

    A request that fails never calls the callback; OpenVINO rethrows its error from the queue's
    waits instead. So the scheduler waits on each request itself (in order), turns a failure into
    `InferenceError` at that request's place in the order, and never waits for a callback that
    cannot come.
    """

    def __init__(self, model: WrappedModel, handoff: Handoff, nireq: int):
        self.model, self.handoff, self.nireq = model, handoff, nireq
        self._queue = RequestQueue(model.compiled, nireq, self._done)
        self._lock = threading.Condition()
        self._finished: dict[int, tuple[list[dict[str, np.ndarray]], float, BaseException | None]] = {}
        self._pending: dict[int, _Pending] = {}
        self._next_submit = 0
        self._next_deliver = 0
        self.failed = False  # a request failed: OpenVINO's queue keeps rethrowing it, so use a new one
        self.abandoned = False  # a request did not finish in time: waiting on it again could hang

    def submit(self, frames: Sequence[PreparedFrame]) -> None:
        """Start one batch (len == model batch; pad with repeats of the last frame if short).

        Raises `InferenceError` when an earlier request failed (OpenVINO reports it here; `results`
        then says which); what the hand-off raises while binding propagates as it is.
        """
        frames = list(frames)
        real = len(frames)
        while len(frames) < self.model.batch:
            frames.append(frames[-1])
        try:
            rid = self._queue.get_idle_request_id()
        except RuntimeError as e:
            self.failed = True
            raise InferenceError(f"inference failed: {openvino_reason(e)}") from None
        seq = self._next_submit
        try:  # what the hand-off bound (remote tensors, the VA frame) stays with the queue until delivered
            self._queue.hold(seq, self.handoff.bind(self._queue[rid], frames, rid))
        except BaseException as e:  # its frames must not keep the request (so the queue's callback) alive
            traceback.clear_frames(e.__traceback__)
            raise
        with self._lock:
            self._pending[seq] = _Pending(frames[:real], rid, time.perf_counter())
        self._next_submit += 1
        try:
            self._queue.start_async(userdata=seq)
        except RuntimeError as e:
            self.failed = True
            with self._lock:
                self._pending.pop(seq)
            self._queue.let_go(seq)
            self._next_submit -= 1
            raise InferenceError(f"inference could not start: {openvino_reason(e)}") from None

    def pass_through(self, frame: PreparedFrame) -> None:
        """A frame that is not inferred (`--detect-fps`): it comes out of `results` at its place in the
        order, with `outputs` None, once every batch submitted before it is out."""
        seq = self._next_submit
        with self._lock:
            self._pending[seq] = _Pending([frame], -1, time.perf_counter())
            self._finished[seq] = ([None], 0.0, None)  # type: ignore[list-item]
        self._next_submit += 1

    def _done(self, request: ov.InferRequest, seq: int) -> None:
        end = time.perf_counter()
        try:
            outputs = self.model.outputs_of(request)
            n = self.model.batch
            postprocessor = self.model.postprocessor
            if n == 1:
                per_frame = [outputs]
            elif postprocessor is not None:
                per_frame = postprocessor.split(outputs, n)
            else:
                per_frame = split_batch_major(outputs, n)
            err = None
        except BaseException as e:  # surfaced on the main thread by results()
            per_frame, err = [], e
        with self._lock:
            start = self._pending[seq].start
            self._finished[seq] = (per_frame, (end - start) * 1e3, err)
            self._lock.notify_all()

    def _settle(self, timeout: float | None = None) -> None:
        """Wait for every request in flight, in order, and record the ones that failed.

        A request that completes has run `_done` when its wait returns (checked on OpenVINO
        2026.4); one that failed raises from its wait, every time it is waited on.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        for seq in sorted(self._pending):
            if seq in self._finished:
                continue
            request = self._queue[self._pending[seq].rid]
            try:
                if deadline is None:
                    request.wait()
                elif not request.wait_for(max(0, int((deadline - time.monotonic()) * 1e3))):
                    self.abandoned = self.failed = True  # never wait on it again (it may never end)
                    raise InferenceError(f"an inference request did not complete within {timeout:g} s")
            except RuntimeError as e:
                self.failed = True
                with self._lock:
                    self._finished[seq] = ([], 0.0, InferenceError(f"inference failed: {openvino_reason(e)}"))
                continue
            with self._lock:  # in case the callback still runs on OpenVINO's thread
                self._lock.wait_for(lambda s=seq: s in self._finished, timeout=5.0)

    def results(self, wait: bool = False, timeout: float | None = None) -> Iterator[Result]:
        if self.abandoned:
            return
        yield from self._results(wait, timeout)

    def _results(self, wait: bool, timeout: float | None) -> Iterator[Result]:
        """Yield finished results in order; with `wait`, first wait until everything submitted is done.

        A failed request raises `InferenceError` at its place in the order (after the results before
        it). With `timeout` (seconds), a request still running then raises `InferenceError` too.
        """
        if wait:
            self._settle(timeout)
        while self._next_deliver < self._next_submit:
            with self._lock:
                if self._next_deliver not in self._finished:
                    return
                per_frame, ms, err = self._finished.pop(self._next_deliver)
                pending = self._pending.pop(self._next_deliver)
            self._queue.let_go(self._next_deliver)
            self._next_deliver += 1
            if err is not None:
                if isinstance(err, InferenceError):
                    err.frames = pending.frames  # whose results are lost (the caller may need to know)
                raise err
            for frame, outputs in zip(pending.frames, per_frame, strict=False):
                yield Result(frame, outputs, ms)

    def discard(self) -> None:
        """Forget what was submitted and not delivered (after `wait_all`): the input it came from ended. What a
        request that has not finished reads stays with its queue until the queue is freed."""
        with self._lock:
            done = [seq for seq in self._pending if seq in self._finished]
            self._pending.clear()
            self._finished.clear()
        for seq in done:  # a request still running (interrupted waits, a hung one) keeps what it reads till close
            self._queue.let_go(seq)
        self._next_deliver = self._next_submit

    def wait_all(self) -> None:
        """Wait for every request in flight; never raises for a failed one (`results` does). After a
        request that did not finish in time, returns at once: that request is left to OpenVINO."""
        if not self.abandoned:
            self._settle()

    def close(self) -> None:
        """Wait for the requests in flight and free the request queue (`RequestQueue.close`)."""
        self._queue.close(abandoned=self.abandoned)
        self.discard()

    @property
    def in_flight(self) -> int:
        return len(self._pending)
