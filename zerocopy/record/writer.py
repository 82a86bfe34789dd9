"""A camera's clip writer: requests queued by the detection side, each written on the writer's own thread once
its record stream has reached the end asked for, into `<storage>/clips/<camera>/<event id>.mp4`.

A request waits until the ring holds `last_seen + post_s` (or the record stream stopped, or it has lagged
`lag_s` seconds past that); then its clip is cut from the ring and written (`clip.write_clip`), or, for a camera
that writes segments, made from the segments once they reach that time (`segment_clips.SegmentClips`); then
`on_done(event_id,
ClipResult or None)` is called on the writer's thread. A disk that is full (less than `min_free_bytes` free, or
ENOSPC while writing) stops writing clips, said in one line and shown by `disk_full` (for a /metrics gauge),
until space is free again; nothing is ever raised into detection. `busy_paths()` are the files being written
(a retention pass must leave them alone). The folders are made 0700, the clips 0600 (`clip.remux`).
"""

from __future__ import annotations

import errno
import heapq
import itertools
import os
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from zerocopy.errors import ZeroCopyError
from zerocopy.record.clip import MIN_FREE_BYTES, ClipResult, write_clip
from zerocopy.record.ring import PacketRing
from zerocopy.record.segment_clips import SegmentClips
from zerocopy.sinks.files import final_path, temporary
from zerocopy.store.folder import FILE_NAME, open_private_dir

RESUME_BYTES = 64 * 2**20  # after a write failed for want of space, clips resume once this much more is free
LAG_S = 20.0  # how long past `last_seen + post_s` a clip waits for a record stream that lags behind detection
POLL_S = 0.5  # the longest the writer sleeps between looks at the clock

OnDone = Callable[[str, ClipResult | None], None]


@dataclass(order=True, kw_only=True)
class _Request:
    due: float  # last_seen + post_s: the wall time the ring must reach
    order: int
    event_id: str = field(compare=False)
    first_seen: float = field(compare=False)
    last_seen: float = field(compare=False)
    on_done: OnDone = field(compare=False)


class ClipWriter:
    """Writes `ring`'s clips into `folder` (`<storage>/clips/<camera>`), or with `segments` the clips made from the
    camera's segments. `recording()` tells whether the record stream is delivering now (a request is not waited for
    when it is not)."""

    def __init__(self, ring: PacketRing, folder: str | Path, say: Callable[[str], None], *, camera: str,
                 pre_s: float = 5.0, post_s: float = 5.0, recording: Callable[[], bool] = lambda: True,
                 min_free_bytes: int = MIN_FREE_BYTES, lag_s: float = LAG_S, clock: Callable[[], float] = time.time,
                 segments: SegmentClips | None = None):
        self.ring, self.folder, self.say, self.camera = ring, Path(folder), say, camera
        self.segments = segments
        self.pre_s, self.post_s, self.recording = pre_s, post_s, recording
        self.min_free_bytes, self.lag_s, self.clock = min_free_bytes, lag_s, clock
        self.disk_full = False
        self._resume_at = 0  # free bytes needed besides min_free_bytes before clips resume (after an ENOSPC)
        self.written = self.failed = 0  # clips written, and requests that gave none
        self.last_error: str | None = None
        self._lock = threading.Lock()
        self._queue: list[_Request] = []
        self._order = itertools.count()
        self._busy: set[Path] = set()
        self._said: set[str] = set()  # the kinds of failure said so far (each once)
        self._stopping = threading.Event()
        self._wake = threading.Event()  # a request came, or close(): the idle writer need not watch the ring
        self._deadline = float("inf")  # monotonic time after which a stopping writer writes nothing more
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"zc-clips-{self.camera}", daemon=True)
        self._thread.start()

    def request(self, event_id: str, first_seen_wall: float, last_seen_wall: float, on_done: OnDone) -> None:
        """Queue the clip of an object seen from `first_seen_wall` to `last_seen_wall` (Unix times); `on_done` is
        called later, on the writer's thread, with the `ClipResult` or None. Never raises."""
        if not FILE_NAME.fullmatch(event_id) or self._stopping.is_set():
            why = "stopping" if self._stopping.is_set() else f"{event_id!r} cannot be a file name"
            self._give_up(_Request(due=0.0, order=0, event_id=event_id, first_seen=first_seen_wall,
                                   last_seen=last_seen_wall, on_done=on_done), "request", why)
            return
        with self._lock:
            heapq.heappush(self._queue, _Request(due=last_seen_wall + self.post_s, order=next(self._order),
                                                 event_id=event_id, first_seen=first_seen_wall,
                                                 last_seen=last_seen_wall, on_done=on_done))
        self._wake.set()
        self.ring.poke()

    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def busy_paths(self) -> set[Path]:
        """The files being written now (a clip and its temporary): never to be removed."""
        with self._lock:
            return set(self._busy)

    def close(self, timeout: float = 1.0) -> bool:
        """Write what is queued with what the ring holds now, for at most `timeout` s (the rest get None); True
        if the writer's thread ended in time."""
        self._deadline = time.monotonic() + timeout
        self._stopping.set()
        self._wake.set()
        self.ring.poke()
        if self._thread is None:
            self._drain()
            return True
        self._thread.join(timeout + 0.5)
        return not self._thread.is_alive()

    # --- the writer's thread ------------------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            request = self._next()
            if request is None:
                break
            if time.monotonic() > self._deadline:
                self._give_up(request, "stop", "serve stopped before it was written")
            else:
                self._write(request)
        self._drain()

    def _next(self) -> _Request | None:
        """The queued request whose time has come (the earliest first), or None when stopping with none left. The
        ring is watched (woken at every packet) only while a request waits."""
        while True:
            with self._lock:
                idle = not self._queue
            if idle and not self._stopping.is_set():
                self._wake.wait(POLL_S)
                self._wake.clear()
                continue
            ready = self.ring.wait_until(self._ready, POLL_S)
            with self._lock:
                if ready and self._queue:
                    return heapq.heappop(self._queue)
                if self._stopping.is_set() and not self._queue:
                    return None

    def _ready(self, newest: float | None, going_on: bool) -> bool:
        """(Under the ring's lock.) Whether the earliest request can be written now."""
        with self._lock:
            if not self._queue:
                return self._stopping.is_set()
            due = self._queue[0].due
        if self.segments is not None:
            newest = self.segments.through() or None
        return (self._stopping.is_set() or (newest is not None and newest >= due) or not going_on
                or not self.recording() or self.clock() >= due + self.lag_s)

    def _drain(self) -> None:
        with self._lock:
            left, self._queue = self._queue, []
        for request in left:
            self._give_up(request, "stop", "serve stopped before it was written")

    def _write(self, request: _Request) -> None:
        path = self.folder / f"{request.event_id}.mp4"
        try:
            os.close(open_private_dir(self.folder))  # made 0700; a link in its place refused (ELOOP), never followed
            if not self._room():
                self._give_up(request, "full", "the disk is full")
                return
            busy = {final_path(path), temporary(path)}
            with self._lock:
                self._busy |= busy
            try:
                times = (request.first_seen, request.last_seen, self.pre_s, self.post_s, path)
                result = write_clip(self.ring, *times) if self.segments is None else self.segments.write(*times)
            finally:
                with self._lock:
                    self._busy -= busy
        except OSError as e:
            if e.errno == errno.ENOSPC:
                self._resume_at = self._free() + RESUME_BYTES  # not at the next request: it would fail again
                self._full(f"no space left on device while writing {request.event_id}")
            self._give_up(request, f"os-{e.errno}", f"cannot write {path}: {e.strerror or e}")
            return
        except ZeroCopyError as e:  # nothing of that time in the ring, a codec MP4 cannot hold
            self._give_up(request, type(e).__name__, str(e))
            return
        except Exception as e:  # a bug: said, and the writer goes on with the next clip
            self._give_up(request, "internal", f"internal error: {type(e).__name__}: {e}")
            return
        self.written += 1
        self._said.clear()  # a later failure is said again
        self._done(request, result)

    def _free(self) -> int:
        try:
            return shutil.disk_usage(self.folder).free
        except OSError:
            return 0

    def _room(self) -> bool:
        """Whether the clips' disk has room (said when that changes)."""
        free, needed = self._free(), max(self.min_free_bytes, self._resume_at)
        if free < needed:
            self._full(f"{free / 2**20:.0f} MB free, less than the {needed / 2**20:.0f} MB kept free")
        elif self.disk_full:
            self.disk_full, self._resume_at = False, 0
            self._said.discard("full")
            self.say(f"camera {self.camera}: clips: {self.folder} has room again ({free / 2**20:.0f} MB free); "
                     "clips are written again")
        return not self.disk_full

    def _full(self, why: str) -> None:
        if not self.disk_full:
            self.disk_full = True
            self.say(f"camera {self.camera}: clips: the disk of {self.folder} is full ({why}): no clip is written "
                     "until space is freed; detection goes on")

    def _give_up(self, request: _Request, kind: str, why: str) -> None:
        """No clip for `request` (said once per kind of failure; a full disk was said already)."""
        self.failed += 1
        self.last_error = f"{request.event_id}: {why}"
        if kind not in self._said and kind != "full" and not self.disk_full:
            self._said.add(kind)
            self.say(f"camera {self.camera}: clips: no clip for event {request.event_id}: {why}")
        self._done(request, None)

    def _done(self, request: _Request, result: ClipResult | None) -> None:
        try:
            request.on_done(request.event_id, result)
        except Exception as e:  # the caller's: said, and the writer goes on
            self.say(f"camera {self.camera}: clips: on_done({request.event_id}) failed: {type(e).__name__}: {e}")
