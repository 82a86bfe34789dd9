"""The one owner of OpenVINO's request queues: `RequestQueue`, and the rule by which a queue, its callback, its
compiled model and what its requests read are freed (never while a thread of OpenVINO may still touch them)."""

from __future__ import annotations

import atexit
import contextlib
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

import openvino as ov


class RequestQueue:
    """An `AsyncInferQueue` of `jobs` requests on `compiled`, and the one place that frees it.

    The rule, for every OpenVINO object a thread of OpenVINO may touch: **nothing is freed while a request may
    still run**. OpenVINO's completion callback captures the `AsyncInferQueue` itself (C++ `this`) and uses it
    after the Python callback returns; a queue freed before then is a use after free on OpenVINO's thread
    (SIGSEGV in `_pyopenvino`, no Python frame). So the queue is freed only here, in this order:

    1. every request has returned from its callback (each request's own wait: `wait_all` stops at the first
       failed one and would leave the others running);
    2. the queue goes; OpenVINO then lets the callback go, on whichever of its threads drops the last request,
       GIL taken for it; it is waited for with the GIL released (its weak reference dies), because a compiled
       model freed meanwhile joins that thread, GIL held, and hangs the process;
    3. only then may the compiled model and what the requests read (`hold`: remote tensors, VA frames) go.

    `close()` does this on the caller's thread. A queue dropped without `close()` (an owner that forgot, an
    exception, the last reference let go on OpenVINO's own thread) is handed to one reaper thread that does the
    same, off every OpenVINO thread. A request that never ends (a hung GPU, `close(abandoned=True)`) keeps its
    queue, model and inputs for the process's life. The callback holds its owner through a weak reference: a
    bound method held by the queue its owner holds is a cycle through native code no collector can break.
    """

    def __init__(self, compiled: ov.CompiledModel, jobs: int, on_done: Callable[[ov.InferRequest, Any], None]):
        method = weakref.WeakMethod(on_done)

        def done(request: ov.InferRequest, userdata: Any) -> None:
            bound = method()
            if bound is not None:
                bound(request, userdata)

        self._compiled = compiled
        self._held: dict[Any, Any] = {}
        self.queue: ov.AsyncInferQueue | None = ov.AsyncInferQueue(compiled, jobs)
        self.queue.set_callback(done)
        self._callback = weakref.ref(done)  # OpenVINO holds it alone from here: alive while it may be called

    def __getitem__(self, rid: int) -> ov.InferRequest:
        assert self.queue is not None, "closed"
        return self.queue[rid]

    def get_idle_request_id(self) -> int:
        assert self.queue is not None, "closed"
        return self.queue.get_idle_request_id()

    def start_async(self, userdata: Any) -> None:
        assert self.queue is not None, "closed"
        self.queue.start_async(userdata=userdata)

    def wait_all(self) -> None:
        assert self.queue is not None, "closed"
        self.queue.wait_all()

    def hold(self, key: Any, value: Any) -> None:
        """Keep `value` (what a request reads: remote tensors, the VA frame) until `let_go(key)`, or, if the queue
        is freed first, until its requests are done."""
        if value is not None:
            self._held[key] = value

    def let_go(self, key: Any | None = None) -> None:
        """What `hold` kept under `key` (None: everything), once the request that read it is done."""
        if key is None:
            self._held.clear()
        else:
            self._held.pop(key, None)

    def close(self, abandoned: bool = False) -> None:
        """Free the queue (idempotent) by the rule above, on this thread. `abandoned`: a request never finished (a
        hung GPU): the queue is kept as it is, never freed."""
        retired = self._retire()
        if retired is None:
            return
        if abandoned:
            _NEVER_FREED.append(retired)
        else:
            retired.free()

    def __del__(self) -> None:
        retired = self._retire()
        if retired is not None:  # dropped without close(): maybe on OpenVINO's own thread, so never block here
            _REAPER.take(retired)

    def _retire(self) -> _Retired | None:
        queue, self.queue = getattr(self, "queue", None), None
        if queue is None:
            return None
        held, self._held = self._held, {}
        return _Retired(queue, self._compiled, self._callback, held)


class _Retired:
    """A queue on its way out, with everything that must outlive its requests (`RequestQueue`'s rule)."""

    def __init__(self, queue: ov.AsyncInferQueue, compiled: ov.CompiledModel, callback: weakref.ref, held: dict):
        self.queue: ov.AsyncInferQueue | None = queue
        self.compiled, self.callback, self.held = compiled, callback, held

    def free(self) -> None:
        """Wait for every request, as long as it takes, free the queue, wait for OpenVINO to let the callback
        go, then let the model and inputs go (kept for the process's life if the callback is not let go)."""
        assert self.queue is not None
        for rid in range(len(self.queue)):
            # each request on its own: a failed one raises from its wait while the others may still run
            with contextlib.suppress(RuntimeError):
                self.queue[rid].wait()
        self.queue = None  # OpenVINO lets the callback go, maybe on one of its threads
        deadline = time.monotonic() + RELEASE_TIMEOUT_S
        while self.callback() is not None and time.monotonic() < deadline:
            time.sleep(0.001)  # the GIL released: the thread letting the callback go may take it
        if self.callback() is not None:
            _NEVER_FREED.append(self)  # still held natively: freeing its model could hang
            return
        self.compiled, self.held = None, {}


class _Reaper:
    """Frees the queues dropped without `close()` (`RequestQueue.__del__`), each on a daemon thread of its own,
    never on a thread of OpenVINO's: a request still running when its queue was dropped is waited for there."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def take(self, retired: _Retired) -> None:
        thread = threading.Thread(target=retired.free, name="zerocopy-free-queue", daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            try:
                thread.start()
            except RuntimeError:  # the interpreter is shutting down: keep it, never free it under a running request
                _NEVER_FREED.append(retired)
                return
            if not self._threads:
                # done before the interpreter finalizes: a daemon thread that wakes in OpenVINO's code after that
                # is unwound through C++ frames that cannot be, and the process aborts
                atexit.register(self.idle, REAPER_EXIT_WAIT_S)
            self._threads.append(thread)

    def idle(self, timeout: float = 30.0) -> bool:
        """Whether every queue handed over has been dealt with (waiting up to `timeout` seconds)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in threads)


# request queues (with their compiled models and inputs) that could not be freed safely: kept for the process's life
_NEVER_FREED: list[_Retired] = []
_REAPER = _Reaper()
RELEASE_TIMEOUT_S = 5.0  # for OpenVINO to let a freed queue's callback go
REAPER_EXIT_WAIT_S = 10.0  # at the process's exit, for the reaper to finish what it was handed
