"""The event store (issue 29 §3): one SQLite row per tracked object, upserted from its object events and kept
across restarts, with the files other parts attach to it (snapshot, thumbnail, clip); queried newest first for
`/api/events`, pruned oldest first with its files.

Thread-safe (`database.Database`: one writer at a time, readers beside it). A database that cannot be read at
opening is moved aside and a new one started (one line said); a write that fails (a full disk) is said once
per reason, counted (`write_errors`) and skipped: detection never stops for the store."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from zerocopy.store.database import Database, StoreUnavailable
from zerocopy.track import ObjectEvent

__all__ = ["MAX_LIMIT", "EventStore", "Freed", "StoreUnavailable", "StoredEvent"]

DEFAULT_LIMIT = 50  # rows a query gives unless asked
MAX_LIMIT = 500
PRUNE_BATCH = 500  # rows one `prune` looks at, at most: bounded work, the rest at the next call
FILES = ("snapshot", "thumbnail", "clip")
COLUMNS = "id, camera, label, top_score, start_time, end_time, box, zones, snapshot, thumbnail, clip, bytes, last"
SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id TEXT PRIMARY KEY,          -- the object's id (ObjectEvent.id, Frigate's form)
    camera TEXT NOT NULL,
    label TEXT NOT NULL,
    top_score REAL NOT NULL,
    start_time REAL NOT NULL,     -- Unix times
    end_time REAL,                -- NULL while the object is in view
    box TEXT NOT NULL,            -- JSON [x1, y1, x2, y2]: its box at its best-scored event
    box_score REAL NOT NULL,      -- that event's score
    zones TEXT NOT NULL,          -- JSON: every zone it entered
    snapshot TEXT, thumbnail TEXT, clip TEXT,  -- the paths of its files, attached by other parts
    bytes INTEGER NOT NULL DEFAULT 0,          -- what those files took when last attached
    last TEXT NOT NULL            -- JSON: its last event (ObjectEvent.to_record())
);
CREATE INDEX IF NOT EXISTS events_by_start ON events (start_time);
CREATE INDEX IF NOT EXISTS events_by_camera ON events (camera, start_time);
"""
UPSERT = """
INSERT INTO events (id, camera, label, top_score, start_time, end_time, box, box_score, zones, last)
VALUES (:id, :camera, :label, :top_score, :start_time, :end_time, :box, :score, :zones, :last)
ON CONFLICT (id) DO UPDATE SET
    top_score = max(events.top_score, excluded.top_score), end_time = excluded.end_time,
    box = CASE WHEN excluded.box_score >= events.box_score THEN excluded.box ELSE events.box END,
    box_score = max(events.box_score, excluded.box_score), zones = excluded.zones, last = excluded.last
"""


@dataclass(frozen=True, kw_only=True)
class StoredEvent:
    """One object as the store keeps it; `snapshot`, `thumbnail` and `clip` are file paths (never shown)."""

    id: str
    camera: str
    label: str
    top_score: float
    start_time: float
    end_time: float | None
    box: list[float]
    zones: list[str]
    snapshot: str | None = None
    thumbnail: str | None = None
    clip: str | None = None
    bytes: int = 0
    last: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "camera": self.camera, "label": self.label, "top_score": self.top_score,
                "start_time": self.start_time, "end_time": self.end_time, "box": self.box, "zones": self.zones,
                "has_snapshot": self.snapshot is not None, "has_thumbnail": self.thumbnail is not None,
                "has_clip": self.clip is not None, "last_event": self.last}

    @classmethod
    def of(cls, row: tuple) -> StoredEvent:
        ident, camera, label, top, start, end, box, zones, snapshot, thumbnail, clip, size, last = row
        return cls(id=ident, camera=camera, label=label, top_score=top, start_time=start, end_time=end,
                   box=json.loads(box), zones=json.loads(zones), snapshot=snapshot, thumbnail=thumbnail, clip=clip,
                   bytes=size, last=json.loads(last))


class Freed(NamedTuple):
    """What `prune` removed."""

    rows: int
    bytes: int  # of the files removed with them


Busy = Collection[str | Path] | Callable[[str], bool]  # paths being written (absolute), or a test of one


class EventStore:
    """The events at `path` (a SQLite file, made with its folder if missing). `say`: where a database moved aside,
    an unavailable store and each new kind of write error are said (one line each)."""

    def __init__(self, path: str | Path, say: Callable[[str], None] = print, clock: Callable[[], float] = time.time):
        self.say, self.clock = say, clock
        self.db = Database(path, SCHEMA, say, clock)
        self.path = self.db.path
        self.write_errors = 0  # writes that failed (each skipped)
        self.removed = 0  # rows removed by `prune` since the start
        self._said: set[str] = set()
        self._lock = threading.Lock()

    @property
    def available(self) -> bool:
        return self.db.available

    def _failed(self, what: str, e: Exception) -> None:
        with self._lock:
            self.write_errors += 1
            line = f"events: cannot {what}: {str(e).splitlines()[0][:200] if str(e) else type(e).__name__}"
            if line in self._said:
                return
            self._said.add(line)
        self.say(f"{line}; skipped (said once; counted in zerocopy_storage_write_errors_total)")

    def record(self, events: Iterable[ObjectEvent]) -> int:
        """Each object's row made or brought up to date from its events, in one transaction; how many were written
        (0 after a failure: said once, counted)."""
        rows = [_row(e) for e in events]
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
        """The event's files (paths, kept absolute); each given replaces the one before. The files' sizes are
        counted now, so attach a file again once it is complete. False if there is no such event (unknown, or
        removed by retention) or the write failed."""
        given = {k: os.path.abspath(v) for k, v in (("snapshot", snapshot), ("thumbnail", thumbnail),
                                                    ("clip", clip)) if v is not None}
        try:
            with self.db.writing() as conn:
                found = conn.execute("SELECT snapshot, thumbnail, clip FROM events WHERE id = ?",
                                     (event_id,)).fetchone()
                if found is None:
                    return False
                files = {**dict(zip(FILES, found, strict=True)), **given}
                size = sum(_size(p) for p in files.values() if p is not None)
                conn.execute("UPDATE events SET snapshot = ?, thumbnail = ?, clip = ?, bytes = ? WHERE id = ?",
                             (*(files[k] for k in FILES), size, event_id))
        except Exception as e:
            self._failed("attach files to an event", e)
            return False
        return True

    def get(self, event_id: str) -> StoredEvent | None:
        """The event, or None (unknown, or removed by retention). Raises `StoreUnavailable`."""
        with self.db.reading() as conn:
            row = conn.execute(f"SELECT {COLUMNS} FROM events WHERE id = ?", (event_id,)).fetchone()
        return None if row is None else StoredEvent.of(row)

    def query(self, *, camera: str | None = None, label: str | None = None, zone: str | None = None,
              after: float | None = None, before: float | None = None, limit: int = DEFAULT_LIMIT) -> list[StoredEvent]:
        """The events that match, newest first (by `start_time`); `after`/`before`: Unix times its start is after
        or before; `label` in any case; `zone`: one it entered; at most `limit` (≤ `MAX_LIMIT`)."""
        where, args = [], []
        for test, value in (("camera = ?", camera), ("label = ? COLLATE NOCASE", label),
                            ("EXISTS (SELECT 1 FROM json_each(events.zones) WHERE value = ?)", zone),
                            ("start_time > ?", after), ("start_time < ?", before)):
            if value is not None:
                where.append(test)
                args.append(value)
        sql = f"SELECT {COLUMNS} FROM events {'WHERE ' + ' AND '.join(where) if where else ''} " \
              "ORDER BY start_time DESC, id DESC LIMIT ?"
        with self.db.reading() as conn:
            rows = conn.execute(sql, (*args, max(1, min(int(limit), MAX_LIMIT)))).fetchall()
        return [StoredEvent.of(r) for r in rows]

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
        is_busy = busy if callable(busy) else frozenset(os.path.abspath(p) for p in busy).__contains__
        cutoff = (self.clock() if now is None else now) - (max_days or 0.0) * 86400
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
        pick = "SELECT id, snapshot, thumbnail, clip, bytes FROM events WHERE {} ORDER BY start_time LIMIT ?"
        with self.db.reading() as conn:
            if by_age:
                old = conn.execute(pick.format("start_time < ?"), (cutoff, batch)).fetchall()
                chosen.update((r[0], r[4]) for r in old if not any(p and is_busy(p) for p in r[1:4]))
            if max_bytes is not None:
                over = conn.execute("SELECT total(bytes) FROM events").fetchone()[0] - sum(chosen.values()) - max_bytes
                for r in conn.execute(pick.format("bytes > 0"), (batch,)).fetchall() if over > 0 else ():
                    if over <= 0 or len(chosen) >= batch:
                        break
                    if r[0] not in chosen and not any(p and is_busy(p) for p in r[1:4]):
                        chosen[r[0]] = r[4]
                        over -= r[4]
        return chosen

    def _remove(self, ids: list[str], is_busy: Callable[[str], bool]) -> Freed:
        """The rows `ids` deleted, then their files (one made busy since is left: it is a new file's)."""
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
        freed = 0
        for path in {p for row in files for p in row if p is not None and not is_busy(p)}:
            try:
                size = _size(path)
                os.unlink(path)
                freed += size
            except FileNotFoundError:
                pass
            except OSError as e:
                self._failed("remove an old event's file", e)
        with self._lock:
            self.removed += gone
        return Freed(gone, freed)

    def close(self) -> None:
        self.db.close()


def _row(e: ObjectEvent) -> dict[str, Any]:
    return {"id": e.id, "camera": e.camera, "label": e.label, "top_score": float(e.top_score),
            "start_time": float(e.start_time), "end_time": e.end_time, "box": json.dumps([round(v, 1) for v in e.box]),
            "score": float(e.score), "zones": json.dumps(list(e.entered_zones)), "last": json.dumps(e.to_record())}


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0

