"""The one owner of OpenVINO's request queues: `RequestQueue`, and the rule by which a queue, its callback, its
compiled model and what its requests read are freed (never while a thread of OpenVINO may still touch them)."""

from __future__ import annotations

import atexit
import contextlib
import sys
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

    `close()` does this on the caller's thread (never a completion callback's: it would wait for itself); if it is
    interrupted (a second Ctrl-C), what is left is done on a thread of its own. A queue dropped without `close()`
    (an owner that forgot, an exception, the last reference let go on OpenVINO's own thread) is freed the same
    way on a daemon thread of its own, never on OpenVINO's. A request that never ends (a hung GPU) keeps its queue,
    model and inputs for the process's life: at once with `close(abandoned=True)`; dropped unclosed, its thread
    waits for it (and the process's exit, `REAPER_EXIT_WAIT_S`). The callback holds its owner through a weak
    reference: a bound method held by the queue its owner holds is a cycle through native code no collector can
    break. Hold no `InferRequest` of the queue past `close()`: it keeps the request, and so the callback, alive.
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
            return
        try:
            retired.free()
        except BaseException:  # interrupted (a second Ctrl-C): the rest on a thread of its own, never dropped half-done
            _REAPER.take(retired)
            raise

    def __del__(self) -> None:
        # dropped without close(): maybe on OpenVINO's own thread, so never block here (and at the interpreter's
        # finalization this module's globals may be gone already)
        with contextlib.suppress(Exception):
            retired = self._retire()
            if retired is not None:
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
        self._waited = 0  # requests waited for so far: `free` picks up where an interrupted one stopped

    def free(self) -> None:
        """Wait for every request, as long as it takes, free the queue, wait for OpenVINO to let the callback
        go, then let the model and inputs go (kept for the process's life if the callback is not let go)."""
        while self.queue is not None and self._waited < len(self.queue):
            # each request on its own: a failed one raises from its wait while the others may still run
            with contextlib.suppress(Exception):
                self.queue[self._waited].wait()
            self._waited += 1
        self.queue = None  # OpenVINO lets the callback go, maybe on one of its threads
        deadline = time.monotonic() + RELEASE_TIMEOUT_S
        while self.callback() is not None and time.monotonic() < deadline:
            time.sleep(0.001)  # the GIL released: the thread letting the callback go may take it
        if self.callback() is not None:
            _NEVER_FREED.append(self)  # still held natively: freeing its model could hang
            return
        self.compiled, self.held = None, {}


class _Reaper:
    """Frees what `RequestQueue` could not free on the thread that let it go (a queue dropped without `close()`,
    a `close()` interrupted), each on a daemon thread of its own, never on a thread of OpenVINO's."""

    def __init__(self) -> None:
        self._lock = threading.RLock()  # RLock: a collection inside `take` may call `take` again on this thread
        self._threads: list[threading.Thread] = []
        self._at_exit = False

    def take(self, retired: _Retired) -> None:
        if sys.is_finalizing():  # a thread can no longer be started: keep it, never free it under a running request
            _NEVER_FREED.append(retired)
            return
        thread = threading.Thread(target=retired.free, name="zerocopy-free-queue", daemon=True)
        try:
            thread.start()
        except RuntimeError:
            _NEVER_FREED.append(retired)
            return
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
            if not self._at_exit:
                # done before the interpreter finalizes: a daemon thread that wakes in OpenVINO's code after that
                # is unwound through C++ frames that cannot be, and the process aborts
                atexit.register(self.idle, REAPER_EXIT_WAIT_S)
                self._at_exit = True

    def idle(self, timeout: float = 30.0) -> bool:
        """Whether every queue handed over has been dealt with (waiting up to `timeout` seconds in all)."""
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
REAPER_EXIT_WAIT_S = 10.0  # at the process's exit, for the threads freeing queues to finish
