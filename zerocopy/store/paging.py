"""The events a filter matches (`EventFilter`), newest first, a page at a time (`read_page`): ordered by
(`start_time`, `id`), which an event never changes once stored, and continued after a `Cursor` (the last event a
page gave), so a page neither skips nor repeats an event when new ones arrive or others are removed meanwhile. Each
filter has its index (rows.MIGRATIONS): a page is a search of it, whatever the table's size."""

from __future__ import annotations

import math
import sqlite3
import sys
from dataclasses import dataclass
from typing import Any, NamedTuple

from zerocopy.store.rows import COLUMNS, StoredEvent

TOP = sys.float_info.max  # a cursor before every event (one made when a page held only damaged rows)


@dataclass(frozen=True, kw_only=True)
class EventFilter:
    """What `/api/events` asks: `camera` (its name), `label` (in any case), `zone` (one the object entered), `after`
    and `before` (Unix times its start is after, before); None: any."""

    camera: str | None = None
    label: str | None = None
    zone: str | None = None
    after: float | None = None
    before: float | None = None

    def where(self) -> tuple[list[str], list[Any]]:
        """Its tests (SQL, joined by AND) and their values."""
        tests, values = [], []
        for test, value in (("camera = ?", self.camera), ("label = ? COLLATE NOCASE", self.label),
                            ("CASE WHEN json_valid(events.zones) THEN EXISTS (SELECT 1 FROM json_each(events.zones) "
                             "WHERE value = ?) END", self.zone),
                            ("start_time > ?", self.after), ("start_time < ?", self.before)):
            if value is not None:
                tests.append(test)
                values.append(value)
        return tests, values


class Cursor(NamedTuple):
    """Where a page ends: its last event's start and id; the next page begins with the event after it. Written
    `START_ID` (`str`), read back by `parse`."""

    start_time: float
    id: str

    def __str__(self) -> str:
        return f"{self.start_time!r}_{self.id}"

    @classmethod
    def parse(cls, text: str) -> Cursor:
        """A cursor as `str` wrote it; `ValueError` for anything else."""
        start, sep, ident = text.partition("_")
        try:
            number = float(start)
        except ValueError:
            number = math.nan
        if not sep or not math.isfinite(number):
            raise ValueError(f"{text[:60]!r} is not a cursor a page gave (its `next`)")
        return cls(number, ident)


class Page(NamedTuple):
    """One page of events, newest first (`EventStore.page`)."""

    events: list[StoredEvent]
    total: int  # events the filter matches now (-1: not counted)
    next: Cursor | None  # where the page after this one begins (None: this is the last)

    def to_json(self) -> dict[str, Any]:
        return {"events": [e.to_json() for e in self.events], "total": self.total,
                "next": None if self.next is None else str(self.next)}


class RawPage(NamedTuple):
    """A page as read: its rows (`COLUMNS`, unchecked), how many events match the filter now (`total`), and the
    cursor of the page after it (None: this is the last)."""

    rows: list[tuple]
    total: int
    next: Cursor | None


def read_page(conn: sqlite3.Connection, where: EventFilter, after: Cursor | None, limit: int,
              count: bool = True) -> RawPage:
    """The first `limit` events `where` matches after the cursor `after` (None: the newest), newest first;
    `total` only if `count` (else -1)."""
    tests, values = where.where()
    total = -1
    if count:
        total = conn.execute(f"SELECT count(*) FROM events {_clause(tests)}", values).fetchone()[0]
    if after is not None:
        tests, values = [*tests, "(start_time, id) < (?, ?)"], [*values, after.start_time, after.id]
    rows = conn.execute(f"SELECT {COLUMNS} FROM events {_clause(tests)} ORDER BY start_time DESC, id DESC LIMIT ?",
                        (*values, limit + 1)).fetchall()
    more = len(rows) > limit
    rows = rows[:limit]
    return RawPage(rows, total, _last(rows) if more else None)


def _clause(tests: list[str]) -> str:
    return f"WHERE {' AND '.join(tests)}" if tests else ""


def _last(rows: list[tuple]) -> Cursor:
    """The cursor after `rows`: its last row whose start is a number (a damaged row's text start sorts before every
    number: none such, `TOP`)."""
    for row in reversed(rows):
        start, ident = row[4], row[0]
        if isinstance(start, int | float) and not isinstance(start, bool) and isinstance(ident, str):
            return Cursor(float(start), ident)
    return Cursor(TOP, "")
