"""`CompiledModels`: the one owner of a process's compiled models and of the VA devices they are compiled on.

A `Detector` makes its own and closes it with itself; `zerocopy serve` makes one for the service's life and
lends it to every camera group, so a run that starts again (a camera reopened, a group restarted after a
failure) finds its model compiled: one compile per (model, device, properties) for as long as the owner
lives. Closing it releases every compiled model first, then the VA devices their remote contexts use.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import openvino as ov

from zerocopy.decode.vaapi import VASession


class CompiledModels:
    """Compiled models by what makes them (the graph as wrapped, the target, the properties), and one
    `VASession` per (path, render node asked for): each kept until `close()`. Thread-safe."""

    def __init__(self, core: ov.Core):
        self.core = core
        self.compiles: Counter[str] = Counter()  # compilations made, by model name (serve's /metrics)
        self._compiled: dict[tuple, tuple[ov.CompiledModel, Any]] = {}
        self._va: dict[tuple[str, str | None], VASession] = {}
        self._compiling: dict[tuple, threading.Lock] = {}  # a lock per key being compiled
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)  # no compile under way (close() waits for it)
        self._under_way = 0
        self.closed = False

    def compile(self, graph: ov.Model, name: str, identity: tuple, device: str, context: Any,
                properties: dict[str, Any]) -> ov.CompiledModel:
        """`graph` (the model `name`, wrapped as `identity` says: `WrappedModel.identity`) compiled for `device`,
        or for the remote `context` on it, with `properties`; compiled only the first time (two wrappings of one
        model file made alike are one graph). Raises what `core.compile_model` raises."""
        key = (*identity, device, id(context) if context is not None else None, tuple(sorted(properties.items())))
        with self._lock:
            found = self._found(key)
            if found is not None:
                return found
            compiling = self._compiling.setdefault(key, threading.Lock())
            self._under_way += 1
        try:
            with compiling:  # one compile per key; other keys (serve's other groups) compile meanwhile
                with self._lock:
                    found = self._found(key)
                if found is not None:
                    return found
                compiled = self.core.compile_model(graph, context if context is not None else device, properties)
                with self._lock:
                    self._compiled[key] = (compiled, context)  # the context lives as long as its model
                    self.compiles[name] += 1
                return compiled
        finally:
            with self._lock:
                self._under_way -= 1
                if not self._under_way:
                    self._compiling.clear()
                    self._idle.notify_all()

    def _found(self, key: tuple) -> ov.CompiledModel | None:
        """(Under the lock.) The model compiled for `key`, if it is; raises once closed."""
        if self.closed:
            raise RuntimeError("the compiled models were closed")
        found = self._compiled.get(key)
        return found[0] if found is not None else None

    def va_session(self, path: str, requested: str | None) -> VASession:
        """The VA device `path` decodes on for `requested` (a render node, or None: the first one), kept until
        `close()` so that its remote context, and the models compiled on it, outlive one run."""
        with self._lock:
            key = (path, requested)
            if key not in self._va:
                self._va[key] = VASession(requested)
            return self._va[key]

    def close(self) -> None:
        """Release every compiled model, then the VA devices (idempotent). Requests still using a model keep it
        alive until they are dropped."""
        with self._lock:
            self.closed = True  # no compile starts from here on; one under way ends before the VA devices go
            self._idle.wait_for(lambda: not self._under_way)
            self._compiled.clear()
            sessions, self._va = list(self._va.values()), {}
        for va in sessions:
            va.close()
