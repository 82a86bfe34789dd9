"""The event store (issue 29 §3): one SQLite row per tracked object, upserted from its object events and kept
across restarts, with the files other parts attach to it (snapshot, thumbnail, clip); queried newest first for
`/api/events`, pruned oldest first with its files.

The rows and their checks are `rows.py`'s. The files are named relative to the database's folder and reached only
under it (`folder.StorageFolder`): a row naming a path outside it, with `..` or through a link is refused (never
served nor removed; said once, counted in `refused`). A row whose columns are not what the store writes (a damaged
row) is skipped by queries, said once and counted (`damaged_rows`).

Thread-safe (`database.Database`: one writer at a time, readers beside it). A damaged database is moved aside at
opening and a new one started (one line said); a write that fails (a full disk) is said once per reason, counted
(`write_errors`) and skipped: detection never stops for the store."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from zerocopy.store.database import Database, StoreUnavailable
from zerocopy.store.folder import PathRefused, StorageFolder
from zerocopy.store.paging import Cursor, EventFilter, Page, read_page
from zerocopy.store.rows import (
    COLUMNS,
    FILES,
    MIGRATIONS,
    SCHEMA,
    UPSERT,
    StoredEvent,
    bytes_of,
    make_relative,
    row_of,
)
from zerocopy.store.segments import DAY_S
from zerocopy.track import ObjectEvent

__all__ = ["MAX_LIMIT", "Cursor", "EventFilter", "EventStore", "Freed", "Page", "PathRefused", "StoreUnavailable",
           "StoredEvent"]

DEFAULT_LIMIT = 50  # rows a query gives unless asked
MAX_LIMIT = 500
PRUNE_BATCH = 500  # rows one `prune` looks at, at most: bounded work, the rest at the next call
DAMAGED_KEPT = 10_000  # damaged rows' ids remembered (each counted once)
class Freed(NamedTuple):
    """What `prune` removed."""

    rows: int
    bytes: int  # of the files removed with them


Busy = Collection[str | Path] | Callable[[str], bool]  # files being written (absolute), or a test of a row's path


class EventStore:
    """The events at `path` (a SQLite file, made with its folder if missing), their files under that folder
    (`files`). `say`: where a database moved aside, an unavailable store, each new kind of write error, the first
    path refused and the first damaged row are said (one line each)."""

    def __init__(self, path: str | Path, say: Callable[[str], None] = print, clock: Callable[[], float] = time.time):
        self.say, self.clock = say, clock
        self.db = Database(path, SCHEMA, say, clock, MIGRATIONS)
        self.path = self.db.path
        self.files = StorageFolder(self.path.parent)
        self.write_errors = 0  # writes that failed (each skipped)
        self.removed = 0  # rows removed by `prune` since the start
        self.refused = 0  # paths refused: outside the folder, `..`, a link (never served nor removed)
        self._damaged: set[str] = set()  # the ids of damaged rows met (skipped)
        self._said: set[str] = set()
        self._lock = threading.Lock()
        if self.available:
            self._make_relative()

    @property
    def damaged_rows(self) -> int:
        """Damaged rows met so far (each skipped by queries; counted once)."""
        with self._lock:
            return len(self._damaged)

    def _make_relative(self) -> None:
        """The absolute paths an earlier version kept, made relative where they lie inside the folder (the others
        stay, and are refused when used)."""
        try:
            with self.db.writing() as conn:
                make_relative(conn, self.files.prefixes)
        except Exception as e:
            self._failed("make the files' paths relative", e)

    @property
    def available(self) -> bool:
        return self.db.available

    def _failed(self, what: str, e: Exception) -> None:
        with self._lock:
            self.write_errors += 1
        self._once(f"events: cannot {what}: {_first_line(e)}", "skipped (said once; counted in "
                   "zerocopy_storage_write_errors_total)")

    def _once(self, line: str, then: str, key: str | None = None) -> None:
        """`line; then` said the first time `key` (the line) is met."""
        with self._lock:
            if (key or line) in self._said:
                return
            self._said.add(key or line)
        self.say(f"{line}; {then}")

    def refuse(self, e: PathRefused) -> None:
        """A path refused: counted, the first said."""
        with self._lock:
            self.refused += 1
        self._once(f"events: a file refused: {_first_line(e)}", "never served nor removed (said once; counted in "
                   "zerocopy_storage_refused_total)", "refused")

    def _skip(self, e: ValueError, ident: Any) -> None:
        with self._lock:
            if len(self._damaged) < DAMAGED_KEPT:
                self._damaged.add(str(ident))
        self._once(f"events: a damaged row skipped ({_first_line(e)})", "said once; counted in "
                   "zerocopy_storage_damaged_rows_total", "damaged")

    def _events(self, rows: list[tuple]) -> list[StoredEvent]:
        """The rows' events, the damaged ones skipped (counted, the first said)."""
        found = []
        for row in rows:
            try:
                found.append(StoredEvent.of(row))
            except ValueError as e:
                self._skip(e, row[0])
        return found

    def open_file(self, path: str) -> int:
        """A read-only descriptor of the file `path` a row names (`files.open`); a `PathRefused` is counted, the
        first said, then raised."""
        try:
            return self.files.open(path)
        except PathRefused as e:
            self.refuse(e)
            raise

    def _size(self, path: Any) -> int:
        """Bytes of a row's file; 0 if it is missing or refused (counted)."""
        try:
            return self.files.size(path)
        except PathRefused as e:
            self.refuse(e)
        except OSError:
            pass
        return 0

    def _relative(self, path: str | Path) -> str | None:
        """A file given by a writer (absolute, or relative to the working folder) as a row names it; None if it is
        not inside the folder (refused: counted, the first said)."""
        try:
            return self.files.relative(os.path.abspath(path))
        except PathRefused as e:
            self.refuse(e)
            return None

    def record(self, events: Iterable[ObjectEvent]) -> int:
        """Each object's row made or brought up to date from its events, in one transaction; how many were written
        (0 after a failure: said once, counted)."""
        rows = [row_of(e) for e in events]
        if not rows:
            return 0
        try:
            with self.db.writing() as conn:
                conn.executemany(UPSERT, rows)
        except Exception as e:  # sqlite3.Error, a full disk, StoreUnavailable: never the caller's problem
            self._failed("record events", e)
            return 0
        return len(rows)

    def attach(self, event_id: str, *, snapshot: str | Path | None = None, thumbnail: str | Path | None = None,
               clip: str | Path | None = None) -> bool:
        """The event's files (inside the storage folder; kept relative to it); each given replaces the one before.
        The files' sizes are counted now, so attach a file again once it is complete. False if there is no such
        event (unknown, or removed by retention), a file is outside the folder (refused) or the write failed."""
        given = {k: self._relative(v) for k, v in (("snapshot", snapshot), ("thumbnail", thumbnail),
                                                   ("clip", clip)) if v is not None}
        if None in given.values():
            return False
        try:
            with self.db.writing() as conn:
                found = conn.execute("SELECT snapshot, thumbnail, clip FROM events WHERE id = ?",
                                     (event_id,)).fetchone()
                if found is None:
                    return False
                files = {**dict(zip(FILES, found, strict=True)), **given}
                size = sum(self._size(p) for p in files.values() if p is not None)
                conn.execute("UPDATE events SET snapshot = ?, thumbnail = ?, clip = ?, bytes = ? WHERE id = ?",
                             (*(files[k] for k in FILES), size, event_id))
        except Exception as e:
            self._failed("attach files to an event", e)
            return False
        return True

    def get(self, event_id: str) -> StoredEvent | None:
        """The event, or None (unknown, removed by retention, or a damaged row: skipped). Raises `StoreUnavailable`."""
        with self.db.reading() as conn:
            row = conn.execute(f"SELECT {COLUMNS} FROM events WHERE id = ?", (event_id,)).fetchone()
        return next(iter(self._events([row] if row is not None else [])), None)

    def query(self, *, camera: str | None = None, label: str | None = None, zone: str | None = None,
              after: float | None = None, before: float | None = None, limit: int = DEFAULT_LIMIT) -> list[StoredEvent]:
        """The first page's events (`page`) of the filter these keywords make (`paging.EventFilter`)."""
        return self.page(EventFilter(camera=camera, label=label, zone=zone, after=after, before=before),
                         limit=limit, count=False).events

    def page(self, where: EventFilter, *, after: Cursor | None = None, limit: int = DEFAULT_LIMIT,
             count: bool = True) -> Page:
        """The events `where` matches, newest first (by `start_time`, then `id`), the `limit` (≤ `MAX_LIMIT`) after
        the cursor `after` (None: the newest); `total` counted if `count`. Damaged rows are skipped (counted).
        Raises `StoreUnavailable`."""
        with self.db.reading() as conn:
            raw = read_page(conn, where, after, max(1, min(int(limit), MAX_LIMIT)), count)
        return Page(self._events(raw.rows), raw.total, raw.next)

    def named(self) -> set[str]:
        """Every file a row names (as it names it). Raises `StoreUnavailable`, `sqlite3.Error`."""
        with self.db.reading() as conn:
            rows = conn.execute("SELECT snapshot, thumbnail, clip FROM events").fetchall()
        return {p for row in rows for p in row if isinstance(p, str)}

    def totals(self) -> tuple[int, int]:
        """(rows, bytes of their files); (0, 0) when the store is unavailable."""
        try:
            with self.db.reading() as conn:
                rows, size = conn.execute("SELECT count(*), total(bytes) FROM events").fetchone()
        except (StoreUnavailable, sqlite3.Error):  # a scrape shows zeros; the failing writes are counted
            return 0, 0
        return int(rows), int(size)

    def prune(self, *, max_days: float | None = None, max_bytes: int | None = None, busy: Busy = (),
              now: float | None = None, batch: int = PRUNE_BATCH) -> Freed:
        """Removes the oldest events (by `start_time`) with their files: those that started more than `max_days` ago,
        then as many more as bring their files' bytes down to `max_bytes`. An event with a file that is `busy`
        (being written) is kept whole. At most `batch` rows a call: call again while it frees a full batch."""
        if not self.available:
            return Freed(0, 0)
        is_busy = busy if callable(busy) else frozenset(self.files.inside(busy)).__contains__
        cutoff = (self.clock() if now is None else now) - (max_days or 0.0) * DAY_S
        try:
            chosen = self._oldest(max_days is not None, cutoff, max_bytes, is_busy, batch)
        except Exception as e:  # a database damaged since it was opened: said once, tried again next time
            self._failed("read old events", e)
            return Freed(0, 0)
        return self._remove(list(chosen), is_busy)

    def _oldest(self, by_age: bool, cutoff: float, max_bytes: int | None, is_busy: Callable[[str], bool],
                batch: int) -> dict[str, int]:
        """The ids of the events `prune` removes → their files' bytes."""
        chosen: dict[str, int] = {}
        pick = ("SELECT id, snapshot, thumbnail, clip, bytes FROM events WHERE retain IS NOT 1 AND ({}) "
                "ORDER BY start_time LIMIT ?")  # (a retained event is never picked, though its bytes count)
        with self.db.reading() as conn:
            # (a damaged row's start, NULL or a text (SQLite puts texts after numbers), counts as old; each test
            # on its own is a search of the index)
            for test in ("start_time IS NULL", "start_time >= ''", "start_time < ?") if by_age else ():
                old = conn.execute(pick.format(test), (*((cutoff,) if "?" in test else ()), batch)).fetchall()
                chosen.update((r[0], bytes_of(r[4])) for r in old if not any(p and is_busy(p) for p in r[1:4]))
            if max_bytes is not None:
                over = conn.execute("SELECT total(bytes) FROM events").fetchone()[0] - sum(chosen.values()) - max_bytes
                for r in conn.execute(pick.format("bytes > 0"), (batch,)).fetchall() if over > 0 else ():
                    if over <= 0 or len(chosen) >= batch:
                        break
                    if r[0] not in chosen and not any(p and is_busy(p) for p in r[1:4]):
                        chosen[r[0]] = bytes_of(r[4])
                        over -= chosen[r[0]]
        return chosen

    def _remove(self, ids: list[str], is_busy: Callable[[str], bool]) -> Freed:
        """The rows `ids` deleted, then their files (one made busy since is left: it is a new file's; one refused is
        never touched)."""
        if not ids:
            return Freed(0, 0)
        marks = ", ".join("?" * len(ids))
        try:
            with self.db.writing() as conn:
                files = conn.execute(f"SELECT snapshot, thumbnail, clip FROM events WHERE id IN ({marks})",
                                     ids).fetchall()
                gone = conn.execute(f"DELETE FROM events WHERE id IN ({marks})", ids).rowcount
        except Exception as e:
            self._failed("remove old events", e)
            return Freed(0, 0)
        freed = self.files.remove_each({p for row in files for p in row if p is not None and not is_busy(p)},
                                       self.refuse, lambda e: self._failed("remove an old event's file", e))
        with self._lock:
            self.removed += gone
        return Freed(gone, freed)

    def close(self) -> None:
        self.db.close()


def _first_line(e: Exception) -> str:
    return str(e).splitlines()[0][:200] if str(e) else type(e).__name__
