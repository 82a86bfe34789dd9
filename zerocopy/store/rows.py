"""One row of the events table (`SCHEMA`, then `MIGRATIONS` in order: `database.Database` brings a file made by an
earlier version up to date in place): made from an object's event (`row_of`), read back checked (`StoredEvent.of`:
a row the store did not write so is a `ValueError`, never a wrong answer), its files' paths made relative to the
storage folder where an earlier version kept them absolute (`make_relative`)."""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from zerocopy.track import ObjectEvent

FILES = ("snapshot", "thumbnail", "clip")
COLUMNS = ("id, camera, label, top_score, start_time, end_time, box, zones, snapshot, thumbnail, clip, bytes, last, "
           "retain, false_positive")
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
    snapshot TEXT, thumbnail TEXT, clip TEXT,  -- its files, relative to the storage folder
    bytes INTEGER NOT NULL DEFAULT 0,          -- what those files took when last attached
    last TEXT NOT NULL            -- JSON: its last event (ObjectEvent.to_record())
);
"""
# each brings the schema from the version before (`PRAGMA user_version`) to its own (its place, from 1), in one
# transaction; never edited once released: a change is a new one at the end
MIGRATIONS = (
    """
    ALTER TABLE events ADD COLUMN retain INTEGER NOT NULL DEFAULT 0;          -- 1: kept from retention
    ALTER TABLE events ADD COLUMN false_positive INTEGER NOT NULL DEFAULT 0;  -- 1: marked so by a user
    DROP INDEX IF EXISTS events_by_start;
    DROP INDEX IF EXISTS events_by_camera;
    -- newest first, paged by (start_time, id): each filter's own index, in that order
    CREATE INDEX events_by_time ON events (start_time, id);
    CREATE INDEX events_by_camera ON events (camera, start_time, id);
    CREATE INDEX events_by_label ON events (label COLLATE NOCASE, start_time, id);
    """,
)
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
    """One object as the store keeps it; `snapshot`, `thumbnail` and `clip` are its files' paths relative to the
    storage folder (never shown)."""

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
    retain: bool = False  # kept from retention
    false_positive: bool = False  # marked so by a user

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "camera": self.camera, "label": self.label, "top_score": self.top_score,
                "start_time": self.start_time, "end_time": self.end_time, "box": self.box, "zones": self.zones,
                "has_snapshot": self.snapshot is not None, "has_thumbnail": self.thumbnail is not None,
                "has_clip": self.clip is not None, "retain": self.retain, "false_positive": self.false_positive,
                "last_event": self.last}

    @classmethod
    def of(cls, row: tuple) -> StoredEvent:
        """The event of a row (`COLUMNS`); `ValueError` naming what is wrong for a row the store did not write so (a
        column that is not JSON, a NULL or a text where a number is expected)."""
        ident, camera, label, top, start, end, box, zones, snapshot, thumbnail, clip, size, last, retain, false = row
        try:
            return cls(id=_text(ident), camera=_text(camera), label=_text(label), top_score=_number(top),
                       start_time=_number(start), end_time=None if end is None else _number(end),
                       box=_numbers(json.loads(box)), zones=_texts(json.loads(zones)), snapshot=_path(snapshot),
                       thumbnail=_path(thumbnail), clip=_path(clip), bytes=int(_number(size)),
                       last=_mapping(json.loads(last)), retain=_flag(retain), false_positive=_flag(false))
        except (TypeError, ValueError, RecursionError) as e:  # (json.JSONDecodeError is a ValueError; JSON too deep)
            raise ValueError(f"row {str(ident)[:80]!r}: {str(e)[:200]}") from None


def row_of(e: ObjectEvent) -> dict[str, Any]:
    return {"id": e.id, "camera": e.camera, "label": e.label, "top_score": float(e.top_score),
            "start_time": float(e.start_time), "end_time": e.end_time, "box": json.dumps([round(v, 1) for v in e.box]),
            "score": float(e.score), "zones": json.dumps(list(e.entered_zones)), "last": json.dumps(e.to_record())}


def make_relative(conn: sqlite3.Connection, prefixes: Iterable[str]) -> None:
    """The files' paths that begin with one of `prefixes` (the storage folder's, ending in `/`) made relative to it."""
    for prefix in prefixes:
        for column in FILES:
            conn.execute(f"UPDATE events SET {column} = substr({column}, ?) WHERE substr({column}, 1, ?) = ?",
                         (len(prefix) + 1, len(prefix), prefix))


def bytes_of(value: Any) -> int:
    """A row's `bytes` (0 if a damaged row holds something else)."""
    return value if isinstance(value, int) and value > 0 else 0


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{str(value)[:40]!r} where a number is expected")
    return value


def _numbers(value: Any) -> list[float]:
    if not isinstance(value, list) or len(value) != 4:
        raise ValueError(f"a box of {str(value)[:40]!r}")
    return [_number(v) for v in value]


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{str(value)[:40]!r} where a text is expected")
    return value


def _texts(value: Any) -> list[str]:
    if not isinstance(value, list):
        raise ValueError(f"{str(value)[:40]!r} where a list is expected")
    return [_text(v) for v in value]


def _flag(value: Any) -> bool:
    if value not in (0, 1) or isinstance(value, float):
        raise ValueError(f"{str(value)[:40]!r} where 0 or 1 is expected")
    return bool(value)


def _path(value: Any) -> str | None:
    return None if value is None else _text(value)


def _mapping(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{str(value)[:40]!r} where an object is expected")
    return value

