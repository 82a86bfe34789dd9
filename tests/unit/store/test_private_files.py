"""Everything in serve's storage folder is private whatever the umask (issue 36): the folders 0700, the database and
its -wal and -shm, the snapshots, thumbnails and clips 0600, after a real store, snapshot and clip write under umask
022; what an earlier version left readable made private at start. A snapshot's temporary is never written through
a link: a planted one is removed, never followed, and a camera folder that is a link is refused."""

import os
import stat

import numpy as np
import pytest
from objectevents import T0
from objectevents import object_event as event
from recordings import Done, fill_ring, gop_spec

from zerocopy.record.camera import clips_folder
from zerocopy.record.ring import PacketRing
from zerocopy.record.writer import ClipWriter
from zerocopy.snapshots.writer import Job, SnapshotWriter, Still
from zerocopy.store.storage import Storage


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def job(event_id: str = "1795000000.5-abc123") -> Job:
    still = Still.of(np.full((90, 160, 3), 128, np.uint8))
    return Job(event_id=event_id, label="person", score=0.9, still=still, box=(40.0, 20.0, 80.0, 70.0), final=True)


def modes(folder) -> dict[str, int]:
    """Every folder's and file's permission bits under `folder` (itself as '.'), by relative path."""
    found = {".": stat.S_IMODE(os.lstat(folder).st_mode)}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(root, name)
            found[os.path.relpath(path, folder)] = stat.S_IMODE(os.lstat(path).st_mode)
    return found


def snapshot(folder, event_id: str = "1795000000.5-abc123") -> SnapshotWriter:
    """A snapshot written by a camera's writer into `folder` (then closed)."""
    said: list[str] = []
    writer = SnapshotWriter(folder, on_written=lambda w: None, say=said.append, name="front")
    assert writer.submit(job(event_id)) and writer.flush()
    writer.close()
    return writer


def test_a_real_store_snapshot_and_clip_are_private_under_umask_022(tmp_path, clips, umask_022):
    source = clips("record-gop.ts", gop_spec(3.0), "mpegts")[0]
    folder = tmp_path / "store"
    storage = Storage(folder, max_bytes=10**9, max_days=10, say=print)
    try:
        storage.record([event("new", "ev")])
        assert storage.flush()
        snapshot(folder / "snapshots" / "front", "ev")
        ring, done = PacketRing(10**8), Done()
        fill_ring(ring, source, T0)
        writer = ClipWriter(ring, clips_folder(folder, "front"), print, camera="front", clock=lambda: T0,
                            min_free_bytes=0, pre_s=0.5, post_s=0.5)
        writer.start()
        writer.request("ev", T0 + 1.0, T0 + 1.5, done)
        assert done.get()[1] is not None and writer.close()
        found = modes(folder)
    finally:
        storage.close()
    assert {"events.db", "events.db-wal", "events.db-shm", "snapshots/front/ev.jpg", "snapshots/front/ev-thumb.jpg",
            "clips/front/ev.mp4"} <= set(found)
    assert {path: mode for path, mode in found.items() if mode != (0o700 if (folder / path).is_dir() else 0o600)} == {}


def test_what_an_earlier_version_left_readable_is_made_private_at_start(tmp_path, umask_022):
    folder = tmp_path / "store"
    (folder / "clips" / "front").mkdir(parents=True)  # 0755 under umask 022
    (folder / "clips" / "front" / "old.mp4").write_bytes(b"m" * 10)  # 0644
    Storage(folder, max_bytes=10**9, max_days=10, say=print).close()
    os.chmod(folder / "events.db", 0o644)
    storage = Storage(folder, max_bytes=10**9, max_days=10, say=print)
    try:
        assert modes(folder) == {".": 0o700, "events.db": 0o600, "events.db-wal": 0o600, "events.db-shm": 0o600,
                                 "clips": 0o700, "clips/front": 0o700, "clips/front/old.mp4": 0o600}
    finally:
        storage.close()


def test_a_snapshots_temporary_is_never_written_through_a_link(tmp_path):
    folder = tmp_path / "snapshots" / "front"
    folder.mkdir(parents=True)
    victim = tmp_path / "victim"
    victim.write_bytes(b"not to be written")
    (folder / "ev.jpg.part").symlink_to(victim)  # planted where the snapshot's temporary goes
    (folder / "ev-thumb.jpg.part").symlink_to(tmp_path / "made-through-a-link")  # a dangling one
    writer = snapshot(folder, "ev")
    assert victim.read_bytes() == b"not to be written" and not (tmp_path / "made-through-a-link").exists()
    assert writer.written == 1 and writer.failed == 0
    for name in ("ev.jpg", "ev-thumb.jpg"):
        assert not (folder / name).is_symlink() and (folder / name).read_bytes()[:2] == b"\xff\xd8"
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600
    assert sorted(p.name for p in folder.iterdir()) == ["ev-thumb.jpg", "ev.jpg"]  # no temporary left


def test_a_camera_folder_that_is_a_link_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "snapshots").mkdir()
    (tmp_path / "snapshots" / "back").symlink_to(elsewhere, target_is_directory=True)
    writer = snapshot(tmp_path / "snapshots" / "back", "ev")
    assert writer.failed == 1 and list(elsewhere.iterdir()) == []


def test_a_clips_camera_folder_that_is_a_link_is_refused(tmp_path, clips):
    """As for snapshots: a clip is never written through a link in the camera's place (issue 36's review)."""
    source = clips("record-gop.ts", gop_spec(3.0), "mpegts")[0]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "store" / "clips").mkdir(parents=True)
    (tmp_path / "store" / "clips" / "front").symlink_to(elsewhere, target_is_directory=True)
    ring, done, said = PacketRing(10**8), Done(), []
    fill_ring(ring, source, T0)
    writer = ClipWriter(ring, clips_folder(tmp_path / "store", "front"), said.append, camera="front",
                        clock=lambda: T0, min_free_bytes=0, pre_s=0.5, post_s=0.5)
    writer.start()
    writer.request("ev", T0 + 1.0, T0 + 1.5, done)
    assert done.get()[1] is None and writer.close()
    assert list(elsewhere.iterdir()) == [] and said, said
