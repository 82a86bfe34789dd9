"""PyAV decoding on the CPU, frame-threaded, that keeps going through damage and says what it saw."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import av
import av.logging

from zerocopy.decode.damage import DamageReport
from zerocopy.errors import InputError


def describe_av_error(e: BaseException) -> str:
    """One line from a PyAV/FFmpeg error: its message, plus FFmpeg's last log line if it has one."""
    if isinstance(e, av.FFmpegError):
        msg = (e.strerror or str(e)).strip()
        log = getattr(e, "log", None)
        if log and len(log) >= 3 and log[2]:
            msg += f" ({str(log[2]).strip()})"
        return msg[0].lower() + msg[1:] if msg else type(e).__name__
    return str(e).splitlines()[0] if str(e) else type(e).__name__


@contextmanager
def captured_ffmpeg_log(damage: DamageReport):
    """Route FFmpeg's error messages (from every decoder thread) into `damage` instead of stderr."""
    previous = av.logging.get_level()
    av.logging.set_level(av.logging.ERROR)
    with av.logging.Capture(local=False) as logs:
        try:
            yield
        finally:
            for level, name, message in logs:
                if level <= av.logging.ERROR:
                    damage.add_log(name or "ffmpeg", message)
    av.logging.set_level(previous)


def open_input(path: str | Path, **options) -> av.container.InputContainer:
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
            container = av.open(str(path), options=options)
    except (av.FFmpegError, OSError) as e:
        detail = describe_av_error(e)
        if opening.decoder_messages and "(" not in detail:
            detail += f" ({next(reversed(opening.decoder_messages)).split(': ', 1)[-1]})"
        raise InputError(f"{path}: cannot open: {detail}") from None
    if not container.streams.video:
        container.close()
        raise InputError(f"{path}: no video stream")
    return container


class SoftwareDecoder:
    """Iterates `(frame, decode_ms)` from the first video stream; reading errors go to `damage`."""

    def __init__(self, path: str | Path, threads: int = 0):
        self.path = str(path)
        self.container = open_input(path)
        self.stream = self.container.streams.video[0]
        self.stream.thread_type = "AUTO"
        if threads:
            self.stream.codec_context.thread_count = threads
        self.damage = DamageReport()

    @property
    def expected_frames(self) -> int | None:
        return self.stream.frames or None

    @property
    def rate(self) -> float:
        rate = self.stream.average_rate or self.stream.guessed_rate
        return float(rate) if rate else 25.0

    def frames(self) -> Iterator[tuple[av.VideoFrame, float, float | None]]:
        """`(frame, decode_ms, pts_seconds)` in decode order."""
        with captured_ffmpeg_log(self.damage):
            yield from self._frames()

    def _frames(self) -> Iterator[tuple[av.VideoFrame, float, float | None]]:
        codec = self.stream.codec_context
        packets = self.container.demux(self.stream)
        while True:
            t0 = time.perf_counter()
            try:
                packet = next(packets)
            except StopIteration:
                break
            except av.FFmpegError as e:  # truncated or broken container: keep what decoded so far
                self.damage.stopped_early = describe_av_error(e)
                packet = None
            try:
                decoded = codec.decode(packet)
            except av.FFmpegError:
                self.damage.packets_failed += 1
                decoded = []
            ms = (time.perf_counter() - t0) * 1e3
            for frame in decoded:
                if frame.is_corrupt:
                    self.damage.corrupt_frames += 1
                yield frame, ms / len(decoded), (float(frame.time) if frame.time is not None else None)
            if packet is None:
                break

    def close(self) -> None:
        self.container.close()
