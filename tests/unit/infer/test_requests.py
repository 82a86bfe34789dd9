"""zerocopy.infer.requests: an OpenVINO request queue is freed only once none of its requests can still run, never
on a thread of OpenVINO's, however its owner lets it go.

The segfault of issue 41: an `InferenceScheduler` dropped without `close()` while a completion callback ran was
freed by that callback's own thread (it held the last reference to its owner), from inside the callback; OpenVINO
then used the freed queue (C++ `this`) after the Python callback returned: SIGSEGV, no Python frame. These tests
fail on that tree deterministically (where the queue was freed, whether `close()` waited); the crash itself is
caught by `scripts/stress_lifetimes.py` (tests/e2e/test_stress_lifetimes.py)."""

from __future__ import annotations

import threading
import weakref

from conftest import wait_until
from faults import write_poison_model

from zerocopy.infer.model import make_core
from zerocopy.infer.requests import RequestQueue

MAIN = threading.main_thread().name


class Owner:
    """What owns a `RequestQueue` (as `InferenceScheduler` does): its callback, a bound method held weakly, waits
    for `gate` to open."""

    def __init__(self, compiled, gate: Gate, jobs: int = 2):
        self.gate = gate
        self.queue = RequestQueue(compiled, jobs, self._done)

    def _done(self, request, userdata) -> None:
        self.gate.entered.set()
        self.gate.release.wait(30)
        self.gate.returned.set()

    def start(self, value: int) -> None:
        rid = self.queue.get_idle_request_id()
        for tensor in self.queue[rid].input_tensors:
            tensor.data[...] = value  # 255 in the Y plane poisons the request (faults.write_poison_model)
        self.queue.start_async(userdata=rid)


class Gate:
    def __init__(self):
        self.entered, self.release, self.returned = threading.Event(), threading.Event(), threading.Event()


def _compiled(tmp_path):
    return make_core(None).compile_model(str(write_poison_model(tmp_path / "poison.xml")), "CPU")


def _where_freed(queue: RequestQueue, gate: Gate) -> dict:
    """Filled when the `AsyncInferQueue` inside `queue` is freed: on which thread, and whether the callback had
    returned by then."""
    seen: dict = {}

    def freed() -> None:
        seen.update(thread=threading.current_thread().name, after_callback=gate.returned.is_set())

    weakref.finalize(queue.queue, freed)
    return seen


def test_a_queue_dropped_while_its_callback_runs_is_freed_after_it_on_a_thread_of_ours(tmp_path):
    gate = Gate()
    owner = Owner(_compiled(tmp_path), gate)
    seen = _where_freed(owner.queue, gate)
    owner.start(10)
    assert gate.entered.wait(30)
    del owner  # the callback holds the last reference to its owner now: it lets it go on OpenVINO's thread
    assert seen == {}  # nothing freed while the callback runs
    gate.release.set()
    wait_until(lambda: bool(seen), 30, "the queue to be freed")
    assert seen["after_callback"]
    assert seen["thread"] == "zerocopy-free-queue", f"freed on {seen['thread']}, a thread of OpenVINO's"


def test_close_waits_for_every_request_even_after_one_failed(tmp_path):
    """OpenVINO's `wait_all` stops at the first failed request; the others may still run: close waits for each."""
    gate = Gate()
    owner = Owner(_compiled(tmp_path), gate)
    seen = _where_freed(owner.queue, gate)
    owner.start(255)  # request 0 fails (no callback for it)
    owner.start(10)  # request 1 runs its callback, held
    assert gate.entered.wait(30)
    closing = threading.Thread(target=owner.queue.close)
    closing.start()
    closing.join(0.3)
    assert closing.is_alive() and seen == {}  # still waiting for request 1
    gate.release.set()
    closing.join(30)
    assert not closing.is_alive()
    assert seen["after_callback"] and seen["thread"] == closing.name


def test_what_requests_read_outlives_them_and_an_abandoned_queue_is_never_freed(tmp_path):
    gate = Gate()
    owner = Owner(_compiled(tmp_path), gate)
    seen = _where_freed(owner.queue, gate)
    surface = Surface()  # stands in for the VA frame and remote tensors a request reads
    owner.queue.hold(7, surface)
    held = weakref.finalize(surface, lambda: None)
    del surface
    owner.start(10)
    assert gate.entered.wait(30)
    owner.queue.close(abandoned=True)  # a request that did not finish in time: never freed, nor what it reads
    gate.release.set()
    assert gate.returned.wait(30)
    assert seen == {} and held.alive


def test_what_requests_read_goes_once_they_are_done(tmp_path):
    gate = Gate()
    owner = Owner(_compiled(tmp_path), gate)
    surface = Surface()
    owner.queue.hold(7, surface)
    held = weakref.finalize(surface, lambda: None)
    del surface
    owner.start(10)
    assert gate.entered.wait(30)
    gate.release.set()
    owner.queue.close()
    assert not held.alive


class Surface:
    pass
