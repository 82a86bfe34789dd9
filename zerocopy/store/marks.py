"""What a user sets on a stored event (`MARKS`): `retain` keeps it from retention (`EventStore.prune` never picks
it, though its files count in `max_gb`), `false_positive` says it was not what its label says (shown in the
API and the page, never published)."""

from __future__ import annotations

from zerocopy.store.database import Database

MARKS = ("retain", "false_positive")


def mark(db: Database, event_id: str, name: str, value: bool) -> bool:
    """The event's mark `name` (one of `MARKS`) set to `value`; False if there is no such event. Raises
    `StoreUnavailable`, `sqlite3.Error`."""
    if name not in MARKS:
        raise ValueError(f"{name!r} is not a mark; the marks are {', '.join(MARKS)}")
    with db.writing() as conn:
        return conn.execute(f"UPDATE events SET {name} = ? WHERE id = ?", (int(value), event_id)).rowcount > 0
