"""The recordings' index (issue 38): one row per segment of a camera's continuous recording (`record.segments`),
in the events database beside the events (`SEGMENT_SCHEMA`, made at opening if missing), read by time for the
recordings API and the timeline (`SegmentIndex.segments`, `Storage.segments`), and pruned with its files by the
storage's retention (per camera by days, and oldest first under `[storage] max_gb` together with the events'
files: `store.storage`).

A segment's row is written when its file is made and brought up to date as it grows (its end, its bytes, what was
seen in it), so a writer killed mid-segment leaves a row that says what its file held a moment before. Its path is
relative to the storage folder, reached only under it (`folder.StorageFolder`), like the events' files."""

from __future__ import annotations

import contextlib
import math
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from zerocopy.store.database import Database, StoreUnavailable
from zerocopy.store.folder import PathRefused, StorageFolder

SEGMENT_SCHEMA = """
CREATE TABLE IF NOT EXISTS segments (
    path TEXT PRIMARY KEY,        -- its file, relative to the storage folder (recordings/CAMERA/DAY/TIME.mp4)
    camera TEXT NOT NULL,
    start_time REAL NOT NULL,     -- Unix times (wall clock): its first packet's arrival, its last packet's end
    end_time REAL NOT NULL,
    bytes INTEGER NOT NULL,
    motion INTEGER NOT NULL,      -- 1: the camera's motion gate saw motion during it
    objects INTEGER NOT NULL      -- tracked objects seen in it
);
CREATE INDEX IF NOT EXISTS segments_by_camera ON segments (camera, start_time);
CREATE INDEX IF NOT EXISTS segments_by_start ON segments (start_time);
"""
_COLUMNS = "camera, start_time, end_time, path, bytes, motion, objects"
_PUT = f"INSERT OR REPLACE INTO segments ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)"
DAY_S = 86400.0


@dataclass(frozen=True, kw_only=True)
class Segment:
    """One recorded file of a camera: from `start` to `end` (Unix seconds), `path` relative to the storage folder
    (never shown), `bytes` on disk, whether the motion gate saw `motion` in it and how many tracked `objects`."""

    camera: str
    start: float
    end: float
    path: str
    bytes: int
    motion: bool = False
    objects: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "bytes": self.bytes, "motion": self.motion,
                "objects": self.objects}


@dataclass(frozen=True)
class Retain:
    """How long a camera's segments are kept: `days` those with motion or objects, `other_days` the rest
    (`record = "continuous"`: both the same; `"motion"`: the rest a day)."""

    days: float
    other_days: float


class Oldest(NamedTuple):
    """A segment as retention sees it."""

    start: float
    path: str
    bytes: int


class SegmentIndex:
    """The `segments` table of `db` (made by `SEGMENT_SCHEMA`), its files under `files`. `failed(what, error)` is
    told of a write that failed (it is skipped: recording goes on); `refuse(error)` of a path refused."""

    def __init__(self, db: Database, files: StorageFolder, failed: Callable[[str, Exception], None],
                 refuse: Callable[[PathRefused], None]):
        self.db, self.files, self._failed, self._refuse = db, files, failed, refuse
        if db.available:
            try:
                with db.writing() as conn:
                    for statement in filter(str.strip, SEGMENT_SCHEMA.split(";")):
                        conn.execute(statement)
            except Exception as e:
                failed("make the segments' table", e)

    def put(self, segment: Segment) -> bool:
        """The segment's row made, or replaced (same path) by this newer account of it; False if it failed."""
        try:
            with self.db.writing() as conn:
                conn.execute(_PUT, (segment.camera, segment.start, segment.end, segment.path, segment.bytes,
                                    int(segment.motion), segment.objects))
        except Exception as e:  # sqlite3.Error, a full disk, StoreUnavailable: recording goes on
            self._failed("index a segment", e)
            return False
        return True

    def segments(self, camera: str, after: float | None = None, before: float | None = None) -> list[Segment]:
        """The camera's segments that overlap `after`…`before` (Unix seconds; None: unbounded), oldest first.
        Raises `StoreUnavailable`."""
        sql = f"SELECT {_COLUMNS} FROM segments WHERE camera = ? AND end_time >= ? AND start_time <= ? " \
              "ORDER BY start_time"
        with self.db.reading() as conn:
            rows = conn.execute(sql, (camera, -math.inf if after is None else after,
                                      math.inf if before is None else before)).fetchall()
        return [_segment(r) for r in rows if _valid(r)]

    def totals(self) -> tuple[int, int]:
        """(segments, their bytes); (0, 0) when the database is unavailable."""
        try:
            with self.db.reading() as conn:
                count, size = conn.execute("SELECT count(*), total(bytes) FROM segments").fetchone()
        except (StoreUnavailable, sqlite3.Error):
            return 0, 0
        return int(count), int(size)

    def named(self) -> set[str]:
        """Every segment's path. Raises `StoreUnavailable`, `sqlite3.Error`."""
        with self.db.reading() as conn:
            return {r[0] for r in conn.execute("SELECT path FROM segments") if isinstance(r[0], str)}

    def expired(self, rules: Mapping[str, Retain], default_days: float, now: float, batch: int) -> list[Oldest]:
        """At most `batch` segments past their camera's `rules` (a camera without one: `default_days`), oldest
        first."""
        found: list[Oldest] = []
        pick = "SELECT start_time, path, bytes FROM segments WHERE {} ORDER BY start_time LIMIT ?"
        with self._quietly(), self.db.reading() as conn:
            for camera, rule in rules.items():
                found += conn.execute(pick.format("camera = ? AND (start_time < ? OR (start_time < ? AND motion = 0 "
                                                  "AND objects = 0))"),
                                      (camera, now - rule.days * DAY_S, now - rule.other_days * DAY_S,
                                       batch)).fetchall()
            marks = ", ".join("?" * len(rules))
            found += conn.execute(pick.format(f"camera NOT IN ({marks}) AND start_time < ?"),
                                  (*rules, now - default_days * DAY_S, batch)).fetchall()
        return sorted(Oldest(*r) for r in found)[:batch]

    def oldest_events(self, batch: int) -> list[Oldest]:
        """The `batch` oldest events that have files and are not retained, as (start, id, bytes) (what `max_gb`
        weighs against the segments; the events' own retention removes them)."""
        with self._quietly(), self.db.reading() as conn:
            return [Oldest(*r) for r in conn.execute("SELECT start_time, id, bytes FROM events WHERE bytes > 0 AND "
                                                     "retain IS NOT 1 AND typeof(start_time) IN ('real', 'integer') "
                                                     "ORDER BY start_time LIMIT ?", (batch,))]
        return []

    def oldest(self, batch: int) -> list[Oldest]:
        """The `batch` oldest segments."""
        with self._quietly(), self.db.reading() as conn:
            return [Oldest(*r) for r in conn.execute("SELECT start_time, path, bytes FROM segments "
                                                     "ORDER BY start_time LIMIT ?", (batch,))]
        return []

    @contextlib.contextmanager
    def _quietly(self) -> Iterator[None]:
        """(retention's reads) A failure is said once and counted, and the read gives nothing: retention tries
        again at its next pass."""
        try:
            yield
        except Exception as e:
            self._failed("read old segments", e)

    def remove(self, paths: list[str], is_busy: Callable[[str], bool]) -> tuple[int, int]:
        """The segments `paths` (those not `is_busy`: being written or read) removed, their rows then their files;
        (rows, bytes freed)."""
        paths = [p for p in paths if not is_busy(p)]
        if not paths:
            return 0, 0
        try:
            with self.db.writing() as conn:
                gone = conn.execute(f"DELETE FROM segments WHERE path IN ({', '.join('?' * len(paths))})",
                                    paths).rowcount
        except Exception as e:
            self._failed("remove old segments", e)
            return 0, 0
        return gone, self.files.remove_each(paths, self._refuse, lambda e: self._failed("remove a segment's file", e))


def _valid(row: tuple) -> bool:
    camera, start, end, path, size, motion, objects = row
    return (isinstance(camera, str) and isinstance(path, str) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in (start, end, size, motion, objects)))


def _segment(row: tuple) -> Segment:
    camera, start, end, path, size, motion, objects = row
    return Segment(camera=camera, start=float(start), end=float(end), path=path, bytes=int(size),
                   motion=bool(motion), objects=int(objects))
