"""zerocopy.store's pages of events and its marks on real SQLite files: a database made by the version before
(its schema and rows as it wrote them) brought up to date in place and kept; pages that neither skip nor repeat
an event while others arrive, ties broken by id, each filter's total, every filter a search of its index; a
damaged row never stops the paging; `retain` kept by retention while its neighbours go, `false_positive` shown."""

import sqlite3

import pytest
from objectevents import T0
from objectevents import object_event as event

from zerocopy.store.events import Cursor, EventFilter, EventStore
from zerocopy.store.marks import mark
from zerocopy.store.paging import TOP
from zerocopy.store.rows import COLUMNS
from zerocopy.store.storage import Storage

# what the version before made (rows.SCHEMA before issue 38), and a row as its UPSERT wrote it
SCHEMA_BEFORE = """
CREATE TABLE IF NOT EXISTS events (
    id TEXT PRIMARY KEY, camera TEXT NOT NULL, label TEXT NOT NULL, top_score REAL NOT NULL,
    start_time REAL NOT NULL, end_time REAL, box TEXT NOT NULL, box_score REAL NOT NULL, zones TEXT NOT NULL,
    snapshot TEXT, thumbnail TEXT, clip TEXT, bytes INTEGER NOT NULL DEFAULT 0, last TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_start ON events (start_time);
CREATE INDEX IF NOT EXISTS events_by_camera ON events (camera, start_time);
"""
ROW_BEFORE = ("old", "front", "person", 0.9, T0, T0 + 4, "[1, 2, 3, 4]", 0.9, '["door"]', "a.jpg", None, None, 12,
              '{"type": "end"}')


@pytest.fixture
def store(tmp_path):
    store = EventStore(tmp_path / "events.db", print)
    yield store
    store.close()


def ids(page) -> list[str]:
    return [e.id for e in page.events]


def test_a_database_made_by_the_version_before_is_brought_up_to_date_in_place(tmp_path):
    conn = sqlite3.connect(tmp_path / "events.db")
    conn.executescript(SCHEMA_BEFORE)
    conn.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", ROW_BEFORE)
    conn.commit()
    conn.close()
    store = EventStore(tmp_path / "events.db", print)
    old = store.get("old")
    assert (old.end_time, old.zones, old.snapshot, old.bytes, old.retain, old.false_positive) == (
        T0 + 4, ["door"], "a.jpg", 12, False, False)
    assert mark(store.db, "old", "retain", True) and store.get("old").retain
    store.record([event("new", "b", T0 + 9)])
    assert ids(store.page(EventFilter())) == ["b", "old"]
    store.close()
    conn = sqlite3.connect(tmp_path / "events.db")
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")}
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    conn.close()
    assert {"events_by_time", "events_by_camera", "events_by_label"} <= indexes and "events_by_start" not in indexes
    again = EventStore(tmp_path / "events.db", print)  # opened again: nothing done twice, the mark kept
    assert again.get("old").retain and again.totals() == (2, 12)
    again.close()


def test_a_database_made_by_a_later_version_is_left_as_it_is(tmp_path):
    EventStore(tmp_path / "events.db", print).close()
    conn = sqlite3.connect(tmp_path / "events.db")
    conn.execute("PRAGMA user_version = 7")
    conn.close()
    store = EventStore(tmp_path / "events.db", print)
    store.record([event("new", "a")])
    assert ids(store.page(EventFilter())) == ["a"]
    store.close()


def test_pages_neither_skip_nor_repeat_while_events_arrive(store):
    store.record([event("new", f"e{i}", T0 + i) for i in range(7)])
    first = store.page(EventFilter(), limit=3)
    assert ids(first) == ["e6", "e5", "e4"] and first.total == 7 and first.next == Cursor(T0 + 4, "e4")
    store.record([event("new", "late", T0 + 100), event("new", "e3b", T0 + 3.5)])  # newer, and one among the rest
    second = store.page(EventFilter(), after=Cursor.parse(str(first.next)), limit=3)
    assert ids(second) == ["e3b", "e3", "e2"] and second.total == 9
    store.record([event("new", "later", T0 + 200)])
    third = store.page(EventFilter(), after=second.next, limit=3)
    assert ids(third) == ["e1", "e0"] and third.next is None


def test_events_that_start_together_are_paged_by_id(store):
    store.record([event("new", name, T0) for name in "cabd"])
    seen, after = [], None
    while True:
        page = store.page(EventFilter(), after=after, limit=1, count=False)
        seen += ids(page)
        if page.next is None:
            break
        after = page.next
    assert seen == ["d", "c", "b", "a"] and page.total == -1


def test_each_filters_page_and_total(store):
    store.record([event("new", "a", T0, zones=("door",)), event("new", "b", T0 + 1, camera="back", label="car"),
                  event("new", "c", T0 + 2, label="Person", zones=("yard", "door")), event("new", "d", T0 + 3)])
    for where, expected in ((EventFilter(camera="front"), ["d", "c", "a"]), (EventFilter(label="person"),
                                                                             ["d", "c", "a"]),
                            (EventFilter(zone="door"), ["c", "a"]), (EventFilter(after=T0, before=T0 + 3), ["c", "b"]),
                            (EventFilter(camera="front", zone="yard"), ["c"])):
        first = store.page(where, limit=1)
        assert ids(first) == expected[:1] and first.total == len(expected), where
        assert (first.next is None) == (len(expected) == 1), where
        if first.next is not None:
            assert ids(store.page(where, after=first.next, limit=10)) == expected[1:], where


@pytest.mark.parametrize("where", [EventFilter(), EventFilter(camera="front"), EventFilter(label="car"),
                                   EventFilter(after=T0, before=T0 + 9)])
def test_every_filters_page_is_a_search_of_its_index(store, where):
    tests, values = where.where()
    tests.append("(start_time, id) < (?, ?)")
    sql = (f"EXPLAIN QUERY PLAN SELECT {COLUMNS} FROM events WHERE {' AND '.join(tests)} "
           "ORDER BY start_time DESC, id DESC LIMIT 50")
    with store.db.reading() as conn:
        plan = " ".join(r[-1] for r in conn.execute(sql, (*values, T0, "x")))
    assert plan.startswith("SEARCH events USING INDEX events_by_") and "TEMP B-TREE" not in plan, plan


def test_a_cursor_is_read_back_or_refused():
    assert Cursor.parse(str(Cursor(1795000000.125, "1795000000.125-ab_c"))) == (1795000000.125, "1795000000.125-ab_c")
    for text in ("", "abc", "12", "nan_x", "inf_x", "1e999_x", "1_0"):
        if text == "1_0":
            assert Cursor.parse(text) == (1.0, "0")
            continue
        with pytest.raises(ValueError, match="is not a cursor"):
            Cursor.parse(text)


def test_a_page_of_damaged_rows_still_gives_the_next(store):
    store.record([event("new", name, T0 + i) for i, name in enumerate("abc")])
    with store.db.writing() as conn:
        conn.execute("UPDATE events SET start_time = 'soon' WHERE id = 'c'")  # a text sorts before every number
    first = store.page(EventFilter(), limit=1)
    assert ids(first) == [] and first.next == Cursor(TOP, "") and store.damaged_rows == 1
    assert ids(store.page(EventFilter(), after=first.next, limit=5)) == ["b", "a"]


def test_a_retained_event_survives_retention_that_removes_its_neighbours(store, tmp_path):
    for name in "abc":
        (tmp_path / f"{name}.jpg").write_bytes(b"x" * 100)
    store.record([event("new", name, T0 + i) for i, name in enumerate("abc")])
    for name in "abc":
        store.attach(name, snapshot=tmp_path / f"{name}.jpg")
    assert mark(store.db, "b", "retain", True) and not mark(store.db, "nope", "retain", True)
    assert mark(store.db, "c", "false_positive", True)
    freed = store.prune(max_days=1, now=T0 + 10 * 86400)
    assert freed == (2, 200) and ids(store.page(EventFilter())) == ["b"] and (tmp_path / "b.jpg").exists()
    store.record([event("new", "d", T0 + 5)])
    assert store.prune(max_bytes=0).rows == 0  # past the size too: kept, its bytes counted
    assert mark(store.db, "b", "retain", False) and store.prune(max_bytes=0) == (1, 100)
    with pytest.raises(ValueError, match="not a mark"):
        mark(store.db, "d", "bytes", True)


def test_a_false_positive_is_shown(store):
    store.record([event("new", "a")])
    assert store.get("a").to_json()["false_positive"] is False
    mark(store.db, "a", "false_positive", True)
    shown = store.get("a").to_json()
    assert shown["false_positive"] is True and shown["retain"] is False


def test_a_retained_event_is_never_removed_to_make_room(tmp_path):
    storage = Storage(tmp_path, max_bytes=150, max_days=1e6, say=print, prune_every=1e9)
    try:
        for name in "ab":
            (tmp_path / f"{name}.jpg").write_bytes(b"x" * 100)
        storage.record([event("new", "a", T0), event("new", "b", T0 + 1)])
        for name in "ab":
            storage.attach(name, snapshot=tmp_path / f"{name}.jpg")
        assert storage.flush() and mark(storage.store.db, "a", "retain", True)
        storage.prune()  # 200 bytes past 150: the newer goes, as the older is retained
        assert ids(storage.store.page(EventFilter())) == ["a"] and (tmp_path / "a.jpg").exists()
    finally:
        storage.close()
