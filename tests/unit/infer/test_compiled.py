"""zerocopy.infer.compiled: the owner of compiled models, with compiles of other models going on meanwhile and a
close that waits for a compile under way (its VA devices must outlive it)."""

from __future__ import annotations

import threading

import pytest

from zerocopy.infer.compiled import CompiledModels


class HeldCore:
    """Compiles when told to: stands in for a long GPU compile, to see what waits for it."""

    def __init__(self):
        self.started, self.go = threading.Event(), threading.Event()
        self.compiled: list[str] = []

    def compile_model(self, graph, target, properties):
        if graph == "slow":
            self.started.set()
            assert self.go.wait(30)
        self.compiled.append(graph)
        return f"compiled {graph}"


def test_other_models_compile_while_one_is_under_way_and_close_waits_for_it():
    core = HeldCore()
    models = CompiledModels(core)
    slow = threading.Thread(target=models.compile, args=("slow", "slow", ("a",), "GPU", None, {}))
    slow.start()
    assert core.started.wait(30)
    assert models.compile("fast", "fast", ("b",), "GPU", None, {}) == "compiled fast"  # not held by the slow one
    closing = threading.Thread(target=models.close)
    closing.start()
    closing.join(0.2)
    assert closing.is_alive()  # waits for the compile under way
    core.go.set()
    slow.join(30)
    closing.join(30)
    assert not closing.is_alive() and core.compiled == ["fast", "slow"]
    assert models.compiles == {"fast": 1, "slow": 1} and models._compiling == {}
    with pytest.raises(RuntimeError, match="closed"):
        models.compile("fast", "fast", ("b",), "GPU", None, {})


def test_one_compile_per_key():
    core = HeldCore()
    models = CompiledModels(core)
    assert models.compile("m", "m", ("a",), "CPU", None, {"X": 1}) is models.compile("m", "m", ("a",), "CPU", None,
                                                                                    {"X": 1})
    models.compile("m", "m", ("a",), "CPU", None, {"X": 2})
    assert core.compiled == ["m", "m"] and models.compiles == {"m": 2}
