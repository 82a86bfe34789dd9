"""Run a frame iterator on a thread of its own, a few frames ahead of the consumer.

FFmpeg releases the GIL while it decodes, so a decoder fed from its own thread keeps decoding while
the consumer resizes, submits and reads results; fed from the consumer's thread, the decoder waits
whenever the consumer is busy.
"""

from __future__ import annotations

import queue
import threading
import time
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
    `stop()`, from any thread, ends the iteration after the items already queued without waiting for
    the producer, which stops at its next item (a source blocked in a read finishes it first).
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
            try:
                kind, value = self._queue.get(timeout=0.1)
            except queue.Empty:
                if self._stop.is_set():
                    return
                continue
            if kind == _END:
                return
            if kind == _ERROR:
                assert isinstance(value, BaseException)
                raise value
            yield value  # type: ignore[misc]

    def stop(self) -> None:
        """End the iteration (after what is queued) and the producer (at its next item), from any thread."""
        self._stop.set()

    @property
    def queued(self) -> int:
        """Items ready for the consumer now (approximately: the producer may be adding one)."""
        return self._queue.qsize()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def close(self, wait: float | None = None) -> bool:
        """Stop producing and wait for the thread (at most `wait` seconds, if given); items not yet
        consumed are dropped. False if the thread is still running (blocked in the source): it ends,
        and closes the source, at its next item."""
        self._stop.set()
        end = None if wait is None else time.monotonic() + wait
        while self._thread.is_alive():
            if end is not None and time.monotonic() >= end:
                break
            with suppress(queue.Empty):
                self._queue.get(timeout=0.05)
        stopped = not self._thread.is_alive()
        if stopped:
            self._thread.join()
        while not self._queue.empty():
            self._queue.get_nowait()
        return stopped
