"""The exports `clip.mp4` answers (`recording_routes`), made on the HTTP server's pool (`record.export`) and kept a
while for the range requests a player sends for the same clip.

An export is written to a new file (0600, never through a link) in the camera's recordings folder, under a
temporary's name (`.export-….zerocopy-PID-X.tmp`: one a kill leaves is removed at the next start, as the clips'
temporaries are), while the segments it reads are held from retention (`Storage.holding`). A finished export whose
footage reached its end and that is at most `KEEP_BYTES` is kept by (camera, start, end) for `KEEP_S` after its
last request, `KEEP` at most (the least recently asked for removed first); any other is removed as soon as it is
opened for its answer (the open file is sent whole all the same). At most `MAX_BUSY` requests make or wait for an
export at once (the pool's other threads stay free for everything else): another gets `Busy`."""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path

from zerocopy.record.clip import ClipResult
from zerocopy.record.export import write_export
from zerocopy.record.ring import NoFootage
from zerocopy.record.segments import recordings_folder
from zerocopy.sinks.files import fd_name
from zerocopy.store.folder import create_private, open_private_dir
from zerocopy.store.storage import Storage

MAX_BUSY = 2  # requests making (or waiting for) an export at once; the HTTP pool has 4 threads
KEEP = 4  # exports kept for their range requests
KEEP_S = 120.0  # how long one is kept after its last request
KEEP_BYTES = 256 * 2**20  # a larger one is never kept (made again for each request)
RETRY_S = 5  # what a request refused while exports are busy is told to wait
WAIT_S = 1.0  # a request for an export another one is making checks again this often

Key = tuple[str, float, float]


class Busy(Exception):
    """`MAX_BUSY` exports are being made already."""


@dataclass
class _Kept:
    path: Path
    result: ClipResult
    used: float  # time.monotonic() of its last request


class Exports:
    """The exports of `storage`'s recordings: `open(camera, start, end)`."""

    def __init__(self, storage: Storage):
        self.storage = storage
        self._lock = threading.Lock()
        self._busy = 0
        self._kept: OrderedDict[Key, _Kept] = OrderedDict()  # least recently asked for first
        self._making: dict[Key, threading.Event] = {}

    def open(self, camera: str, start: float, end: float) -> tuple[int, ClipResult]:
        """A read-only descriptor of the export of `camera`'s `start`…`end` (the caller's to close) and what it holds:
        the one kept, the one another request is making (waited for), or one made now. Raises `Busy`, `NoFootage`,
        `ClipError`, `StoreUnavailable`, `OSError`."""
        key = (camera, start, end)
        with self._lock:
            self._expire()
            if self._busy >= MAX_BUSY:
                raise Busy
            self._busy += 1
        try:
            while True:
                with self._lock:
                    kept = self._kept.get(key)
                    if kept is not None:  # (opened under the lock: never removed in between)
                        kept.used = time.monotonic()
                        self._kept.move_to_end(key)
                        return os.open(kept.path, os.O_RDONLY | os.O_CLOEXEC), kept.result
                    making = self._making.get(key)
                    if making is None:
                        self._making[key] = threading.Event()
                        break
                making.wait(WAIT_S)
            try:
                path, result = self._make(camera, start, end)
            finally:
                with self._lock:
                    self._making.pop(key).set()
            return self._keep(key, path, result), result
        finally:
            with self._lock:
                self._busy -= 1

    def _make(self, camera: str, start: float, end: float) -> tuple[Path, ClipResult]:
        """The export written to a new file of the camera's recordings folder (removed if it fails)."""
        segments = self.storage.segments(camera, start, end)
        if not segments:
            raise NoFootage(f"no footage between {start:.3f} and {end:.3f}")
        folder = recordings_folder(self.storage.folder, camera)
        name = f".export-{start:.3f}-{end:.3f}.zerocopy-{os.getpid()}-{secrets.token_hex(3)}.tmp"
        dir_fd = open_private_dir(folder)
        try:
            fd = create_private(name, dir_fd)
        finally:
            os.close(dir_fd)
        path = folder / name
        try:
            with self.storage.holding(*(s.path for s in segments)):
                result = write_export(self.storage.files, segments, start, end, fd_name(fd, path))
        except BaseException:
            with contextlib.suppress(OSError):
                path.unlink()
            raise
        finally:
            os.close(fd)
        return path, replace(result, path=path)

    def _keep(self, key: Key, path: Path, result: ClipResult) -> int:
        """A descriptor of the export at `path`; the file kept for the next requests, or removed now."""
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        if result.early_end or result.bytes > KEEP_BYTES:
            with contextlib.suppress(OSError):
                path.unlink()
            return fd
        with self._lock:
            self._kept[key] = _Kept(path, result, time.monotonic())
            while len(self._kept) > KEEP:
                _remove(self._kept.popitem(last=False)[1])
        return fd

    def _expire(self) -> None:
        """(under the lock) The exports not asked for in `KEEP_S` removed."""
        now = time.monotonic()
        for key in [k for k, kept in self._kept.items() if now - kept.used > KEEP_S]:
            _remove(self._kept.pop(key))


def _remove(kept: _Kept) -> None:
    with contextlib.suppress(OSError):
        kept.path.unlink()


_OF: weakref.WeakKeyDictionary[Storage, Exports] = weakref.WeakKeyDictionary()
_OF_LOCK = threading.Lock()


def exports_of(storage: Storage) -> Exports:
    """The exports of `storage` (one `Exports` for each storage, made at its first export)."""
    with _OF_LOCK:
        found = _OF.get(storage)
        if found is None:
            found = _OF[storage] = Exports(storage)
        return found
