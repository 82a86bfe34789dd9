"""An event's clip made from its camera's segments, for a camera that records continuously or on motion
(docs/serve.md, *Clips*): the part of its segments from the keyframe at or before `pre_capture` before the object's
first sighting to `post_capture` after its last, exported from them as an export is (`export.write_export`: the
packets remuxed, never decoded) into the clip's place, under a temporary name renamed once whole, as a clip cut
from the ring is. It is written once the segments on disk have reached that end (`through()`).

The segments' rows are the ones the camera's `SegmentWriter` gives its index (`index` passes them on), kept here for
`KEPT_S` after their end: no database read stands between an event and its clip. The segments a clip reads are busy
(`busy_paths()`) while it does: retention leaves them."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

from zerocopy.record.clip import ClipResult
from zerocopy.record.export import write_export
from zerocopy.record.ring import NoFootage
from zerocopy.record.segments import Index, SegmentWriter
from zerocopy.sinks.files import Staged
from zerocopy.store.folder import PRIVATE_FILE, StorageFolder
from zerocopy.store.segments import Segment

KEPT_S = 3600.0  # the rows of the segments that ended in the last hour are kept: a clip reaches back that far


class SegmentClips:
    """The clips of a camera whose segments are written under `storage` and indexed by `index`. Give its `index`
    to the camera's `SegmentWriter`, then set `writer` to that writer."""

    def __init__(self, storage: str | Path, index: Index):
        self.files = StorageFolder(storage)
        self.writer: SegmentWriter | None = None
        self._index = index
        self._lock = threading.Lock()
        self._rows: dict[str, Segment] = {}  # by path, in the order they began
        self._reading: set[Path] = set()

    def index(self, row: Segment) -> object:
        """A segment's row, as the writer gives it: kept (the newest account of each file), then indexed."""
        with self._lock:
            self._rows[row.path] = row
            for path in [p for p, r in self._rows.items() if r.end < row.end - KEPT_S]:
                del self._rows[path]
        return self._index(row)

    def through(self) -> float:
        """The time (Unix) up to which the segments on disk are whole and readable."""
        return self.writer.written_through if self.writer is not None else 0.0

    def covering(self, start: float, end: float) -> list[Segment]:
        """The kept rows that overlap `start`…`end`, oldest first."""
        with self._lock:
            rows = [r for r in self._rows.values() if r.end >= start and r.start <= end]
        return sorted(rows, key=lambda r: r.start)

    def busy_paths(self) -> set[Path]:
        """The segments being read for a clip now."""
        with self._lock:
            return set(self._reading)

    def write(self, first_seen: float, last_seen: float, pre_s: float, post_s: float, path: str | Path) -> ClipResult:
        """The clip of an object seen from `first_seen` to `last_seen` (Unix times), `pre_s` before (from the keyframe
        at or before) to `post_s` after, written to `path`. Raises `NoFootage` (no segment holds that time), `ClipError`
        or `OSError` (nothing is left at `path` or under the temporary name)."""
        start, end = first_seen - pre_s, last_seen + post_s
        rows = self.covering(start, end)
        if not rows:
            raise NoFootage("no segment holds that time")
        reading = {self.files.path / r.path for r in rows}
        with self._lock:
            self._reading |= reading
        staged = Staged(path)
        try:
            name = staged.ffmpeg_name()
            Path(name).chmod(PRIVATE_FILE)  # (`/proc/self/fd/N`: the very file made)
            result = write_export(self.files, rows, start, end, name)
        except BaseException:
            staged.discard()
            raise
        finally:
            with self._lock:
                self._reading -= reading
        staged.finish(keep=True)
        return replace(result, path=staged.path, bytes=staged.path.stat().st_size)
