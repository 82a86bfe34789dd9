"""A camera's continuous recording (issue 38; docs/serve.md, *Recording*): its ring's packets, followed as they come
(`PacketRing.follow`) on a thread of the camera's own, remuxed without decoding into segments of about `SEGMENT_S`
seconds, each starting on a keyframe, under `<storage>/recordings/<camera>/<YYYY-MM-DD>/<HH-MM-SS>.mp4` (UTC, its
start).

A segment is a fragmented MP4 (its index first and empty, then a fragment at each keyframe and at least every
`FRAGMENT_S`, each flushed to the file as it is made): a writer killed (or a power cut, once the system has written
its cache) leaves a file that plays up to its last fragment. It is written in place, never renamed (a temporary would
be what a kill leaves), made new (`O_CREAT|O_EXCL|O_NOFOLLOW`, 0600) in folders made 0700. A reconnection, a break in
the ring's stream (`ring.py`'s segments) or packets the writer lost end the file; the next starts at the next
keyframe. The camera's audio, when kept (`record.audio`), goes into the segment beside its video, from its first
keyframe on (its index then written with the first fragment). A segment's start and end are wall times (Unix) by the
stream's own clock anchored at its packets' arrival (`_time`). Each segment is indexed (`index(Segment)`) when it is
made and again at least every `UPDATE_S` while it grows and at its end (its end, its bytes, and from `activity`
whether there was motion and how many objects were seen), and once more `LATE_S` after its end, for detection's
records that came after it. A disk with less than `min_free_bytes` free stops the recording (said once, `disk_full`)
until there is room again."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import av

from zerocopy.record.activity import Activity
from zerocopy.record.audio import add_audio_stream, audio_base, mux_audio
from zerocopy.record.clip import MIN_FREE_BYTES, add_stream, mux
from zerocopy.record.ring import PacketRing, RecordedPacket, StreamParams
from zerocopy.sinks.files import fd_name
from zerocopy.store.folder import create_private, open_private_dir
from zerocopy.store.segments import Segment

SEGMENT_S = 10.0  # a segment ends at the first keyframe this long after its start
FRAGMENT_S = 1.0  # a fragment at least this often (and at each keyframe): what a kill can lose
UPDATE_S = 2.0  # a growing segment's row is brought up to date this often
LATE_S = 3.0  # a finished segment's motion and objects are asked again this long after its end
REANCHOR_S = 2.0  # a packet arriving this much later than its stream's clock says anchors the clock again
IDLE_S = 5.0  # no packet for this long (the stream dropped): the segment ends
POLL_S = 0.5
SEGMENT_OPTIONS = {"movflags": "frag_keyframe+empty_moov+default_base_moof",
                   "frag_duration": str(int(FRAGMENT_S * 1e6)), "flush_packets": "1"}

Index = Callable[[Segment], object]


def recordings_folder(storage: str | Path, camera: str) -> Path:
    """Where a camera's segments go: `<storage>/recordings/<camera>`."""
    return Path(storage) / "recordings" / camera


@dataclass(kw_only=True)
class _Open:
    """The segment being written."""

    out: Any
    stream: Any
    params: StreamParams
    ring_segment: int
    base: int  # its first packet's pts (a keyframe's)
    fd: int  # the file made, held open while FFmpeg writes it by `/proc/self/fd/N` (it opens at the first packet)
    path: Path
    row: Segment
    written: float = field(default_factory=time.monotonic)  # when its row was last put
    packets: int = 0
    leading: bool = True  # in its first GOP, where pictures shown before its keyframe are left out
    sound: Any = None  # its audio stream (None: no audio)
    sounds: int = 0  # audio packets written
    key_at: float | None = None  # its last keyframe's time, until an audio packet as late lets it out (`_take_audio`)


class SegmentWriter:
    """Writes `ring`'s packets into segments under `recordings_folder(storage, camera)`, indexing each with
    `index` (a row's `path` relative to `storage`). `start()`, `close()`; nothing raises into the caller."""

    def __init__(self, ring: PacketRing, storage: str | Path, camera: str, say: Callable[[str], None], *,
                 index: Index = lambda s: None, activity: Activity | None = None, segment_s: float = SEGMENT_S,
                 min_free_bytes: int = MIN_FREE_BYTES, clock: Callable[[], float] = time.time):
        self.ring, self.storage, self.camera, self.say = ring, Path(storage), camera, say
        self.folder = recordings_folder(storage, camera)
        self.index, self.activity, self.segment_s = index, activity or Activity(), segment_s
        self.min_free_bytes, self.clock = min_free_bytes, clock
        self.segments = self.failed = 0  # segments begun; segments that could not be made or were cut by an error
        self.last_error: str | None = None
        self.disk_full = False
        self.written_through = 0.0  # the time (Unix) up to which the segments on disk are whole (`_take`, `_finish`)
        self._current: _Open | None = None
        self._late: list[tuple[float, Segment]] = []  # (when to ask again, the finished segment)
        self._anchor: tuple[int, float, int] | None = None  # (ring segment, wall, dts): `_time`
        self._ticks: dict[int, float] = {}  # a ring segment's time base, in seconds
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"zc-segments-{self.camera}", daemon=True)
        self._thread.start()

    def close(self, timeout: float = 1.0) -> bool:
        """Write what the ring holds, end the segment (its last fragment and row); True if the thread ended."""
        self._stopping.set()
        self.ring.poke()
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    def busy_paths(self) -> set[Path]:
        """The segment being written (never to be removed)."""
        with self._lock:
            return {self._current.path} if self._current is not None else set()

    # --- the writer's thread ------------------------------------------------------------------------------------
    def _run(self) -> None:
        cursor, last_packet = 0, time.monotonic()
        try:
            while True:
                stopping = self._stopping.is_set()
                followed = self.ring.follow(cursor, 0.0 if stopping else POLL_S, audio=True)
                cursor = followed.cursor
                if followed.lost:
                    self._finish()
                for packet in followed.packets:
                    self._take(packet)
                if followed.packets:
                    last_packet = time.monotonic()
                elif time.monotonic() - last_packet > IDLE_S:
                    self._finish()
                self._refresh()
                if stopping:
                    break
        except Exception as e:  # a bug: said, and this camera's recording stops (detection goes on)
            self._error("internal", f"stopped: internal error: {type(e).__name__}: {e}")
        finally:
            self._finish()
            for _, segment in self._late:
                self._put(segment)

    def _time(self, packet: RecordedPacket) -> float:
        """The packet's wall time by its stream's clock, anchored at the earliest arrival for its timestamp seen so
        far (the first packet of a stream; again whenever a packet comes earlier than the clock says, and whenever it
        comes later by more than `REANCHOR_S`): arrivals come late in bursts (FFmpeg's probe at an opening, a stall),
        never early, timestamps do not, so the clock keeps to real arrival (the segment being written moved back with
        it) and segments that follow each other meet without gap or overlap."""
        tick = self._ticks.get(packet.segment)
        if tick is None:
            params = self.ring.params_of(packet.segment)
            tick = self._ticks[packet.segment] = float(params.time_base) if params is not None else 0.0
        anchor = self._anchor
        at = anchor[1] + (packet.dts - anchor[2]) * tick if anchor is not None and anchor[0] == packet.segment \
            else None
        if at is not None and at > packet.wall:  # the clock was late: so was the segment's start
            current = self._current
            if current is not None and current.ring_segment == packet.segment:
                current.row = replace(current.row, start=current.row.start - (at - packet.wall))
        if at is None or at > packet.wall or packet.wall - at > REANCHOR_S:
            self._anchor, at = (packet.segment, packet.wall, packet.dts), packet.wall
        return at

    def _take(self, packet: RecordedPacket) -> None:
        if packet.audio:
            self._take_audio(packet)
            return
        current = self._current
        at = self._time(packet)
        if current is not None and (packet.segment != current.ring_segment or (
                packet.keyframe and at - current.row.start >= self.segment_s)):
            self._finish()
            current = None
        if current is None:
            if not packet.keyframe or not self._room():
                return
            current = self._begin(packet, at)
            if current is None:
                return
        elif packet.keyframe:
            current.leading = False
        if current.leading and packet.pts < current.base:
            return  # a leading picture of the first GOP (an open GOP's): it would need the GOP before
        try:
            mux(current.out, current.stream, current.params, packet, current.base, first=current.packets == 0)
        except (OSError, av.FFmpegError) as e:
            self._failed_write(e)
            return
        current.packets += 1
        if packet.keyframe and current.sound is None:  # (its fragment starts: everything before it is on disk)
            self.written_through = max(self.written_through, at)
        elif packet.keyframe:  # (the muxer holds it until it has audio as late: `_take_audio`)
            current.key_at = at
        tick = float(current.params.time_base)
        current.row = replace(current.row, end=max(current.row.end, at + packet.duration * tick))

    def _take_audio(self, packet: RecordedPacket) -> None:
        """An audio packet into the current segment (none before its first keyframe, nor of another stream)."""
        current = self._current
        if current is None or current.sound is None or packet.segment != current.ring_segment:
            return
        params = current.params
        assert params.audio is not None
        base = audio_base(current.base, params)
        if packet.dts < base:
            return
        try:
            mux_audio(current.out, current.sound, params.audio, packet, base, first=current.sounds == 0)
        except (OSError, av.FFmpegError) as e:
            self._failed_write(e)
            return
        current.sounds += 1
        at = current.row.start + float((packet.dts - base) * params.audio.time_base)
        if current.key_at is not None and at >= current.key_at:
            self.written_through, current.key_at = max(self.written_through, current.key_at), None

    def _begin(self, packet: RecordedPacket, at: float) -> _Open | None:
        params = self.ring.params_of(packet.segment)
        if params is None:
            return None
        day = time.strftime("%Y-%m-%d", time.gmtime(at))
        folder = self.folder / day
        try:
            fd, path = _create(folder, time.strftime("%H-%M-%S", time.gmtime(at)))
        except OSError as e:
            self._failed_write(e)
            return None
        try:
            options = dict(SEGMENT_OPTIONS)
            if params.audio is not None:
                options["movflags"] += "+delay_moov"  # (AAC's config comes with its first packet)
            out = av.open(fd_name(fd, path), "w", format="mp4", options=options)
            try:
                stream = add_stream(out, params)
                sound = add_audio_stream(out, params.audio) if params.audio is not None else None
            except BaseException:
                out.close()
                raise
        except Exception as e:
            os.close(fd)
            with contextlib.suppress(OSError):
                path.unlink()
            self._error("open", f"cannot write a segment: {e}")
            return None
        row = Segment(camera=self.camera, start=at, end=at, path=str(path.relative_to(self.storage)), bytes=0)
        current = _Open(out=out, stream=stream, params=params, ring_segment=packet.segment, base=packet.pts,
                        fd=fd, path=path, row=row, sound=sound)
        with self._lock:
            self._current = current
        self.segments += 1
        self._put(row)
        return current

    def _finish(self) -> None:
        """The current segment ended: its file closed (its last fragment), its row put."""
        current = self._current
        if current is None:
            return
        with contextlib.suppress(OSError, av.FFmpegError):
            current.out.close()
        os.close(current.fd)
        with self._lock:
            self._current = None
        row = self._account(current.row, current.path)
        self._put(row)
        self.written_through = max(self.written_through, row.end)
        self._late.append((time.monotonic() + LATE_S, row))

    def _refresh(self) -> None:
        """The growing segment's row every `UPDATE_S`; finished ones once more `LATE_S` after their end."""
        current, now = self._current, time.monotonic()
        if current is not None and now - current.written >= UPDATE_S:
            current.written = now
            self._put(self._account(current.row, current.path))
        while self._late and self._late[0][0] <= now:
            _, row = self._late.pop(0)
            self._put(self._account(row, None))

    def _account(self, row: Segment, path: Path | None) -> Segment:
        """`row` with its bytes (of `path` now) and what detection saw during it."""
        motion, objects = self.activity.during(row.start, row.end)
        size = row.bytes
        if path is not None:
            with contextlib.suppress(OSError):
                size = path.stat().st_size
        return replace(row, bytes=size, motion=motion, objects=objects)

    def _put(self, row: Segment) -> None:
        try:
            self.index(row)
        except Exception as e:  # the caller's: said once, recording goes on
            self._error("index", f"cannot index a segment: {type(e).__name__}: {e}")

    # --- room and errors ----------------------------------------------------------------------------------------
    def _room(self) -> bool:
        try:
            free = shutil.disk_usage(self.storage).free
        except OSError:
            free = 0
        if free < self.min_free_bytes:
            if not self.disk_full:
                self.disk_full = True
                self.say(f"camera {self.camera}: recording: the disk of {self.folder} is full ({free / 2**20:.0f} MB "
                         f"free, less than the {self.min_free_bytes / 2**20:.0f} MB kept free): no segment is written "
                         "until space is freed; detection goes on")
        elif self.disk_full:
            self.disk_full = False
            self.say(f"camera {self.camera}: recording: {self.folder} has room again; segments are written again")
        return not self.disk_full

    def _failed_write(self, e: OSError | av.FFmpegError) -> None:
        self._finish()
        if getattr(e, "errno", None) == errno.ENOSPC:
            self.disk_full = True
        why = getattr(e, "strerror", None) or e
        self._error(f"write-{getattr(e, 'errno', None)}", f"cannot write a segment: {why}")

    def _error(self, kind: str, why: str) -> None:
        self.failed += 1
        said, self.last_error = self.last_error is not None and self.last_error.startswith(kind), f"{kind}: {why}"
        if not said:
            self.say(f"camera {self.camera}: recording: {why}")


def _create(folder: Path, name: str) -> tuple[int, Path]:
    """A new file `folder/name.mp4` (`name.1.mp4`, … if taken): its descriptor and path."""
    dir_fd = open_private_dir(folder)
    try:
        for n in range(100):
            file = f"{name}.mp4" if n == 0 else f"{name}.{n}.mp4"
            try:
                return create_private(file, dir_fd), folder / file
            except FileExistsError:
                continue
        raise FileExistsError(errno.EEXIST, "every name taken", str(folder / name))
    finally:
        os.close(dir_fd)
