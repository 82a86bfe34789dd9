"""PyAV decoding (on the CPU, or VA-API with frames left on the GPU) that keeps going through damage,
from files, network sources and cameras (reconnecting to a network source that drops, if asked)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import suppress
from pathlib import Path

import av

from zerocopy.decode import mp4_index
from zerocopy.decode.base import Decoded
from zerocopy.decode.damage import DamageReport
from zerocopy.decode.ffmpeg_log import FFmpegLogCapture, describe_av_error
from zerocopy.decode.live import (
    LivePolicy,
    LiveReport,
    Pacer,
    network_options,
    open_abandonable,
    open_late,
    reopen,
)
from zerocopy.decode.opening import open_input
from zerocopy.decode.readahead import ReadAhead
from zerocopy.errors import InputError
from zerocopy.sources import source_kind
from zerocopy.stats import DECODER_THREAD_NAME

READ_AHEAD = 4  # decoded frames a CPU decoder may hold ready for the consumer
CLOSE_GRACE_S = 0.5  # how long close() waits for a live source's read in progress before leaving it
LOG_EVERY = 50  # packets between moving FFmpeg's captured messages into the damage report


class NothingDecodes(Exception):
    """Packet after packet fails and no frame has come out (e.g. a codec the GPU cannot decode)."""


class PyAVDecoder:
    """Iterates `(frame, decode_ms, pts)` from the first video stream; reading errors go to `damage`.

    Without `hwaccel` it decodes on the CPU with `threads` FFmpeg threads (0: FFmpeg's choice),
    and with `read_ahead` > 0 on a thread of its own, that many frames ahead of the consumer.
    With a VA-API `HWAccel` (`is_hw_owned=True`) frames stay on the GPU; `extra_hw_frames` grows
    the decoder's fixed surface pool by the frames the caller holds at once. With
    `give_up_without_frame` = N, N failed packets in a row before any frame raise `NothingDecodes`.

    Live sources (`sources.is_live`: network URLs, `/dev/videoN`) are read with `policy`'s timeouts,
    and `damage.live_report` reports on them; an open that the run's `stop` event catches waiting is
    abandoned (`OpenAbandoned`). A live source that ends or fails mid-stream has *dropped*: with
    `policy.reconnect` it is opened again (`live.reopen`) and frames go on in the same iteration,
    their timestamps continuing from the last frame's plus the time without frames. (A network file
    of known duration, e.g. an MP4 over HTTP, ends at its end and is not reopened: it would start
    over.) `on_reopen` (if set) is called with the decoder after each re-open, before its first decode.
    `realtime` holds each frame of a file back until its timestamp is due on a wall clock started
    at the first frame (a stand-in for a camera); a live source paces itself and is never held.
    Each frame yielded is a `Decoded` carrying its arrival time (live or paced sources; else None).

    `close()` (from the thread that iterates, or once it stopped) returns promptly, also during a
    reconnection wait, realtime pacing or a network open; `interrupt()`, from any thread, ends the
    iteration after the frames already decoded. PyAV cannot interrupt a read FFmpeg is blocked in
    (its interrupt callback only knows the timeouts), so a live source's reading thread that is still
    waiting for data after `CLOSE_GRACE_S` is left to finish that read (at most `policy.read_timeout`)
    and then closes the input itself; nothing else touches the codec meanwhile.
    """

    def __init__(self, path: str | Path, hwaccel=None, extra_hw_frames: int = 0, threads: int = 0,
                 read_ahead: int = 0, give_up_without_frame: int = 0, realtime: bool = False,
                 policy: LivePolicy | None = None, on_reopen: Callable[[PyAVDecoder], None] | None = None,
                 stop: threading.Event | None = None):
        self.path = str(path)
        self.kind = source_kind(path)
        self.live = self.kind != "file"
        self.policy = policy or LivePolicy()
        self.reconnect = bool(self.policy.reconnect) and self.live
        self._hwaccel, self._extra_hw_frames, self._threads = hwaccel, extra_hw_frames, threads
        self.read_ahead = read_ahead
        self.give_up_without_frame = give_up_without_frame
        self.damage = DamageReport(live_report=LiveReport() if self.live else None)
        self.on_reopen = on_reopen
        self._run_stop = stop  # the run's stop: an open (or a reopen) it catches waiting is abandoned
        self._log = FFmpegLogCapture(self.damage)
        self._ahead: ReadAhead | None = None
        self._stopping = threading.Event()  # close() or interrupt(): ends reading, waits and pacing
        self._handover = threading.Lock()  # who releases the input: close(), or a reading thread left behind
        self._reader_done = False
        self._left_behind = False
        self.container: av.container.InputContainer | None = self._first_open()
        self.stream = self._setup(self.container)
        rate = self.stream.average_rate or self.stream.guessed_rate  # the first opening's, kept across reconnects
        self._rate = float(rate) if rate else 25.0
        self._expected_frames = self.stream.frames or None
        # A camera or a live stream (no known length) delivers at its own pace, and its end is a drop.
        self.paces_itself = self.kind == "device" or (self.kind == "network" and self.container.duration is None)
        self.realtime = realtime and not self.paces_itself
        self._decoded_any, self._failed_in_a_row, self._seen, self._keyframe_seen = False, 0, 0, False
        self._before_key = 0  # packets read before the first keyframe
        self._packets = 0
        self._last_frame_at: float | None = None  # perf_counter of the last frame delivered
        self._gap_from: float | None = None  # since when no frame has come (after a drop)
        self._last_pts: float | None = None
        self._pts_offset = 0.0

    @classmethod
    def on_cpu(cls, path: str | Path, threads: int, realtime: bool = False,
               policy: LivePolicy | None = None, stop: threading.Event | None = None) -> PyAVDecoder:
        """The software path's decoder: `threads` FFmpeg threads (the run configuration's, resolved),
        on its own thread."""
        return cls(path, threads=threads, read_ahead=READ_AHEAD, realtime=realtime, policy=policy, stop=stop)

    def _open(self, open_timeout: float | None = None) -> av.container.InputContainer:
        kwargs: dict = {} if self._hwaccel is None else {"hwaccel": self._hwaccel}
        if not self.live:
            return open_input(self.path, **kwargs)
        kwargs["timeout"] = (open_timeout or self.policy.open_timeout, self.policy.read_timeout)
        if self.kind == "network":
            kwargs["options"] = network_options(self.path, self.policy.read_timeout)
        # on a thread of its own: close() or Ctrl-C need not wait for FFmpeg's timeouts
        return open_abandonable(lambda: open_input(self.path, **kwargs), self._stopping, self._run_stop)

    @property
    def _single_threaded(self) -> bool:
        """Whether every message of this input is logged on the thread that drives it (no frame
        threads: one decoding thread, or VA-API's hardware decoding)."""
        return self._hwaccel is not None or self._threads == 1

    def _setup(self, container: av.container.InputContainer):
        stream = container.streams.video[0]
        if self._hwaccel is None:
            stream.thread_type = "AUTO"
            stream.codec_context.thread_count = self._threads
        elif self._extra_hw_frames:
            stream.codec_context.options = {"extra_hw_frames": str(self._extra_hw_frames)}
        return stream

    @property
    def expected_frames(self) -> int | None:
        return self._expected_frames

    @property
    def rate(self) -> float:
        return self._rate

    @property
    def frames_ready(self) -> int:
        """Decoded frames waiting for the consumer (on the read-ahead thread's queue): 0 means the next
        one must still come (from a live source, when it sends it)."""
        ahead = self._ahead
        return ahead.queued if ahead is not None else 0

    def frames(self) -> Iterator[Decoded]:
        """`(frame, decode_ms, pts_seconds)` in decode order (each a `Decoded`, with `.arrived`)."""
        drained = False
        try:
            if self.read_ahead:
                self._ahead = ReadAhead(self._frames(), self.read_ahead, name="zerocopy-decode",
                                        os_name=DECODER_THREAD_NAME)
                yield from self._ahead
            else:
                yield from self._frames()
            drained = True
        finally:
            mine = self._stop_reader()
            if drained and mine:  # else the decoder's threads may still log: `_release()` drains them first
                self._log.stop()

    def _stop_reader(self) -> bool:
        """Stop the read-ahead thread; True if this thread may now release the input, False if the
        reading thread is blocked in a live source's read and was left to release it itself."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None and not ahead.close(wait=CLOSE_GRACE_S if self.live else None):
            with self._handover:
                self._left_behind = not self._reader_done
        return not self._left_behind

    def _frames(self) -> Iterator[Decoded]:
        """Runs on the thread that decodes (the read-ahead thread, or the consumer's)."""
        self._log.start(local=self._single_threaded)
        try:
            pace = (Pacer(self.rate, self._stopping.wait, on_discontinuity=self.damage.count_discontinuity)
                    if self.realtime else None)
            while True:
                why = yield from self._read(pace)
                if why is None or self._stopping.is_set():
                    return
                assert self.damage.live_report is not None  # only live sources drop
                self.damage.live_report.drops += 1
                if not (self.reconnect and self.paces_itself):  # a network file would start over: no
                    self.damage.stopped_early = why
                    return
                if not self._reconnect(why):
                    return
        finally:
            if self._log.local:  # on its own thread (see `FFmpegLogCapture.stop`); nothing else logs here
                self._log.stop()
            with self._handover:
                self._reader_done = True
                left_behind = self._left_behind
            if left_behind:  # close() has returned: release the input here, on the reading thread
                self._release()

    def _read(self, pace: Pacer | None) -> Generator[Decoded, None, str | None]:
        """The open container's frames; returns None at its end (or when stopped), else why reading
        stopped (for a live source, its end too)."""
        codec = self.stream.codec_context
        packets = self.container.demux(self.stream)
        limit = self.give_up_without_frame
        while True:
            if self._stopping.is_set():
                return None
            t0 = time.perf_counter()
            why = None
            try:
                packet = next(packets)
            except StopIteration:
                return None if self._stopping.is_set() else self._ended()
            except av.FFmpegError as e:  # truncated or broken container, or a network error
                if self._stopping.is_set():
                    return None
                why = self._read_error(e)
                if not self.live:
                    self.damage.stopped_early = why  # a file keeps what decoded so far
                    why = None
                packet = None
            if self.live:
                if self._stopping.is_set():
                    return None
                t0 = time.perf_counter()  # waiting for a live source's data is not decoding
            # A stream that starts mid-GOP (a cut file, a camera joined late) fails on every packet
            # until its first keyframe, on any decoder: those packets say nothing about the decoder.
            self._before_key += not self._keyframe_seen
            # (a demuxer that flags no keyframe at all: count anyway after ~10 × the limit)
            self._keyframe_seen = (self._keyframe_seen or (packet is not None and packet.is_keyframe)
                                   or (limit and self._before_key > 10 * limit))
            self._seen += self._keyframe_seen
            self._packets += 1
            if self._packets % LOG_EVERY == 0:
                self._log.drain()
            try:
                decoded = codec.decode(packet)
                self._failed_in_a_row = 0
            except av.FFmpegError as e:
                self.damage.packets_failed += 1
                decoded = []
                self._failed_in_a_row += self._keyframe_seen
                if limit and not self._decoded_any and self._failed_in_a_row >= limit:
                    raise NothingDecodes(f"{self._failed_in_a_row} packets in a row from a keyframe on failed to "
                                         f"decode and none gave a frame (last error: {describe_av_error(e)})") from None
            ms = (time.perf_counter() - t0) * 1e3
            self._decoded_any = self._decoded_any or bool(decoded)
            if limit and not self._decoded_any and self._seen >= 4 * limit:  # silent failure: no error, no frame
                raise NothingDecodes(f"{self._seen} packets from a keyframe on gave no frame")
            for frame in decoded:
                if frame.is_corrupt:
                    self.damage.corrupt_frames += 1
                pts = float(frame.time) if frame.time is not None else None
                if pace is not None and not pace(pts):
                    return None
                yield self._deliver(frame, ms / len(decoded), pts)
            if packet is None:
                return why

    def _ended(self) -> str | None:
        if not self.paces_itself:
            return None  # a file, or a network file of known length: its end
        return "the camera stopped delivering" if self.kind == "device" else "the source closed the stream"

    def _read_error(self, e: BaseException) -> str:
        if isinstance(e, av.ExitError) and self.live:  # PyAV's read timeout interrupted FFmpeg
            return f"no data for {self.policy.read_timeout:g} s"
        why = describe_av_error(e)
        if self._packets == 0 and self.kind == "network" and self.container is not None:
            more = mp4_index.explain(self.path, self.container.format.name)  # the index at the end?
            why += f": {more}" if more else ""
        return why

    def _deliver(self, frame: av.VideoFrame, ms: float, pts: float | None) -> Decoded:
        now = time.perf_counter()
        if self._gap_from is not None:  # the first frame after a reconnection
            gap = now - self._gap_from
            assert self.damage.live_report is not None
            self.damage.live_report.add_gap(gap)
            if pts is not None and self._last_pts is not None:
                self._pts_offset = self._last_pts + gap - pts  # the stream's clock restarted: go on from ours
            self._gap_from = None
        if pts is not None:
            pts += self._pts_offset
            self._last_pts = pts
        self._last_frame_at = now
        # A frame arrives when a live source sends it or a paced file makes it due; a file read as fast
        # as it decodes has no arrival time (its frames are pulled, and their latency means nothing).
        return Decoded(frame, ms, pts, now if self.live or self.realtime else None)

    def _first_open(self) -> av.container.InputContainer:
        """Open the input; a network source not up yet is waited for with `policy.retry_open` (`live.open_late`)."""
        try:
            return self._open()
        except InputError as e:
            if not (self.reconnect and self.policy.retry_open and self.kind == "network"):
                raise
            assert self.damage.live_report is not None
            return open_late(self.policy, self.damage.live_report, self._run_stop or self._stopping, e,
                             lambda timeout: self._open(open_timeout=timeout))

    def _reconnect(self, why: str) -> bool:
        """Open the source again after a drop, with the policy's back-off; False when stopped or given up."""
        live = self.damage.live_report
        assert live is not None
        if self._gap_from is None:
            self._gap_from = self._last_frame_at if self._last_frame_at is not None else time.perf_counter()
        container, self.container = self.container, None
        if container is not None:
            container.close()  # its codec was flushed when reading ended: no decoder thread is busy
        self._log.stop()  # the failed attempts' messages are theirs, not the stream's damage
        container = reopen(self.policy, live, self._stopping, self._gap_from, why,
                           lambda timeout: self._open(open_timeout=timeout))
        if container is None:
            self.damage.stopped_early = live.gave_up or self.damage.stopped_early
            return False
        self.container, self.stream = container, self._setup(container)
        if self.on_reopen is not None:
            self.on_reopen(self)
        self._log.start(local=self._single_threaded)
        return True

    def interrupt(self) -> None:
        """Stop reading, from any thread (a signal handler too): the iteration ends after the frames
        already decoded; a reconnection wait or realtime pacing ends now. (Without read-ahead, a read
        FFmpeg is blocked in finishes first: at most `policy.read_timeout`.)"""
        self._stopping.set()
        ahead = self._ahead
        if ahead is not None:
            ahead.stop()

    def close(self) -> None:
        self._stopping.set()
        if self._stop_reader():  # from here on only this thread drives the codec
            self._release()

    def _release(self) -> None:
        container, self.container = self.container, None
        if container is not None and self._log.active:  # stopped mid-stream: let the decoder's threads finish
            with suppress(av.FFmpegError):
                self.stream.codec_context.decode(None)
        self._log.stop()
        if container is not None:
            container.close()
