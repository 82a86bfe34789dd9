"""serve's storage (issue 29 §3): the folder where events and their files are kept (`[storage]`), owned by the
engine and closed with it. Object events reach the store on a thread of its own (`record`: a bounded queue, so a
run never waits for the disk; what does not fit is counted), which also applies retention every `PRUNE_EVERY_S`
(bounded work each time). The parts that write files (snapshots, clips, recordings' segments) `attach` them to
their event (or index them: `store.segments`) and are watched (`watch`): their files being written (`busy`:
retention never removes them) and their disk-full flag (`disk_full`: a `/metrics` gauge; detection goes on). A
file being read (an export) is `held`: retention leaves it too. Retention removes the events past `max_days`, each
recording camera's segments past its own days (`retain`), then the oldest files, events' or segments', while all of
them take more than `max_bytes`.

The folder is private (0700, its files 0600: `folder`). At start, before anything writes, its `snapshots`,
`clips` and `recordings` are surveyed: the temporaries a kill left are removed, and the files no row names (a
database moved aside, a kill between a file and its row) are counted with the events' files (`max_gb`) and removed
oldest first past the limits, as are the files being written now (`busy`) counted."""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zerocopy.store.deletions import Deletions
from zerocopy.store.events import PRUNE_BATCH, EventStore, Freed
from zerocopy.store.folder import PathRefused, make_private_folder
from zerocopy.store.retention import expire, over_cap
from zerocopy.store.segments import DAY_S, Retain, Segment, SegmentIndex
from zerocopy.store.survey import Unnamed, survey
from zerocopy.track import ObjectEvent

DB_NAME = "events.db"
QUEUE = 10_000  # batches of events (one a frame that made any) waiting for the store
DELETE_WAIT_S = 10.0  # how long `delete` waits for the storage's thread
ATTACH_WAIT_S = 2.0  # how long `attach` waits for room in the queue (its caller is a file writer, not a run)
PRUNE_EVERY_S = 60.0
PRUNE_ROUNDS = 20  # batches of PRUNE_BATCH rows one retention pass removes at most; the rest at the next pass
_CLOSE = object()


@dataclass(frozen=True, kw_only=True)
class StorageStats:
    """What `/metrics` shows of the storage (`store.metrics.storage_metrics`)."""

    available: bool  # the database is open
    events: int  # rows kept
    file_bytes: int  # what their files take, with the files no row names and those being written
    unnamed_files: int  # files no row names (found at start; removed oldest first past the limits)
    database_bytes: int
    max_bytes: int
    recording_stopped: bool  # a full disk stopped recording (the clip writer says so)
    write_errors: int
    dropped: int  # events never written: the queue was full
    removed: int  # events removed by retention since the start
    refused: int  # paths refused (outside the folder, `..`, a link): never served nor removed
    damaged_rows: int  # rows skipped: their columns are not what the store writes


class Storage:
    """The events database `folder/events.db` and the files of its events, kept at most `max_days` days and
    `max_bytes` bytes of files (oldest removed first). `say`: one line for each thing worth a line (a database
    moved aside, a kind of write error, recording stopped or going again)."""

    def __init__(self, folder: str | Path, *, max_bytes: int, max_days: float, say: Callable[[str], None] = print,
                 clock: Callable[[], float] = time.time, prune_every: float = PRUNE_EVERY_S):
        self.folder = Path(folder)
        self.max_bytes, self.max_days, self.say, self.clock = max_bytes, max_days, say, clock
        make_private_folder(self.folder)  # (the database says why it cannot be)
        self.store = EventStore(self.folder / DB_NAME, say, clock)
        self.files = self.store.files
        self.deleted = Deletions(self.files, self.store.refuse)  # `delete`
        self.index = SegmentIndex(self.store.db, self.files, self.store._failed, self.store.refuse)  # recordings'
        self.dropped = 0
        self._queue: queue.Queue[Any] = queue.Queue(QUEUE)
        self._lock = threading.Lock()
        self._busy_sources: list[Callable[[], Iterable[str | Path]]] = []  # `watch`
        self._full_sources: list[Callable[[], bool]] = []
        self._unnamed: list[Unnamed] = []  # oldest first
        self._rules: dict[str, Retain] = {}  # `retain`
        self._held: Counter[str] = Counter()  # `holding`
        self._every = prune_every
        self._pruning = threading.Lock()  # one retention pass at a time (the thread's and a caller's `prune`)
        self._survey()
        self._thread = threading.Thread(target=self._keep, daemon=True, name="zerocopy-storage")
        self._thread.start()

    def _survey(self) -> None:
        """(at start) The temporaries a kill left removed; the files no row names counted (`survey.Unnamed`)."""
        try:
            named = self.store.named() | self.index.named() if self.store.available else None
        except Exception:  # a database damaged since it was opened: the files are left as they are
            named = None
        self._unnamed = survey(self.files, named, self.say, self.folder)

    # --- what the runs and the file writers call ---------------------------------------------------
    def record(self, events: Sequence[ObjectEvent]) -> None:
        """Object events, to be written in order on the storage's thread (those of a deleted event dropped); never
        blocks."""
        events = self.deleted.kept(events)
        if events:
            self._put(("record", events), len(events))

    def attach(self, event_id: str, *, snapshot: str | Path | None = None, thumbnail: str | Path | None = None,
               clip: str | Path | None = None) -> None:
        """An event's files (`EventStore.attach`), after the events recorded before this call; waits at most
        `ATTACH_WAIT_S` for room. Attach a file again once complete: its size is counted then. The files of a deleted
        event are removed instead."""
        if not self.deleted.discard(event_id, (snapshot, thumbnail, clip)):
            self._put(("attach", event_id, {"snapshot": snapshot, "thumbnail": thumbnail, "clip": clip}), 1,
                      ATTACH_WAIT_S)

    def delete(self, event_id: str, timeout: float = DELETE_WAIT_S) -> Freed | None:
        """The event and its files removed on the storage's thread, after what was queued before (a file being
        written is removed once its writer attaches it; one being sent stays readable by its open descriptor); what
        comes for it afterwards is dropped (`deletions`). None if that took longer than `timeout` (it still
        happens)."""
        self.deleted.add(event_id)
        done: queue.Queue[Freed] = queue.Queue(1)
        self._put(("flush", lambda: done.put(self.store._remove([event_id], self._busy_now))), 0, timeout)
        try:
            return done.get(timeout=timeout)
        except queue.Empty:
            return None

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

    def segments(self, camera: str, after: float | None = None, before: float | None = None) -> list[Segment]:
        """The recorded segments of `camera` that overlap `after`…`before` (Unix seconds; None: unbounded), oldest
        first (`segments.Segment`: start, end, path relative to the folder, bytes, motion, objects); read a
        segment's file within `holding(segment.path)`. Raises `StoreUnavailable`."""
        return self.index.segments(camera, after, before)

    def retain(self, camera: str, rule: Retain) -> None:
        """How long `camera`'s segments are kept (a camera without a rule: `max_days`)."""
        with self._lock:
            self._rules[camera] = rule

    @contextlib.contextmanager
    def holding(self, *paths: str | Path) -> Iterator[None]:
        """Files being read (relative to the folder, as rows name them, or absolute): retention leaves them until
        the block ends."""
        held = [os.path.abspath(self.folder / p) for p in paths]
        with self._lock:
            self._held.update(held)
        try:
            yield
        finally:
            with self._lock:
                self._held.subtract(held)
                self._held = +self._held

    def busy_paths(self) -> frozenset[str]:
        """Every file being written or read now (absolute paths): the watched parts' and those `held`."""
        with self._lock:
            sources, held = list(self._busy_sources), list(self._held)
        return frozenset([*(os.path.abspath(p) for source in sources for p in source()), *held])

    def busy_bytes(self) -> int:
        """What the files being written take now (a recording's segments aside: their rows count them)."""
        size = 0
        for path in self.busy_paths():
            with contextlib.suppress(OSError):
                rel = self.files.relative(path)
                size += 0 if rel.startswith("recordings/") else self.files.size(rel)
        return size

    def unnamed_bytes(self) -> int:
        with self._lock:
            return sum(u.bytes for u in self._unnamed)

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
        `_every` seconds, the first pass before anything queued (a `flush` returns after it), until `_CLOSE`
        (everything queued before it is written)."""
        self.prune()
        due = time.monotonic() + self._every
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
                item[1]()
            if time.monotonic() >= due:
                self.prune()
                due = time.monotonic() + self._every

    def prune(self) -> Freed:
        """One retention pass (what the storage's thread does every `PRUNE_EVERY_S`): the files no row names past
        `max_days` or beyond `max_bytes` (they are older than any row), then at most `PRUNE_ROUNDS` batches each of
        the events past `max_days`, of the segments past their camera's days, and of the oldest files (events' or
        segments') while all take more than `max_bytes`. Files being written or read are left: that is asked again
        right before each removal (a segment begun during the pass is one)."""
        with self._pruning:
            rows, size = 0, self._prune_unnamed()
            with self._lock:
                rules = dict(self._rules)
            for _ in range(PRUNE_ROUNDS):
                freed = self.store.prune(max_days=self.max_days, busy=self._busy_now)
                rows, size = rows + freed.rows, size + freed.bytes
                if freed.rows < PRUNE_BATCH:
                    break
            if self.store.available:
                rows, size = (a + b for a, b in zip((rows, size), expire(
                    self.index, rules, self.max_days, self.clock(), self._busy_now, PRUNE_ROUNDS), strict=True))
                over = lambda: self.unnamed_bytes() + self.busy_bytes() - self.max_bytes  # noqa: E731
                rows, size = (a + b for a, b in zip((rows, size), over_cap(
                    self.store, self.index, over, self._busy_now, PRUNE_ROUNDS), strict=True))
            return Freed(rows, size)

    def _busy_now(self, rel: str) -> bool:
        """Whether the file `rel` (relative to the folder) is being written or read at this moment."""
        return rel in frozenset(self.files.inside(self.busy_paths()))

    def _prune_unnamed(self) -> int:
        """The unnamed files older than `max_days`, then the oldest while every file takes more than `max_bytes`;
        the bytes freed."""
        with self._lock:
            if not self._unnamed:
                return 0
        cutoff = self.clock() - self.max_days * DAY_S
        over = self.store.totals()[1] + self.index.totals()[1] + self.unnamed_bytes() + self.busy_bytes() \
            - self.max_bytes
        freed = 0
        while True:
            with self._lock:
                oldest = self._unnamed[0] if self._unnamed else None
                if oldest is None or (oldest.mtime >= cutoff and over <= 0):
                    return freed
            try:  # (removed, then no longer counted: `stats` never says a file is gone before it is)
                freed += self.files.remove(oldest.path)
            except PathRefused as e:  # made a link since the start: left alone
                self.store.refuse(e)
            except OSError as e:
                self.say(f"storage {self.folder}: cannot remove {oldest.path}: {e.strerror or e}")
            with self._lock:
                self._unnamed.pop(0)
            over -= oldest.bytes

    def flush(self, timeout: float = 10.0) -> bool:
        """Waits until everything queued before the call is written; False if that took longer than `timeout`."""
        done = threading.Event()
        self._put(("flush", done.set), 0, timeout)
        return done.wait(timeout)

    def stats(self) -> StorageStats:
        rows, files = self.store.totals()
        files += self.index.totals()[1]
        with self._lock:
            dropped, unnamed = self.dropped, len(self._unnamed)
        return StorageStats(available=self.store.available, events=rows,
                            file_bytes=files + self.unnamed_bytes() + self.busy_bytes(), unnamed_files=unnamed,
                            database_bytes=self.store.db.size() if self.store.available else 0,
                            max_bytes=self.max_bytes, recording_stopped=self.recording_stopped(),
                            write_errors=self.store.write_errors, dropped=dropped, removed=self.store.removed,
                            refused=self.store.refused, damaged_rows=self.store.damaged_rows)

    def close(self, timeout: float = 2.0) -> None:
        """Writes what is queued (within `timeout`), then closes the database."""
        deadline = time.monotonic() + timeout
        with contextlib.suppress(queue.Full):
            self._queue.put(_CLOSE, timeout=max(0.01, timeout))
        self._thread.join(max(0.0, deadline - time.monotonic()))
        self.store.close()
