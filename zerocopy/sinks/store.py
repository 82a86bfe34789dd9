"""serve's event store as a sink: each tracked object's events (`track.ObjectEvent`) to its row
(`store.storage.Storage.record`, which never blocks the run), and the files of its snapshots
(`snapshots.stage.SnapshotSaved`). Other records (line crossings, retained counts) are not rows. The storage
outlives the sink: its owner (the engine) closes it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zerocopy.sinks import NullSink
from zerocopy.snapshots.stage import SnapshotSaved
from zerocopy.store.storage import Storage
from zerocopy.track import ObjectEvent


class StoreSink(NullSink):
    def __init__(self, storage: Storage):
        self.storage = storage

    def on_events(self, events: Sequence[Any], input: int = 0) -> None:
        self.storage.record([e for e in events if isinstance(e, ObjectEvent)])
        for saved in (e for e in events if isinstance(e, SnapshotSaved)):  # its files, on its object's row
            self.storage.attach(saved.id, snapshot=saved.snapshot, thumbnail=saved.thumbnail)
