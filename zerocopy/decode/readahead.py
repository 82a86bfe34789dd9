"""Run a frame iterator on a thread of its own, a few frames ahead of the consumer.

FFmpeg releases the GIL while it decodes, so a decoder fed from its own thread keeps decoding while
the consumer resizes, submits and reads results; fed from the consumer's thread, the decoder waits
whenever the consumer is busy.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from contextlib import suppress
from typing import Generic, TypeVar

from zerocopy.stats import name_this_thread

T = TypeVar("T")

_ITEM, _END, _ERROR = range(3)


class ReadAhead(Generic[T]):
    """Iterates what `source` yields, produced on a daemon thread: at most `depth` items wait in
    the queue (and one more in the producer's hands).

    An exception raised by `source` is raised again in the consumer, after the items before it.
    `close()` stops the thread and waits for it, so afterwards the caller alone uses whatever
    `source` used (the codec context, which must never be driven from two threads at once).
    """

    def __init__(self, source: Iterator[T], depth: int, name: str = "zerocopy-read-ahead", os_name: str = ""):
        if depth < 1:
            raise ValueError("depth must be ≥ 1")
        self._queue: queue.Queue[tuple[int, object]] = queue.Queue(depth)
        self._stop = threading.Event()
        self._os_name = os_name  # shown by top -H and counted by `stats.thread_cpu_seconds`
        self._thread = threading.Thread(target=self._run, args=(source,), name=name, daemon=True)
        self._thread.start()

    def _run(self, source: Iterator[T]) -> None:
        if self._os_name:
            name_this_thread(self._os_name)
        try:
            for item in source:
                if not self._put(_ITEM, item):
                    return
            self._put(_END, None)
        except BaseException as e:  # handed to the consumer
            self._put(_ERROR, e)
        finally:
            close = getattr(source, "close", None)
            if close is not None:
                close()  # a generator's cleanup runs on the thread that ran it

    def _put(self, kind: int, value: object) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put((kind, value), timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def __iter__(self) -> Iterator[T]:
        while True:
            kind, value = self._queue.get()
            if kind == _END:
                return
            if kind == _ERROR:
                assert isinstance(value, BaseException)
                raise value
            yield value  # type: ignore[misc]

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def close(self) -> None:
        """Stop producing and wait for the thread; items not yet consumed are dropped."""
        self._stop.set()
        while self._thread.is_alive():
            with suppress(queue.Empty):
                self._queue.get(timeout=0.05)
        self._thread.join()
        while not self._queue.empty():
            self._queue.get_nowait()
