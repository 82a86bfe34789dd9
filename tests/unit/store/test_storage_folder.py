"""zerocopy.store.folder and the store's files on a real folder (issue 36): rows name files relative to the storage
folder; a row naming a file outside it (absolute, `..`) or a link in the folder pointing outside is neither served
nor removed by retention (said once, counted); rows of an earlier version with absolute paths inside the folder
still work. At start, the temporaries a kill left are removed; the files no row names (a database moved aside) are
counted in the bytes used and removed oldest first past the limits; files being written are counted."""

import os
import sqlite3

import pytest
from conftest import wait_until
from objectevents import T0
from objectevents import object_event as event

from zerocopy.store.events import EventStore
from zerocopy.store.storage import Storage

SECRET = b"root:x:0:0:a file outside the storage folder\n"


@pytest.fixture
def said():
    return []


@pytest.fixture
def outside(tmp_path):
    (tmp_path / "outside").mkdir()
    secret = tmp_path / "outside" / "passwd"
    secret.write_bytes(SECRET)
    return secret


def plant(db, ident: str, clip: str, start: float = T0) -> None:
    """A row whose clip is `clip`, written straight into the database file (as another program could)."""
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO events (id, camera, label, top_score, start_time, box, box_score, zones, clip, bytes, "
                 "last) VALUES (?, 'front', 'person', 0.9, ?, '[0,0,1,1]', 0.9, '[]', ?, 100, '{}')",
                 (ident, start, clip))
    conn.commit()
    conn.close()


def test_a_planted_row_naming_a_file_outside_the_folder_is_neither_served_nor_removed(tmp_path, outside, said):
    store = EventStore(tmp_path / "store" / "events.db", said.append)
    for i, named in enumerate((str(outside), "../outside/passwd", "clips/../../outside/passwd")):
        plant(store.path, f"p{i}", named, T0 + i)
    rows = store.query()
    assert store.prune(max_days=1, now=T0 + 10 * 86400) == (3, 0)  # the rows go; the file they name stays
    assert outside.read_bytes() == SECRET
    for row in rows:
        with pytest.raises(FileNotFoundError):  # (PathRefused: a 404)
            store.open_file(row.clip)
    assert store.refused == 6
    assert len(said) == 1 and said[0].startswith("events: a file refused: ") and said[0].endswith(
        "; never served nor removed (said once; counted in zerocopy_storage_refused_total)")
    store.close()


def test_a_link_in_the_folder_pointing_outside_is_neither_followed_nor_removed(tmp_path, outside, said):
    store = EventStore(tmp_path / "store" / "events.db", said.append)
    clips = tmp_path / "store" / "clips"
    (clips / "front").mkdir(parents=True)
    (clips / "front" / "a.mp4").symlink_to(outside)  # a link to a file outside
    (clips / "back").symlink_to(outside.parent, target_is_directory=True)  # a link to a folder outside
    store.record([event("new", "a", T0), event("new", "b", T0 + 1)])
    assert store.attach("a", clip=clips / "front" / "a.mp4") and store.attach("b", clip=clips / "back" / "passwd")
    rows = store.query()
    assert store.totals() == (2, 0)  # a link's target is not counted either
    assert store.prune(max_days=1, now=T0 + 10 * 86400) == (2, 0)
    assert outside.read_bytes() == SECRET and (clips / "front" / "a.mp4").is_symlink()  # the link left too
    for row in rows:
        with pytest.raises(FileNotFoundError):  # (PathRefused: a 404)
            store.open_file(row.clip)
    assert [r.clip for r in rows] == ["clips/back/passwd", "clips/front/a.mp4"]  # relative to the folder
    assert store.refused > 0 and len(said) == 1
    store.close()


def test_rows_with_absolute_paths_inside_the_folder_are_made_relative(tmp_path, said):
    folder = tmp_path / "store"
    EventStore(folder / "events.db", print).close()
    (folder / "clips").mkdir()
    (folder / "clips" / "a.mp4").write_bytes(b"m" * 100)
    plant(folder / "events.db", "a", str(folder / "clips" / "a.mp4"))  # as the store wrote it before issue 36
    store = EventStore(folder / "events.db", said.append)
    assert store.get("a").clip == "clips/a.mp4"
    fd = store.open_file("clips/a.mp4")
    assert os.read(fd, 1000) == b"m" * 100
    os.close(fd)
    assert store.prune(max_days=1, now=T0 + 10 * 86400) == (1, 100) and not (folder / "clips" / "a.mp4").exists()
    assert said == []
    store.close()


def test_temporaries_a_kill_left_are_removed_at_start_and_files_being_written_counted(tmp_path, said):
    folder = tmp_path / "store"
    (folder / "snapshots" / "front").mkdir(parents=True)
    (folder / "clips" / "front").mkdir(parents=True)
    left = [folder / "snapshots" / "front" / "e1.jpg.part",
            folder / "clips" / "front" / ".e1.mp4.zerocopy-4242-a1b2c3.tmp"]
    for path in left:
        path.write_bytes(b"t" * 1000)
    other = folder / "clips" / "front" / "notes.txt"  # not a file of the storage's: left alone, not counted
    other.write_text("mine")
    storage = Storage(folder, max_bytes=10**9, max_days=10, say=said.append)
    try:
        assert not any(p.exists() for p in left) and other.exists()
        assert said == [f"storage {folder}: 2 temporary files left by an earlier run removed (0.0 MB)"]
        assert storage.stats().file_bytes == 0
        writing = folder / "clips" / "front" / ".e2.mp4.zerocopy-77-d4e5f6.tmp"
        writing.write_bytes(b"w" * 3000)
        storage.watch(busy=lambda: {writing})  # a clip writer's file being written
        assert storage.stats().file_bytes == 3000
    finally:
        storage.close()


def test_after_a_corrupt_database_its_files_are_counted_and_removed_oldest_first_past_the_limit(tmp_path, said):
    folder = tmp_path / "store"
    shots = folder / "snapshots" / "front"
    shots.mkdir(parents=True)
    files = [shots / f"e{i}.jpg" for i in range(4)]
    for i, path in enumerate(files):
        path.write_bytes(b"j" * 1000)
        os.utime(path, (T0 + i, T0 + i))  # e0 the oldest
    (folder / "events.db").write_bytes(b"garbage, not SQLite\n" * 100)
    storage = Storage(folder, max_bytes=10**9, max_days=1e6, say=said.append, clock=lambda: T0 + 60)
    try:
        stats = storage.stats()
        assert stats.file_bytes == 4000 and stats.unnamed_files == 4  # counted in the bytes used
        assert said[0].startswith(f"events: {folder / 'events.db'} is damaged") and "moved aside" in said[0]
        assert said[1] == (f"storage {folder}: 4 files no event names (0.0 MB: a database moved aside, or a kill "
                           "before their event was written): counted in max_gb, removed oldest first past the limits")
    finally:
        storage.close()
    storage = Storage(folder, max_bytes=2500, max_days=1e6, say=said.append, clock=lambda: T0 + 60)
    try:  # its thread's first retention pass, at start: 4000 → 2000 ≤ 2500, the two oldest removed
        wait_until(lambda: storage.stats().unnamed_files == 2, 30, "the two oldest files removed")
        assert [p.exists() for p in files] == [False, False, True, True] and storage.stats().file_bytes == 2000
    finally:
        storage.close()
    storage = Storage(folder, max_bytes=10**9, max_days=1.0, say=said.append, clock=lambda: T0 + 3 * 86400)
    try:  # past max_days: the rest removed
        wait_until(lambda: storage.stats().unnamed_files == 0, 30, "the files older than max_days removed")
        assert not any(p.exists() for p in files)
    finally:
        storage.close()
