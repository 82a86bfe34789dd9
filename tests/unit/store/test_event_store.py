"""zerocopy.store.events on real SQLite files: one row per object upserted from its real `ObjectEvent`s, kept across
restarts; the filters of /api/events, newest first, limit; files attached; retention by age and by size with the
files removed and the busy ones kept; a corrupt or unreadable database moved aside and a new one working; a full
database said once, counted and skipped; writer and reader threads at once."""

import sqlite3
import threading
import time

import numpy as np
import pytest
from objectevents import T0
from objectevents import object_event as event

from zerocopy.detections import Detections
from zerocopy.store.events import MAX_LIMIT, EventStore, StoreUnavailable
from zerocopy.track import ObjectEvents


@pytest.fixture
def said():
    return []


@pytest.fixture
def store(tmp_path, said):
    store = EventStore(tmp_path / "events.db", said.append)
    yield store
    store.close()


def test_an_objects_events_make_one_row_with_its_best_box_and_top_score(store, said):
    assert store.record([event("new", "a", score=0.6, box=(0, 0, 10, 10))]) == 1
    assert store.get("a").end_time is None  # open while in view
    store.record([event("update", "a", score=0.9, box=(5, 5, 50, 50), zones=("door",)),
                  event("end", "a", score=0.5, box=(7, 7, 9, 9), zones=("door", "yard"), end=T0 + 12)])
    row = store.get("a")
    assert (row.camera, row.label, row.top_score, row.start_time, row.end_time) == ("front", "person", 0.9, T0, T0 + 12)
    assert row.box == [5, 5, 50, 50] and row.zones == ["door", "yard"]  # the best-scored box; every zone entered
    assert row.last["type"] == "end" and row.last["score"] == 0.5
    assert store.totals() == (1, 0) and said == []
    shown = row.to_json()
    assert shown["has_clip"] is shown["has_snapshot"] is shown["has_thumbnail"] is False
    assert not {"snapshot", "clip", "thumbnail", "bytes"} & set(shown)  # no path of this box is shown


def test_events_made_by_the_tracker_are_stored_under_its_ids(store):
    objects = ObjectEvents(["person"], "rtsp://front.lan/1", "front", "box1", min_hits=2, max_lost=1.0)
    box = Detections(np.array([[10, 10, 60, 90]], np.float32), np.array([0.7], np.float32), np.array([0], np.int32),
                     tracker_id=np.array([4]))
    made = [e for i in range(3) for e in objects.update(box, pts=i * 0.2, wall=T0 + i * 0.2)]
    made += objects.finish(T0 + 5)
    assert [e.type for e in made] == ["new", "end"]
    store.record(made)
    row, = store.query()
    assert row.id == made[0].id and row.end_time == pytest.approx(T0 + 0.4) and row.label == "person"


def test_rows_are_kept_across_a_restart(tmp_path):
    first = EventStore(tmp_path / "events.db", print)
    first.record([event("new", "a"), event("new", "b", T0 + 1)])
    first.close()
    again = EventStore(tmp_path / "events.db", print)
    assert [e.id for e in again.query()] == ["b", "a"]
    again.close()


def test_the_filters_newest_first_and_the_limit(store):
    store.record([event("new", "p1", T0, zones=("door",)), event("new", "c1", T0 + 10, label="car"),
                  event("new", "p2", T0 + 20, camera="back", zones=("yard", "door")),
                  event("new", "p3", T0 + 30, zones=("yard",))])
    ids = lambda **f: [e.id for e in store.query(**f)]  # noqa: E731
    assert ids() == ["p3", "p2", "c1", "p1"]
    assert ids(camera="back") == ["p2"] and ids(camera="nowhere") == []
    assert ids(label="PERSON") == ["p3", "p2", "p1"]  # labels in any case (MQTT lowercases them)
    assert ids(zone="door") == ["p2", "p1"] and ids(zone="yard", camera="front") == ["p3"]
    assert ids(zone="do") == []  # a zone by its whole name
    assert ids(after=T0 + 10) == ["p3", "p2"] and ids(before=T0 + 10) == ["p1"]
    assert ids(after=T0, before=T0 + 30) == ["p2", "c1"]
    assert ids(limit=2) == ["p3", "p2"]


def test_the_limit_is_at_most_500(store):
    store.record([event("new", f"e{i:04d}", T0 + i) for i in range(MAX_LIMIT + 20)])
    found = store.query(limit=10_000)
    assert len(found) == MAX_LIMIT and found[0].id == f"e{MAX_LIMIT + 19:04d}"
    assert len(store.query()) == 50


def test_files_are_attached_and_counted(store, tmp_path):
    clip, snap = tmp_path / "a.mp4", tmp_path / "a.jpg"
    clip.write_bytes(b"m" * 1000)
    snap.write_bytes(b"j" * 100)
    store.record([event("new", "a")])
    assert store.attach("a", snapshot=snap) and store.attach("a", clip=clip)
    row = store.get("a")
    assert (row.snapshot, row.clip, row.thumbnail, row.bytes) == ("a.jpg", "a.mp4", None, 1100)  # relative
    assert row.to_json()["has_clip"] and row.to_json()["has_snapshot"]
    assert store.attach("unknown", clip=clip) is False
    assert store.get("unknown") is None and store.totals() == (1, 1100)


def stored_with_files(store, tmp_path, n: int, size: int = 1000) -> list:
    """n events a day apart (the oldest first), each with a clip of `size` bytes."""
    clips = []
    for i in range(n):
        clip = tmp_path / f"clip{i}.mp4"
        clip.write_bytes(b"x" * size)
        store.record([event("end", f"e{i}", T0 + i * 86400, end=T0 + i * 86400 + 5)])
        store.attach(f"e{i}", clip=clip)
        clips.append(clip)
    return clips


def test_retention_by_age_removes_old_rows_with_their_files_but_never_a_busy_one(store, tmp_path):
    clips = stored_with_files(store, tmp_path, 5)
    now = T0 + 4 * 86400 + 60  # e0 is 4 days old, e4 a minute
    freed = store.prune(max_days=1.5, now=now, busy={str(clips[1])})
    assert freed == (2, 2000)
    assert [e.id for e in store.query()] == ["e4", "e3", "e1"]  # e1's clip is being written: kept
    assert [c.exists() for c in clips] == [False, True, False, True, True]
    assert store.prune(max_days=1.5, now=now, busy=lambda path: False) == (1, 1000)
    assert not clips[1].exists() and store.removed == 3
    assert store.prune(max_days=1.5, now=now) == (0, 0)


def test_retention_by_size_removes_the_oldest_until_the_files_fit(store, tmp_path):
    clips = stored_with_files(store, tmp_path, 6)
    assert store.prune(max_bytes=3500, busy=[clips[0]]) == (3, 3000)  # 6000 → 3000: e1, e2, e3 (e0 busy)
    assert sorted(e.id for e in store.query()) == ["e0", "e4", "e5"]
    assert [c.exists() for c in clips] == [True, False, False, False, True, True]
    assert store.totals() == (3, 3000) and store.prune(max_bytes=3500) == (0, 0)


def test_retention_is_bounded_work_a_call(store, tmp_path):
    store.record([event("new", f"e{i}", T0 + i) for i in range(30)])
    assert store.prune(max_days=1, now=T0 + 10 * 86400, batch=8) == (8, 0)
    assert store.totals()[0] == 22


def test_a_file_that_is_not_a_database_is_moved_aside_and_a_new_one_works(tmp_path, said):
    path = tmp_path / "events.db"
    path.write_bytes(b"this is not SQLite\n" * 300)
    store = EventStore(path, said.append, clock=lambda: T0)
    aside = tmp_path / f"events.db.corrupt-{int(T0)}"
    assert said == [f"events: {path} is damaged (file is not a database); moved aside to {aside.name}, a new one "
                    "started"]
    assert aside.read_bytes().startswith(b"this is not SQLite") and store.available
    store.record([event("new", "a")])
    assert [e.id for e in store.query()] == ["a"]
    store.close()


def test_a_damaged_database_is_moved_aside_with_its_log(tmp_path, said):
    path = tmp_path / "events.db"
    good = EventStore(path, print)
    good.record([event("new", f"e{i}", T0 + i, zones=("door",) * 40) for i in range(400)])
    good.close()
    data = bytearray(path.read_bytes())
    data[4096 * 2:4096 * 4] = b"\xa5" * 8192  # pages of the table overwritten
    path.write_bytes(bytes(data))
    store = EventStore(path, said.append, clock=lambda: T0)
    assert len(said) == 1 and "moved aside" in said[0] and (tmp_path / f"events.db.corrupt-{int(T0)}").exists()
    assert store.query() == [] and store.record([event("new", "a")]) == 1
    store.close()


def test_a_store_that_cannot_be_made_is_unavailable_and_detection_goes_on(tmp_path, said):
    (tmp_path / "file").write_text("a file, not a folder")
    store = EventStore(tmp_path / "file" / "events.db", said.append)
    assert not store.available and len(said) == 1 and said[0].startswith("events: not kept: cannot open")
    assert store.record([event("new", "a")]) == 0 and store.record([event("new", "b")]) == 0
    assert store.write_errors == 2 and len(said) == 2  # the failing writes said once
    with pytest.raises(StoreUnavailable):
        store.query()
    assert store.totals() == (0, 0) and store.prune(max_days=1) == (0, 0)


def test_a_full_database_is_said_once_counted_and_the_rows_skipped(store, said):
    store.record([event("new", "first")])
    pages = store.db._writer.execute("PRAGMA page_count").fetchone()[0]
    store.db._writer.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own "database or disk is full"
    big = "z" * 20_000
    for i in range(3):
        assert store.record([event("new", f"big{i}", zones=(big,))]) == 0
    assert store.write_errors == 3
    assert said == ["events: cannot record events: database or disk is full; skipped (said once; counted in "
                    "zerocopy_storage_write_errors_total)"]
    assert [e.id for e in store.query()] == ["first"]
    assert store.record([event("end", "first", end=T0 + 3)]) == 1  # a small write still goes through


def test_writer_and_reader_threads_at_once(store):
    errors, seen = [], []
    done = threading.Event()

    def write():
        try:
            for i in range(0, 600, 20):
                store.record([event("new", f"e{j:05d}", T0 + j) for j in range(i, i + 20)])
        except Exception as e:  # pragma: no cover - the failure being tested for
            errors.append(e)
        finally:
            done.set()

    def read():
        try:
            while True:  # at least once, and once more after the writer is done (a fast writer may finish first)
                finished = done.is_set()
                found = store.query(camera="front", limit=100)
                seen.append(len(found))
                assert [e.start_time for e in found] == sorted((e.start_time for e in found), reverse=True)
                if finished:
                    break
        except Exception as e:  # pragma: no cover
            errors.append(e)

    threads = [*(threading.Thread(target=read) for _ in range(4)), threading.Thread(target=write)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == [] and store.totals() == (600, 0) and store.write_errors == 0
    assert seen and max(seen) <= 100
    assert time.monotonic() - started < 60


def test_a_locked_database_is_not_moved_aside(tmp_path, said, monkeypatch):
    monkeypatch.setattr("zerocopy.store.database.BUSY_TIMEOUT_S", 0.05)  # the wait for the lock (5 s in service)
    path = tmp_path / "events.db"
    EventStore(path, print).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        store = EventStore(path, said.append)
        assert not store.available and "in use by another process" in said[0]
        assert not list(tmp_path.glob("*.corrupt-*"))
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_database_that_cannot_be_opened_is_left_where_it_is_and_said(tmp_path, said):
    path = tmp_path / "events.db"
    path.mkdir()  # a folder where the file should be: it cannot be opened, and it is not damaged
    (path / "mine").write_text("kept")
    store = EventStore(path, said.append)
    assert not list(tmp_path.glob("*.corrupt-*")) and (path / "mine").read_text() == "kept"
    assert not store.available
    assert said == [f"events: not kept: cannot open {path}: Is a directory; detection goes on"]
    with pytest.raises(StoreUnavailable, match="cannot open"):
        store.query()


LOOSE = """CREATE TABLE events (id TEXT PRIMARY KEY, camera TEXT, label TEXT, top_score REAL, start_time REAL,
end_time REAL, box TEXT, box_score REAL, zones TEXT, snapshot TEXT, thumbnail TEXT, clip TEXT, bytes INTEGER DEFAULT 0,
last TEXT)"""  # the store's table without its NOT NULLs, as another program could have made it


def test_damaged_rows_are_skipped_and_counted_not_raised(tmp_path, said):
    conn = sqlite3.connect(tmp_path / "events.db")
    conn.execute(LOOSE)
    conn.close()
    store = EventStore(tmp_path / "events.db", said.append)
    store.record([event("new", ident, T0 + i, zones=("door",)) for i, ident in enumerate("abcdefg")])
    conn = sqlite3.connect(tmp_path / "events.db")
    for damage in ("box = 'not json' WHERE id = 'a'", "top_score = 'high' WHERE id = 'b'",
                   "start_time = NULL WHERE id = 'c'", "last = NULL WHERE id = 'd'", "zones = '[' WHERE id = 'e'",
                   "bytes = 'many', clip = 7 WHERE id = 'f'"):
        conn.execute(f"UPDATE events SET {damage}")
    conn.commit()
    conn.close()
    assert [e.id for e in store.query()] == ["g"]
    assert [e.id for e in store.query(zone="door")] == ["g"]  # zones that are not JSON: no error either
    assert store.get("a") is None and store.get("g").id == "g"
    assert store.damaged_rows == 6 and len(said) == 1
    assert said[0].startswith("events: a damaged row skipped (row ") and said[0].endswith(
        "; said once; counted in zerocopy_storage_damaged_rows_total")
    assert store.prune(max_days=1, now=T0 + 10 * 86400).rows == 7 and store.write_errors == 0  # retention goes on
    store.close()
