"""zerocopy.infer.requests: an OpenVINO request queue is freed only once none of its requests can still run, never
on a thread of OpenVINO's, however its owner lets it go.

The segfault of issue 41: an `InferenceScheduler` dropped without `close()` while a completion callback ran was
freed by that callback's own thread (it held the last reference to its owner), from inside the callback; OpenVINO
then used the freed queue (C++ `this`) after the Python callback returned: SIGSEGV, no Python frame. On that tree
(`RequestQueue` imported from `zerocopy.infer.queue`, where it lived) the first two tests fail every time: the queue
was freed on OpenVINO's thread, and `close()` returned while a request still ran. The crash itself is what
`scripts/stress_lifetimes.py` looks for (tests/e2e/test_stress_lifetimes.py)."""

from __future__ import annotations

import threading
import time
import weakref
from types import SimpleNamespace

import pytest
from conftest import wait_until
from faults import write_poison_model

from zerocopy.infer import requests
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


def test_what_requests_read_goes_once_they_are_done_not_before(tmp_path):
    gate = Gate()
    owner = Owner(_compiled(tmp_path), gate)
    surface = Surface()
    owner.queue.hold(7, surface)
    held = weakref.finalize(surface, lambda: None)
    del surface
    owner.start(10)
    assert gate.entered.wait(30)
    closing = threading.Thread(target=owner.queue.close)
    closing.start()
    closing.join(0.3)
    assert closing.is_alive() and held.alive  # the request still runs: what it reads stays
    gate.release.set()
    closing.join(30)
    assert not closing.is_alive() and not held.alive


def test_a_close_interrupted_is_finished_on_a_thread_of_its_own(tmp_path, monkeypatch):
    """A second Ctrl-C inside `close()` (here, while OpenVINO still holds the callback) leaves nothing half-freed:
    the compiled model goes only once the callback is let go, on the freeing thread."""
    gate = Gate()
    compiled = _compiled(tmp_path)
    model_freed: dict = {}
    weakref.finalize(compiled, lambda: model_freed.update(thread=threading.current_thread().name))
    owner = Owner(compiled, gate)
    del compiled
    owner.start(10)
    gate.release.set()
    assert gate.returned.wait(30)
    callback = owner.queue._callback()  # held here as OpenVINO could still hold it: close() waits for its release
    interrupted = []

    def sleep_once_interrupted(seconds: float) -> None:
        if not interrupted and threading.current_thread() is threading.main_thread():
            interrupted.append(True)
            raise KeyboardInterrupt
        time.sleep(seconds)

    monkeypatch.setattr(requests, "time", SimpleNamespace(monotonic=time.monotonic, sleep=sleep_once_interrupted))
    with pytest.raises(KeyboardInterrupt):
        owner.queue.close()
    del owner
    assert model_freed == {}  # the callback is still held: the model must stay
    del callback
    wait_until(lambda: bool(model_freed), 30, "the compiled model to be freed")
    assert model_freed["thread"] == "zerocopy-free-queue"


def test_discard_keeps_what_a_running_request_reads_until_the_queue_is_freed(tmp_path):
    from zerocopy.frames import Geometry, PreparedFrame
    from zerocopy.infer.model import WrappedModel, resolve_spec
    from zerocopy.infer.queue import InferenceScheduler

    core = make_core(None)
    model = WrappedModel(core, resolve_spec(str(write_poison_model(tmp_path / "p.xml")), core=core), "nv12")
    model.compile("CPU")
    gate = Gate()
    outputs_of = model.outputs_of

    def held_outputs(request):
        gate.entered.set()
        gate.release.wait(30)
        return outputs_of(request)

    model.outputs_of = held_outputs

    class Handoff:
        surface: Surface | None = Surface()

        def bind(self, request, frames, slot):
            for name in model.input_names:
                request.get_tensor(name).data[...] = 10
            return self.surface

    handoff = Handoff()
    held = weakref.finalize(handoff.surface, lambda: None)
    scheduler = InferenceScheduler(model, handoff, 2)
    g = Geometry.fit(model.width, model.height, model.width, model.height, "stretch")
    scheduler.submit([PreparedFrame(index=0, pts=None, width=g.src_w, height=g.src_h, geometry=g, inputs={})])
    Handoff.surface = None  # the scheduler's queue holds it alone now
    assert gate.entered.wait(30)
    scheduler.discard()  # as after an interrupted wait: the request still runs
    assert held.alive
    gate.release.set()
    scheduler.close()
    assert not held.alive


class Surface:
    pass
