"""zerocopy.store's recordings: segments' rows and files removed by retention, per camera by days (continuous: all
kept as long; motion: the quiet ones a day) and under max_gb the oldest first, with the events' files; a segment
being written or read is never removed."""

from __future__ import annotations

import time

import pytest
from objectevents import object_event as event

from zerocopy.store.segments import Retain, Segment
from zerocopy.store.storage import Storage

NOW = time.time()
DAY = 86400.0


@pytest.fixture
def make(tmp_path):
    made = []

    def storage(max_bytes=10**9, max_days=1e6):
        s = Storage(tmp_path / "store", max_bytes=max_bytes, max_days=max_days, say=lambda line: None,
                    prune_every=3600)
        made.append(s)
        assert s.flush()  # after its thread's first retention pass: the test's own passes are the only others
        return s

    yield storage
    for s in made:
        s.close()


def segment(storage, camera, start, size=1000, motion=False, objects=0) -> Segment:
    """A segment's file of `size` bytes and its row."""
    rel = f"recordings/{camera}/{time.strftime('%Y-%m-%d/%H-%M-%S', time.gmtime(start))}.mp4"
    path = storage.folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\0" * size)
    row = Segment(camera=camera, start=start, end=start + 10, path=rel, bytes=size, motion=motion, objects=objects)
    assert storage.index.put(row)
    return row


def test_retention_removes_the_oldest_segments_first_at_the_cap_and_never_one_in_use(make):
    storage = make(max_bytes=5000)
    rows = [segment(storage, "gate", NOW - 600 + 10 * i) for i in range(8)]
    with storage.holding(rows[1].path):  # being read (an export): kept
        storage.prune()
    kept = storage.segments("gate")
    assert kept == [rows[1], *rows[4:]]  # the oldest removed first until 5000 bytes are left
    assert all((storage.folder / r.path).exists() == (r in kept) for r in rows)
    assert storage.stats().file_bytes == 5000
    segment(storage, "gate", NOW)
    storage.prune()  # no longer held: the oldest goes first
    assert storage.segments("gate")[0] == rows[4]


def test_the_cap_weighs_events_files_and_segments_together_oldest_first(make):
    storage = make(max_bytes=3500)
    rows = [segment(storage, "gate", NOW - 100 + 10 * i) for i in range(4)]
    old = segment(storage, "yard", NOW - 3 * DAY)
    for ident, start in (("older", NOW - 2 * DAY), ("newer", NOW - 95)):  # each with a clip of 500 bytes
        clip = storage.folder / "clips" / "gate" / f"{ident}.mp4"
        clip.parent.mkdir(parents=True, exist_ok=True)
        clip.write_bytes(b"\0" * 500)
        storage.record([event("new", ident, start, camera="gate")])
        storage.attach(ident, clip=clip)
    assert storage.flush()
    storage.prune()  # 6000 bytes: the yard's segment, the older event, the gate's first segment go
    assert storage.segments("yard") == [] and storage.segments("gate") == rows[1:]
    assert not (storage.folder / old.path).exists()
    assert storage.store.get("older") is None and storage.store.get("newer") is not None


def test_each_camera_keeps_its_segments_as_its_mode_says(make):
    storage = make(max_days=30)
    storage.retain("front", Retain(7, 7))  # continuous
    storage.retain("back", Retain(7, 1))  # motion
    front = [segment(storage, "front", NOW - d * DAY) for d in (8, 2)]
    back = [segment(storage, "back", NOW - d * DAY, motion=m, objects=o)
            for d, m, o in ((8, True, 0), (2, False, 0), (2.1, True, 0), (2.2, False, 3), (0.5, False, 0))]
    other = [segment(storage, "gone", NOW - d * DAY) for d in (31, 20)]  # no rule: [storage] max_days
    storage.prune()
    assert storage.segments("front") == front[1:]
    assert storage.segments("back") == sorted([back[2], back[3], back[4]], key=lambda s: s.start)
    assert storage.segments("gone") == other[1:]


def test_a_segment_being_written_is_never_removed(make):
    storage = make(max_bytes=1)
    rows = [segment(storage, "gate", NOW - 60 + 10 * i) for i in range(2)]
    storage.watch(busy=lambda: {storage.folder / rows[1].path})
    storage.prune()
    assert storage.segments("gate") == [rows[1]] and (storage.folder / rows[1].path).exists()


def test_a_segment_begun_during_a_pass_is_never_removed(make):
    storage = make(max_bytes=1)
    old = segment(storage, "gate", NOW - 60)
    begun: list[Segment] = []

    def writing():  # a camera that begins a segment right after the pass first asks what is being written
        if not begun:
            begun.append(segment(storage, "gate", NOW))
            return set()
        return {storage.folder / begun[0].path}

    storage.watch(busy=writing)
    storage.prune()
    assert storage.segments("gate") == begun and (storage.folder / begun[0].path).exists()
    assert not (storage.folder / old.path).exists()
