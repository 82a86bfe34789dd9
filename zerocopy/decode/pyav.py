"""PyAV decoding (on the CPU, or VA-API with frames left on the GPU) that keeps going through damage,
from files, network sources and cameras (reconnecting to a network source that drops, if asked)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import suppress
from pathlib import Path

import av

from zerocopy.decode.base import GUESSED_RATE, Decoded
from zerocopy.decode.damage import DamageReport, LiveReport
from zerocopy.decode.ffmpeg_log import FFmpegLogCapture
from zerocopy.decode.first_frame import FirstFrameWatch, NothingDecodes
from zerocopy.decode.gate import Demand, GateReport
from zerocopy.decode.gated import GatedCodec
from zerocopy.decode.live import LivePolicy, Pacer, reopen
from zerocopy.decode.pyav_input import PyAVInput, Timeline
from zerocopy.decode.readahead import ReadAhead
from zerocopy.redaction import redact_text
from zerocopy.sources import source_kind
from zerocopy.stats import DECODER_THREAD_NAME

READ_AHEAD = 4  # decoded frames a CPU decoder may hold ready for the consumer
CLOSE_GRACE_S = 0.5  # how long close() waits for a live source's read in progress before leaving it
LOG_EVERY = 50  # packets between moving FFmpeg's captured messages into the damage report

__all__ = ["NothingDecodes", "PyAVDecoder"]  # NothingDecodes (first_frame.py) is raised from this decoder


class Handover:
    """Who releases a decoder's input: `close()`, or its reading thread when close() stopped waiting for
    it (blocked in a live source's read) and left it behind; the one that knows last does it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reader_done = False
        self.left_behind = False

    def leave_reader(self) -> None:
        """close() stops waiting for the reading thread: if it is still reading, it releases the input."""
        with self._lock:
            self.left_behind = not self._reader_done

    def reader_ends(self) -> bool:
        """The reading thread ends: True if close() has left it behind (and returned)."""
        with self._lock:
            self._reader_done = True
            return self.left_behind


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
        self.read_ahead = read_ahead
        self.give_up_without_frame = give_up_without_frame
        self.damage = DamageReport(live_report=LiveReport() if self.live else None)
        self.on_reopen = on_reopen
        self._log = FFmpegLogCapture(self.damage)
        self._ahead: ReadAhead | None = None
        self._stopping = threading.Event()  # close() or interrupt(): ends reading, waits and pacing
        self._handover = Handover()  # who releases the input: close(), or a reading thread left behind
        # `stop` is the run's: an open (or a reopen) it catches waiting is abandoned
        self._input = PyAVInput(path=self.path, kind=self.kind, policy=self.policy, hwaccel=hwaccel,
                                extra_hw_frames=extra_hw_frames, threads=threads, stopping=self._stopping,
                                run_stop=stop)
        self.container: av.container.InputContainer | None = self._input.open_first(self.damage.live_report)
        self.stream = self._input.setup(self.container)
        rate = self.stream.average_rate or self.stream.guessed_rate  # the first opening's, kept across reconnects
        self._rate = float(rate) if rate else GUESSED_RATE
        self._expected_frames = self.stream.frames or None
        # A camera or a live stream (no known length) delivers at its own pace, and its end is a drop.
        self.paces_itself = self.kind == "device" or (self.kind == "network" and self.container.duration is None)
        self.realtime = realtime and not self.paces_itself
        self._watch = FirstFrameWatch(give_up_without_frame)
        self._timeline = Timeline(self.damage.live_report)
        self._packets = 0
        self._demand: Demand | None = None  # set by `gate_decoding`
        self._gated: GatedCodec | None = None  # the decode gate on the open stream's codec

    def gate_decoding(self, demand: Demand) -> None:
        """Decode only what the consumer wants (`decode.gate`), as its `demand` says; before `frames()`. Frames the
        gate leaves undecoded come as `Decoded`s whose `frame` is None. Its report is the damage report's `gate`."""
        self._demand = demand
        self.damage.gate = GateReport()

    @classmethod
    def on_cpu(cls, path: str | Path, threads: int, realtime: bool = False,
               policy: LivePolicy | None = None, stop: threading.Event | None = None) -> PyAVDecoder:
        """The software path's decoder: `threads` FFmpeg threads (the run configuration's, resolved),
        on its own thread."""
        return cls(path, threads=threads, read_ahead=READ_AHEAD, realtime=realtime, policy=policy, stop=stop)

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
            self._handover.leave_reader()
        return not self._handover.left_behind

    def _frames(self) -> Iterator[Decoded]:
        """Runs on the thread that decodes (the read-ahead thread, or the consumer's)."""
        self._log.start(local=self._input.single_threaded)
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
            if self._handover.reader_ends():  # close() has returned: release the input here, on the reading thread
                self._release()

    def _read(self, pace: Pacer | None) -> Generator[Decoded, None, str | None]:
        """The open container's frames; returns None at its end (or when stopped), else why reading
        stopped (for a live source, its end too)."""
        codec = self.stream.codec_context
        packets = self.container.demux(self.stream)
        if self._demand is not None:  # a reopened stream is calibrated again (the report goes on)
            self._gated = GatedCodec(codec, self.stream.time_base, self._demand, self._stopping,
                                     redact_text(self.path), self.damage.gate, offset=lambda: self._timeline.offset)
        while True:
            if self._stopping.is_set():
                return None
            t0 = time.perf_counter()
            why = None
            try:
                packet = next(packets)
            except StopIteration:
                return None if self._stopping.is_set() else self._input.why_ended(self.paces_itself)
            except av.FFmpegError as e:  # truncated or broken container, or a network error
                if self._stopping.is_set():
                    return None
                why = self._input.why_failed(e, self.container, self._packets)
                if not self.live:
                    self.damage.stopped_early = why  # a file keeps what decoded so far
                    why = None
                packet = None
            if self.live:
                if self._stopping.is_set():
                    return None
                t0 = time.perf_counter()  # waiting for a live source's data is not decoding
            self._watch.read(packet)
            self._packets += 1
            if self._packets % LOG_EVERY == 0:
                self._log.drain()
            try:
                decoded = codec.decode(packet) if self._gated is None else self._gated.feed(packet, t0)
                self._watch.decoded()
            except av.FFmpegError as e:
                self.damage.packets_failed += 1
                decoded = []
                self._watch.failed(e)
            ms = (time.perf_counter() - t0) * 1e3
            self._watch.gave(decoded)
            for frame in decoded:
                if self._gated is not None:  # a `gated.Out`
                    frame, pts, read_at = frame.frame, frame.time, frame.read_at
                else:
                    pts, read_at = (float(frame.time) if frame.time is not None else None), None
                if frame is not None and frame.is_corrupt:
                    self.damage.corrupt_frames += 1
                if pace is not None and not pace(pts):
                    return None
                yield self._deliver(frame, ms / len(decoded), pts, read_at)
            if packet is None:
                return why

    def _deliver(self, frame: av.VideoFrame | None, ms: float, pts: float | None,
                 read_at: float | None = None) -> Decoded:
        now = time.perf_counter()
        pts = self._timeline.stamp(pts, now)  # after a reconnection, from the last frame's on
        # A frame arrives when a live source sends it or a paced file makes it due; a file read as fast
        # as it decodes has no arrival time (its frames are pulled, and their latency means nothing).
        # One the decode gate kept (`read_at`: its packet's reading) arrived when its packet did.
        arrived = min(now, read_at) if read_at is not None else now
        return Decoded(frame, ms, pts, arrived if self.live or self.realtime else None)

    def _reconnect(self, why: str) -> bool:
        """Open the source again after a drop, with the policy's back-off; False when stopped or given up."""
        live = self.damage.live_report
        assert live is not None
        gap_from = self._timeline.dropped()
        container, self.container = self.container, None
        if container is not None:
            container.close()  # its codec was flushed when reading ended: no decoder thread is busy
        self._log.stop()  # the failed attempts' messages are theirs, not the stream's damage
        container = reopen(self.policy, live, self._stopping, gap_from, why, self._input.open)
        if container is None:
            self.damage.stopped_early = live.gave_up or self.damage.stopped_early
            return False
        self.container, self.stream = container, self._input.setup(container)
        if self.on_reopen is not None:
            self.on_reopen(self)
        self._log.start(local=self._input.single_threaded)
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
        if container is not None:  # let the decoder's threads finish before it can be freed (FFmpegLogCapture):
            with suppress(av.FFmpegError):  # an interrupted stream has packets in flight; at its end, EOFError
                self.stream.codec_context.decode(None)
        self._log.stop()
        if container is not None:
            container.close()
