"""An export of a camera's recording (issue 38; docs/serve.md, *Recordings*): the packets of its segments
(`record.segments`) from the keyframe at or before a start to the last picture at or before an end, read back with
PyAV and remuxed without decoding into one MP4 with its index first, as an event's clip is (`clip.add_stream`,
`clip.mux`). It lasts from end - start to end - start plus one keyframe interval.

Segments are joined one after the other by their own timestamps (each file starts at 0; the next goes on where the
one before ended), never padded: at a gap between one segment's end and the next one's start of more than `GAP_S`
(a reconnection, a stall, recording stopped), at a change of codec or size, or at a segment that cannot be read,
the export stops and says so (`cut_at_gap`). A segment being written is read up to its last whole fragment.
In a stream with B-frames the export ends with the pictures it needs: those shown at or before the end and those
they refer to (a picture shown a frame or two after it). The segments' audio (`record.audio`), when they have it, goes
in beside the pictures: the packets shown from the first picture to the end of the last."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import av

from zerocopy.record.audio import add_audio_stream, audio_base, audio_params, mux_audio
from zerocopy.record.clip import MP4_OPTIONS, ClipError, ClipResult, add_stream, mux
from zerocopy.record.reader import stream_params
from zerocopy.record.ring import AudioParams, NoFootage, RecordedPacket, StreamParams
from zerocopy.sinks.files import fd_name
from zerocopy.store.folder import StorageFolder
from zerocopy.store.segments import Segment

GAP_S = 1.0  # one segment's end to the next one's start: more is a gap (less: the packets' arrival jitter)


@dataclass(frozen=True)
class _Read:
    """One segment's file as read: its parameters and its packets (timestamps in its own time base, from 0 at its
    first keyframe), each with its Unix time (`wall`: the segment's start + its presentation time)."""

    params: StreamParams
    packets: Iterator[RecordedPacket]


@dataclass(kw_only=True)
class _Cut:
    """An export being written: the output, then the packets from the keyframe at or before `start` (`pending`
    until a picture at or before `end` says they are needed), and how it went."""

    out: Any
    start: float
    end: float
    params: StreamParams | None = None
    stream: Any = None
    sound: Any = None  # its audio stream (None: none)
    sounds: list[RecordedPacket] = field(default_factory=list)  # audio packets not written yet, oldest first
    sounds_written: int = 0
    key_pts: int | None = None  # the pts of the keyframe it starts from (chosen for good once `fixed`)
    fixed: bool = False
    base: int | None = None  # the pts of its first packet written
    leading: bool = True  # within the first GOP, where pictures shown before its keyframe are left out
    pending: list[RecordedPacket] = field(default_factory=list)
    written: int = 0
    first_wall: float = 0.0
    last_wall: float = 0.0
    end_pts: int = 0  # the end (pts + duration) of the last picture written
    late_start: bool = False
    reached_end: bool = False  # the footage went as far as `end`

    def take(self, packet: RecordedPacket) -> bool:
        """One packet in decode order (timestamps in the export's time base); False once nothing more is needed."""
        if packet.keyframe and packet.wall > self.end:
            self.reached_end = True  # (nothing after it is shown at or before the end)
            return False
        if not self.fixed and packet.keyframe:
            if packet.wall <= self.start or self.key_pts is None:  # a keyframe nearer the start (or the first)
                self.pending, self.key_pts, self.leading = [packet], packet.pts, True
                self.late_start = self.fixed = packet.wall > self.start
                return True
            self.fixed = True  # the first keyframe after the start: the one before it stands
        if self.key_pts is None:
            return True  # (a segment starts on a keyframe: never)
        if packet.keyframe:
            self.leading = False
        elif self.leading and packet.pts < self.key_pts:
            return True  # a leading picture of an open GOP: it would need the GOP before
        self.pending.append(packet)
        if packet.wall > self.end:
            self.reached_end = True
        elif self.fixed:
            self.flush(len(self.pending))
        return True

    def flush(self, count: int) -> None:
        """The first `count` pending packets written."""
        for kept in self.pending[:count]:
            if self.base is None:
                self.base, self.first_wall = kept.pts, kept.wall
            mux(self.out, self.stream, self.params, kept, self.base, first=self.written == 0)
            self.written += 1
            self.end_pts = max(self.end_pts, kept.pts + kept.duration)
            self.last_wall = max(self.last_wall, kept.wall)
            if kept.wall + float(kept.duration * self.params.time_base) >= self.end - 1e-3:
                self.reached_end = True  # (the recording's very last picture ends at the end)
        del self.pending[:count]
        self.flush_audio()

    def flush_audio(self) -> None:
        """The audio packets shown before the end of the last picture written, from its first picture on."""
        if self.sound is None or self.base is None or self.params is None or self.params.audio is None:
            return
        base, until = audio_base(self.base, self.params), audio_base(self.end_pts, self.params)
        while self.sounds and self.sounds[0].pts < until:
            kept = self.sounds.pop(0)
            if kept.pts >= base:
                mux_audio(self.out, self.sound, self.params.audio, kept, base, first=self.sounds_written == 0)
                self.sounds_written += 1

    def finish(self) -> None:
        """The pending packets up to the last shown at or before `end` written; the rest dropped."""
        last = max((i for i, p in enumerate(self.pending) if p.wall <= self.end), default=-1)
        self.flush(last + 1)
        self.pending.clear()
        self.sounds.clear()


def write_export(files: StorageFolder, segments: Sequence[Segment], start: float, end: float,
                 out_name: str | Path) -> ClipResult:
    """The export of `start`…`end` (Unix seconds) from `segments` (a camera's, oldest first, those that overlap
    that time: `Storage.segments`; their files read under `files`, held by the caller) written as an MP4 to
    `out_name` (a path FFmpeg opens, such as `/proc/self/fd/N`). Raises `NoFootage` (nothing of that time could
    be read), `ClipError` (FFmpeg refused to write it), `OSError` (a full disk). On an error, what was written at
    `out_name` is the caller's to remove."""
    cut_at_gap = False
    try:
        with av.open(str(out_name), "w", format="mp4", options=dict(MP4_OPTIONS)) as out:
            cut = _Cut(out=out, start=start, end=end)
            before: Segment | None = None
            offset = 0  # ticks of the export's time base where the segment read now starts
            for segment in segments:
                if before is not None and segment.start - before.end > GAP_S:
                    cut_at_gap = True
                    break
                with _read(files, segment) as read:
                    if read is None or not _same(cut.params, read.params):
                        cut_at_gap = True  # unreadable, or another stream
                        break
                    if cut.params is None:
                        cut.params, cut.stream = read.params, add_stream(out, read.params)
                        if read.params.audio is not None:
                            cut.sound = add_audio_stream(out, read.params.audio)
                    going, length = _into(cut, read, offset)
                offset += length
                before = segment
                if not going:
                    break
            cut.finish()
            if not cut.written:
                raise NoFootage(f"no footage between {start:.3f} and {end:.3f}")
    except av.FFmpegError as e:
        raise ClipError(f"cannot write the export: {e}") from None
    tick = cut.params.time_base if cut.params is not None else Fraction(1)
    return ClipResult(path=Path(out_name), seconds=round(float((cut.end_pts - (cut.base or 0)) * tick), 3),
                      bytes=os.stat(out_name).st_size, packets=cut.written, first_wall=cut.first_wall,
                      last_wall=cut.last_wall, cut_at_gap=cut_at_gap,
                      late_start=cut.late_start, early_end=not cut.reached_end)


def _into(cut: _Cut, read: _Read, offset: int) -> tuple[bool, int]:
    """`read`'s packets given to `cut`, their timestamps `offset` on and in the export's time base; whether more is
    needed, and the segment's length in the export's ticks (where the next one starts)."""
    assert cut.params is not None
    scale = read.params.time_base / cut.params.time_base
    length = 0
    for packet in read.packets:
        if packet.audio:
            _audio_into(cut, read, packet, offset)
            continue
        pts, dts, duration = (int(round(v * scale)) for v in (packet.pts, packet.dts, packet.duration))
        length = max(length, pts + duration)
        moved = RecordedPacket(data=packet.data, pts=pts + offset, dts=dts + offset, keyframe=packet.keyframe,
                               duration=duration, wall=packet.wall, segment=packet.segment)
        if not cut.take(moved):
            return False, length
    return True, length


def _audio_into(cut: _Cut, read: _Read, packet: RecordedPacket, offset: int) -> None:
    """An audio packet of `read` kept by `cut` (to be written beside the pictures), its timestamps `offset` (in the
    export's video ticks) on and in the export's audio time base."""
    assert cut.params is not None and cut.params.audio is not None and read.params.audio is not None
    if packet.wall > cut.end:
        return
    scale = read.params.audio.time_base / cut.params.audio.time_base
    moved = audio_base(offset, cut.params)
    pts, dts, duration = (int(round(v * scale)) for v in (packet.pts, packet.dts, packet.duration))
    cut.sounds.append(RecordedPacket(data=packet.data, pts=pts + moved, dts=dts + moved, keyframe=False,
                                     duration=duration, wall=packet.wall, segment=0, audio=True))


def _same(params: StreamParams | None, other: StreamParams) -> bool:
    """Whether `other`'s packets may follow those of `params` in one MP4 (None: nothing written yet)."""
    return params is None or ((params.codec, params.width, params.height) == (other.codec, other.width, other.height)
                              and _sound(params.audio) == _sound(other.audio))


def _sound(audio: AudioParams | None) -> tuple[str, int] | None:
    return (audio.codec, audio.sample_rate) if audio is not None else None


@contextlib.contextmanager
def _read(files: StorageFolder, segment: Segment) -> Iterator[_Read | None]:
    """`segment`'s file opened under `files` (never through a link) and read with PyAV; None if it cannot be (gone,
    refused, not an MP4 FFmpeg reads, no video)."""
    fd, container = -1, None
    try:
        fd = files.open(segment.path)
        container = av.open(fd_name(fd, files.path / segment.path))
    except (av.FFmpegError, OSError):
        pass
    try:
        streams = container.streams.video if container is not None else ()
        if not streams:
            yield None
        else:
            params, bsf = stream_params(streams[0])
            sound, audio, _ = audio_params(container)  # (the recorder's own reading of a container's audio)
            if audio is not None:
                params = replace(params, audio=audio)
            yield _Read(params, _packets(container, streams[0], sound, bsf, segment))
    finally:
        if container is not None:
            container.close()
        if fd >= 0:
            os.close(fd)


def _packets(container: Any, stream: Any, sound: Any, bsf: Any, segment: Segment) -> Iterator[RecordedPacket]:
    """The stream's packets (in Annex B, through `bsf`) in decode order, and its audio's (`sound`: None, none), until
    its end or its last whole fragment."""
    tick, zero = stream.time_base, None  # zero: its first keyframe's pts (MP4 may shift it off 0: B-frames)
    demuxed = container.demux(stream, sound) if sound is not None else container.demux(stream)
    while True:
        try:
            packet = next(demuxed)
        except (StopIteration, av.FFmpegError):  # (a segment cut short by a kill ends in a partial fragment)
            return
        if not packet.size or packet.pts is None:
            continue
        if sound is not None and packet.stream_index == sound.index:
            at = float(packet.pts * sound.time_base)  # (audio starts at 0 in a segment, at its first keyframe)
            yield RecordedPacket(data=bytes(packet), pts=packet.pts, dts=packet.dts if packet.dts is not None
                                 else packet.pts, keyframe=False, duration=packet.duration or 0,
                                 wall=segment.start + at, segment=0, audio=True)
            continue
        for p in bsf.filter(packet) if bsf is not None else (packet,):
            dts = p.dts if p.dts is not None else p.pts
            zero = p.pts if zero is None else zero
            yield RecordedPacket(data=bytes(p), pts=p.pts - zero, dts=dts - zero, keyframe=p.is_keyframe,
                                 duration=p.duration or 0, wall=segment.start + float((p.pts - zero) * tick),
                                 segment=0)
