"""The events a user deleted (`DELETE /api/events/ID`) since the start, remembered so that what comes for one
afterwards does not bring it back: its later object events (an object still in view) are dropped before they are
queued, and a file attached to it afterwards (a clip being written when it was deleted) is removed instead. The
deletion itself runs on the storage's thread (`Storage.delete`), after what was queued before it."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from zerocopy.store.folder import PathRefused, StorageFolder
from zerocopy.track import ObjectEvent

KEPT = 10_000  # deleted ids remembered (the oldest forgotten first: an object in view that long is rare)


class Deletions:
    """The deleted ids (thread-safe); `files`: the storage folder, `refuse`: where a path refused is counted."""

    def __init__(self, files: StorageFolder, refuse: Callable[[PathRefused], None]):
        self.files, self.refuse = files, refuse
        self._ids: dict[str, None] = {}  # (in the order deleted)
        self._lock = threading.Lock()

    def add(self, event_id: str) -> None:
        with self._lock:
            self._ids[event_id] = None
            while len(self._ids) > KEPT:
                del self._ids[next(iter(self._ids))]

    def __contains__(self, event_id: object) -> bool:
        with self._lock:
            return event_id in self._ids

    def kept(self, events: Iterable[ObjectEvent]) -> list[ObjectEvent]:
        """`events` but those of a deleted event."""
        with self._lock:
            return [e for e in events if e.id not in self._ids]

    def discard(self, event_id: str, files: Iterable[str | Path | None]) -> bool:
        """True if `event_id` was deleted: `files` (complete, attached to it too late) are removed then."""
        if event_id not in self:
            return False
        for path in self.files.inside(os.path.abspath(p) for p in files if p is not None):
            try:
                self.files.remove(path)
            except PathRefused as e:
                self.refuse(e)
            except OSError:  # left: a file no row names, counted (and pruned) from the next start
                continue
        return True
