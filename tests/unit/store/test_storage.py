"""zerocopy.store.storage and sinks/store.py on a real folder: object events written on the storage's own thread
(and nothing else: crossings and counts are not rows), files attached after them, retention run by that thread
(busy files kept, whether marked with `writing` or watched), the disk-full flag said and shown, the metrics."""

import time

import pytest
from conftest import wait_until
from objectevents import T0
from objectevents import object_event as event
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from zerocopy.analytics.records import LineCrossing, Occupancy
from zerocopy.sinks.store import StoreSink
from zerocopy.store.metrics import storage_metrics
from zerocopy.store.storage import Storage


@pytest.fixture
def said():
    return []


@pytest.fixture
def storage(tmp_path, said):
    storage = Storage(tmp_path / "store", max_bytes=10**9, max_days=1e6, say=said.append)
    yield storage
    storage.close()


def test_the_sink_keeps_object_events_only(storage):
    crossing = LineCrossing(id="a", tracker_id=1, node="box1", camera="front", source="s", line="gate",
                            direction="in", label="person", frame_time=T0, pts=0.0, box=(0, 0, 1, 1))
    count = Occupancy(camera="front", zone=None, label="person", count=1, frame_time=T0)
    sink = StoreSink(storage)
    sink.on_events([event("new", "a"), crossing, count], input=0)
    sink.on_events([event("end", "a", end=T0 + 4)], input=0)
    sink.close()  # the storage outlives its sink
    assert storage.flush()
    row, = storage.store.query()
    assert (row.id, row.end_time) == ("a", T0 + 4)
    assert (storage.folder / "events.db").exists()


def test_files_attached_right_after_their_event_reach_its_row(storage):
    clip = storage.folder / "a.mp4"
    clip.write_bytes(b"c" * 2048)
    storage.record([event("new", "a")])
    storage.attach("a", clip=clip)  # queued behind the event: never "no such event"
    assert storage.flush()
    assert storage.store.get("a").clip == "a.mp4"  # relative to the folder
    assert storage.stats().file_bytes == 2048


def test_retention_runs_on_the_storages_thread_and_keeps_busy_files(tmp_path, said):
    storage = Storage(tmp_path / "store", max_bytes=10**9, max_days=1.0, say=said.append, prune_every=0.05)
    clips = [tmp_path / "store" / f"c{i}.mp4" for i in range(4)]
    watched: set = {clips[1], clips[2]}
    storage.watch(busy=lambda: set(watched))
    try:
        for i, clip in enumerate(clips):
            clip.write_bytes(b"x" * 100)
            storage.record([event("end", f"old{i}", time.time() - 3 * 86400, end=time.time() - 3 * 86400)])
            storage.attach(f"old{i}", clip=clip)
        storage.record([event("new", "recent", time.time())])
        wait_until(lambda: storage.stats().removed == 2, 30, "the two old events that are not busy removed")
        assert sorted(e.id for e in storage.store.query()) == ["old1", "old2", "recent"]
        assert [c.exists() for c in clips] == [False, True, True, False]
        watched.clear()
        wait_until(lambda: storage.stats().removed == 4, 30, "the others removed once written")
        assert [e.id for e in storage.store.query()] == ["recent"] and not any(c.exists() for c in clips)
    finally:
        storage.close()
    assert said == []


def test_recording_stopped_by_a_full_disk_is_shown(storage):
    full = [False]
    storage.watch(disk_full=lambda: full[0])  # a clip writer's own flag
    assert not storage.stats().recording_stopped
    full[0] = True
    assert storage.stats().recording_stopped
    full[0] = False
    assert not storage.stats().recording_stopped


def test_the_metrics(storage):
    clip = storage.folder / "a.mp4"
    clip.write_bytes(b"c" * 500)
    storage.record([event("new", "a"), event("new", "b", T0 + 1)])
    storage.attach("b", clip=clip)
    storage.watch(disk_full=lambda: True)  # a clip writer's flag
    assert storage.flush()

    class Collector:
        def collect(self):
            return storage_metrics(storage.stats())

    registry = CollectorRegistry(auto_describe=False)
    registry.register(Collector())
    samples = {(s.name, tuple(s.labels.items())): s.value
               for family in text_string_to_metric_families(generate_latest(registry).decode()) for s in family.samples}
    assert samples[("zerocopy_storage_bytes", (("kind", "files"),))] == 500
    assert samples[("zerocopy_storage_bytes", (("kind", "database"),))] > 0
    assert samples[("zerocopy_storage_events", ())] == 2
    assert samples[("zerocopy_storage_limit_bytes", ())] == 10**9
    assert samples[("zerocopy_storage_recording_stopped", ())] == 1
    assert samples[("zerocopy_storage_available", ())] == 1
    assert samples[("zerocopy_storage_unnamed_files", ())] == 0
    for counter in ("write_errors", "dropped", "removed", "refused", "damaged_rows"):
        assert samples[(f"zerocopy_storage_{counter}_total", ())] == 0


def test_close_writes_what_is_queued(tmp_path):
    storage = Storage(tmp_path, max_bytes=10**9, max_days=10, say=print)
    storage.record([event("new", f"e{i}", T0 + i) for i in range(200)])
    storage.close()
    storage = Storage(tmp_path, max_bytes=10**9, max_days=1e6, say=print)
    assert storage.store.totals() == (200, 0)
    storage.close()
