"""serve's storage (issue 29 §3): the folder where events and their files are kept (`[storage]`), owned by the
engine and closed with it. Object events reach the store on a thread of its own (`record`: a bounded queue, so a
run never waits for the disk; what does not fit is counted), which also applies retention every `PRUNE_EVERY_S`
(bounded work each time). The parts that write files (snapshots, clips) `attach` them to their event and are
watched (`watch`): their files being written (`busy`: retention never removes them) and their disk-full flag
(`disk_full`: a `/metrics` gauge; detection goes on)."""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zerocopy.store.events import PRUNE_BATCH, EventStore, Freed
from zerocopy.track import ObjectEvent

DB_NAME = "events.db"
QUEUE = 10_000  # batches of events (one a frame that made any) waiting for the store
ATTACH_WAIT_S = 2.0  # how long `attach` waits for room in the queue (its caller is a file writer, not a run)
PRUNE_EVERY_S = 60.0
PRUNE_ROUNDS = 20  # batches of PRUNE_BATCH rows one retention pass removes at most; the rest at the next pass
_CLOSE = object()


@dataclass(frozen=True, kw_only=True)
class StorageStats:
    """What `/metrics` shows of the storage (`store.metrics.storage_metrics`)."""

    available: bool  # the database is open
    events: int  # rows kept
    file_bytes: int  # what their files take
    database_bytes: int
    max_bytes: int
    recording_stopped: bool  # a full disk stopped recording (the clip writer says so)
    write_errors: int
    dropped: int  # events never written: the queue was full
    removed: int  # events removed by retention since the start


class Storage:
    """The events database `folder/events.db` and the files of its events, kept at most `max_days` days and
    `max_bytes` bytes of files (oldest removed first). `say`: one line for each thing worth a line (a database
    moved aside, a kind of write error, recording stopped or going again)."""

    def __init__(self, folder: str | Path, *, max_bytes: int, max_days: float, say: Callable[[str], None] = print,
                 clock: Callable[[], float] = time.time, prune_every: float = PRUNE_EVERY_S):
        self.folder = Path(folder)
        self.max_bytes, self.max_days, self.say = max_bytes, max_days, say
        self.store = EventStore(self.folder / DB_NAME, say, clock)
        self.dropped = 0
        self._queue: queue.Queue[Any] = queue.Queue(QUEUE)
        self._lock = threading.Lock()
        self._busy_sources: list[Callable[[], Iterable[str | Path]]] = []  # `watch`
        self._full_sources: list[Callable[[], bool]] = []
        self._every = prune_every
        self._thread = threading.Thread(target=self._keep, daemon=True, name="zerocopy-storage")
        self._thread.start()

    # --- what the runs and the file writers call ---------------------------------------------------
    def record(self, events: Sequence[ObjectEvent]) -> None:
        """Object events, to be written in order on the storage's thread; never blocks."""
        if events:
            self._put(("record", list(events)), len(events))

    def attach(self, event_id: str, *, snapshot: str | Path | None = None, thumbnail: str | Path | None = None,
               clip: str | Path | None = None) -> None:
        """An event's files (`EventStore.attach`), after the events recorded before this call; waits at most
        `ATTACH_WAIT_S` for room. Attach a file again once complete: its size is counted then."""
        self._put(("attach", event_id, {"snapshot": snapshot, "thumbnail": thumbnail, "clip": clip}), 1,
                  ATTACH_WAIT_S)

    def watch(self, *, busy: Callable[[], Iterable[str | Path]] | None = None,
              disk_full: Callable[[], bool] | None = None) -> None:
        """Another part's files being written (`busy()`: their paths, e.g. a clip writer's `busy_paths`; retention
        keeps them) and its disk-full flag (`disk_full()`: `zerocopy_storage_recording_stopped` is 1 while it is
        true); both asked from the storage's thread and at each scrape, so they must be quick and thread-safe."""
        with self._lock:
            if busy is not None:
                self._busy_sources.append(busy)
            if disk_full is not None:
                self._full_sources.append(disk_full)

    def busy_paths(self) -> frozenset[str]:
        """Every file being written now (absolute paths): the watched parts'."""
        with self._lock:
            sources = list(self._busy_sources)
        return frozenset(os.path.abspath(p) for source in sources for p in source())

    def recording_stopped(self) -> bool:
        with self._lock:
            sources = list(self._full_sources)
        return any(full() for full in sources)

    # --- the storage's thread ----------------------------------------------------------------------
    def _put(self, item: tuple, count: int, wait: float = 0.0) -> None:
        try:
            self._queue.put(item, timeout=wait) if wait else self._queue.put_nowait(item)
        except queue.Full:
            with self._lock:
                self.dropped += count
                first = count and self.dropped == count
            if first:
                self.say(f"storage {self.folder}: the event store is behind; events are dropped (counted in "
                         "zerocopy_storage_dropped_total)")

    def _keep(self) -> None:
        """Writes what is queued (the events of consecutive batches in one transaction) and prunes every
        `_every` seconds, until `_CLOSE` (everything queued before it is written)."""
        due = time.monotonic()
        while True:
            try:
                item = self._queue.get(timeout=max(0.0, due - time.monotonic()))
            except queue.Empty:
                item = None
            events: list[ObjectEvent] = []
            while item is not None and item is not _CLOSE and item[0] == "record":
                events += item[1]
                try:
                    item = self._queue.get_nowait() if len(events) < 1000 else None
                except queue.Empty:
                    item = None
            self.store.record(events)
            if item is _CLOSE:
                return
            if isinstance(item, tuple) and item[0] == "attach":
                self.store.attach(item[1], **item[2])
            elif isinstance(item, tuple) and item[0] == "flush":
                item[1].set()
            if time.monotonic() >= due:
                self.prune()
                due = time.monotonic() + self._every

    def prune(self) -> Freed:
        """One retention pass (what the storage's thread does every `PRUNE_EVERY_S`): at most `PRUNE_ROUNDS`
        batches of the oldest events past `max_days` or beyond `max_bytes`, with their files."""
        rows = size = 0
        for _ in range(PRUNE_ROUNDS):
            freed = self.store.prune(max_days=self.max_days, max_bytes=self.max_bytes, busy=self.busy_paths())
            rows, size = rows + freed.rows, size + freed.bytes
            if freed.rows < PRUNE_BATCH:
                break
        return Freed(rows, size)

    def flush(self, timeout: float = 10.0) -> bool:
        """Waits until everything queued before the call is written; False if that took longer than `timeout`."""
        done = threading.Event()
        self._put(("flush", done), 0, timeout)
        return done.wait(timeout)

    def stats(self) -> StorageStats:
        rows, files = self.store.totals()
        with self._lock:
            dropped = self.dropped
        return StorageStats(available=self.store.available, events=rows, file_bytes=files,
                            database_bytes=self.store.db.size() if self.store.available else 0,
                            max_bytes=self.max_bytes, recording_stopped=self.recording_stopped(),
                            write_errors=self.store.write_errors, dropped=dropped, removed=self.store.removed)

    def close(self, timeout: float = 2.0) -> None:
        """Writes what is queued (within `timeout`), then closes the database."""
        deadline = time.monotonic() + timeout
        with contextlib.suppress(queue.Full):
            self._queue.put(_CLOSE, timeout=max(0.01, timeout))
        self._thread.join(max(0.0, deadline - time.monotonic()))
        self.store.close()
