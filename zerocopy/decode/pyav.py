"""PyAV decoding (on the CPU, or VA-API with frames left on the GPU) that keeps going through damage."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import av
import av.logging

from zerocopy.budget import decode_threads
from zerocopy.decode.damage import DamageReport
from zerocopy.decode.readahead import ReadAhead
from zerocopy.errors import InputError
from zerocopy.stats import DECODER_THREAD_NAME

READ_AHEAD = 4  # decoded frames a CPU decoder may hold ready for the consumer


def ffmpeg_log_line(e: BaseException) -> str:
    """FFmpeg's own last log message behind a PyAV error (e.g. "No VA display found for device …"), or ""."""
    log = getattr(e, "log", None)
    if isinstance(e, av.FFmpegError) and log and len(log) >= 3 and log[2]:
        return str(log[2]).strip().rstrip(".")
    return ""


def describe_av_error(e: BaseException) -> str:
    """One line from a PyAV/FFmpeg error: its message, plus FFmpeg's last log line if it has one."""
    if isinstance(e, av.FFmpegError):
        msg = (e.strerror or str(e)).strip()
        log = getattr(e, "log", None)
        if log and len(log) >= 3 and log[2]:
            msg += f" ({str(log[2]).strip()})"
        return msg[0].lower() + msg[1:] if msg else type(e).__name__
    return str(e).splitlines()[0] if str(e) else type(e).__name__


class FFmpegLogCapture:
    """Routes FFmpeg's error messages (from every decoder thread) into a `DamageReport`.

    While it runs, PyAV's Python log callback is installed; a frame-threaded decoder thread that
    logs then needs the GIL. Freeing that decoder (which waits for its threads while the GIL is
    held) with a thread inside the callback deadlocks — seen under load after stopping mid-stream.
    `PyAVDecoder.close()` therefore drains the decoder first (its threads go idle; PyAV releases the
    GIL while decoding), then stops the capture, then frees.
    """

    def __init__(self, damage: DamageReport):
        self.damage = damage
        self._capture = None
        self._previous = None

    def start(self) -> None:
        if self._capture is None:
            self._previous = av.logging.get_level()
            av.logging.set_level(av.logging.ERROR)
            self._capture = av.logging.Capture(local=False)
            self._capture.__enter__()

    @property
    def active(self) -> bool:
        return self._capture is not None

    def stop(self) -> None:
        capture, self._capture = self._capture, None
        if capture is None:
            return
        av.logging.set_level(self._previous)  # None: PyAV's no-op C callback, safe with any thread
        capture.__exit__(None, None, None)
        for level, name, message in capture.logs:
            if level <= av.logging.ERROR:
                self.damage.add_log(name or "ffmpeg", message)


@contextmanager
def captured_ffmpeg_log(damage: DamageReport):
    capture = FFmpegLogCapture(damage)
    capture.start()
    try:
        yield
    finally:
        capture.stop()


def open_input(path: str | Path, **kwargs) -> av.container.InputContainer:
    """Open a container with a clear `InputError` for missing, empty or non-video files."""
    p = Path(path)
    if not str(path).startswith(("rtsp://", "http://", "https://", "udp://", "tcp://")):
        if not p.exists():
            raise InputError(f"{path}: no such file")
        if p.is_dir():
            raise InputError(f"{path}: is a directory, not a video")
        if p.stat().st_size == 0:
            raise InputError(f"{path}: empty file")
    opening = DamageReport()
    try:
        with captured_ffmpeg_log(opening):
            container = av.open(str(path), **kwargs)
    except (av.FFmpegError, OSError) as e:
        detail = describe_av_error(e)
        if opening.decoder_messages and "(" not in detail:
            detail += f" ({next(reversed(opening.decoder_messages)).split(': ', 1)[-1]})"
        raise InputError(f"{path}: cannot open: {detail}") from None
    if not container.streams.video:
        container.close()
        raise InputError(f"{path}: no video stream")
    return container


class NothingDecodes(Exception):
    """Packet after packet fails and no frame has come out (e.g. a codec the GPU cannot decode)."""


class PyAVDecoder:
    """Iterates `(frame, decode_ms, pts)` from the first video stream; reading errors go to `damage`.

    Without `hwaccel` it decodes on the CPU with `threads` FFmpeg threads (0: FFmpeg's choice),
    and with `read_ahead` > 0 on a thread of its own, that many frames ahead of the consumer.
    With a VA-API `HWAccel` (`is_hw_owned=True`) frames stay on the GPU; `extra_hw_frames` grows
    the decoder's fixed surface pool by the frames the caller holds at once. With
    `give_up_without_frame` = N, N failed packets in a row before any frame raise `NothingDecodes`.
    """

    def __init__(self, path: str | Path, hwaccel=None, extra_hw_frames: int = 0, threads: int = 0,
                 read_ahead: int = 0, give_up_without_frame: int = 0):
        self.path = str(path)
        self.container = open_input(path, hwaccel=hwaccel) if hwaccel is not None else open_input(path)
        self.stream = self.container.streams.video[0]
        if hwaccel is None:
            self.stream.thread_type = "AUTO"
            self.stream.codec_context.thread_count = threads
        elif extra_hw_frames:
            self.stream.codec_context.options = {"extra_hw_frames": str(extra_hw_frames)}
        self.read_ahead = read_ahead
        self.give_up_without_frame = give_up_without_frame
        self.damage = DamageReport()
        self._log = FFmpegLogCapture(self.damage)
        self._ahead: ReadAhead | None = None

    @classmethod
    def on_cpu(cls, path: str | Path, threads: int | None = None) -> PyAVDecoder:
        """The software path's decoder: `threads` (None: what `budget.decode_threads` gives it next to
        CPU inference), on its own thread."""
        return cls(path, threads=decode_threads(threads), read_ahead=READ_AHEAD)

    @property
    def expected_frames(self) -> int | None:
        return self.stream.frames or None

    @property
    def rate(self) -> float:
        rate = self.stream.average_rate or self.stream.guessed_rate
        return float(rate) if rate else 25.0

    def frames(self) -> Iterator[tuple[av.VideoFrame, float, float | None]]:
        """`(frame, decode_ms, pts_seconds)` in decode order."""
        self._log.start()
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
            self._stop_read_ahead()
            if drained:  # else the decoder's threads may still log: `close()` drains them first
                self._log.stop()

    def _stop_read_ahead(self) -> None:
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            ahead.close()

    def _frames(self) -> Iterator[tuple[av.VideoFrame, float, float | None]]:
        codec = self.stream.codec_context
        packets = self.container.demux(self.stream)
        decoded_any, failed_in_a_row, seen = False, 0, 0
        limit = self.give_up_without_frame
        while True:
            t0 = time.perf_counter()
            try:
                packet = next(packets)
            except StopIteration:
                break
            except av.FFmpegError as e:  # truncated or broken container: keep what decoded so far
                self.damage.stopped_early = describe_av_error(e)
                packet = None
            seen += 1
            try:
                decoded = codec.decode(packet)
                failed_in_a_row = 0
            except av.FFmpegError as e:
                self.damage.packets_failed += 1
                decoded = []
                failed_in_a_row += 1
                if limit and not decoded_any and failed_in_a_row >= limit:
                    raise NothingDecodes(f"{failed_in_a_row} packets in a row failed to decode and none gave a "
                                         f"frame (last error: {describe_av_error(e)})") from None
            ms = (time.perf_counter() - t0) * 1e3
            decoded_any = decoded_any or bool(decoded)
            if limit and not decoded_any and seen >= 4 * limit:  # silent failure: no error, no frame
                raise NothingDecodes(f"{seen} packets gave no frame")
            for frame in decoded:
                if frame.is_corrupt:
                    self.damage.corrupt_frames += 1
                yield frame, ms / len(decoded), (float(frame.time) if frame.time is not None else None)
            if packet is None:
                break

    def close(self) -> None:
        self._stop_read_ahead()  # from here on only this thread drives the codec
        if self._log.active:  # stopped mid-stream: let the decoder's threads finish first
            with suppress(av.FFmpegError):
                self.stream.codec_context.decode(None)
        self._log.stop()
        self.container.close()
