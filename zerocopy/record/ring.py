"""A camera's recent compressed video, bounded in bytes: the packets of one video stream as they came (never
decoded), and of its audio stream when it has one MP4 can hold (`RecordedPacket.audio`), for clips cut at a
keyframe without re-encoding.

A packet is kept as `bytes` copied out of PyAV's packet with its timestamps (in its stream's time base), its
keyframe flag, its duration and the wall time (Unix) it arrived: PyAV objects are not thread-safe (a clip is
written on another thread than the one that reads the stream) and a PyAV packet holds its stream, hence its
demuxer. The packets are cut into *segments*: a reconnection starts one, and so does a timestamp that goes
back or leaps forward, or a stall in arrival; a clip never joins two segments (it is cut at the gap, never
padded). The oldest packets go first to keep under `max_bytes`; each segment keeps the stream parameters a
remux needs (`StreamParams`, its audio's in `StreamParams.audio`). Only video packets start segments: an audio
packet joins the current one, its timestamps in its own time base (nudged to increase, as the video's are).
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from zerocopy.errors import ZeroCopyError
from zerocopy.track.times import new_time_base

PACKET_OVERHEAD = 240  # bytes a kept packet costs besides its data (its record, its numbers, its bytes object)
MAX_LEAP_S = 10.0  # a timestamp (or an arrival) this far past the previous one starts a new segment
BACKWARDS_S = 1.0  # a timestamp this far before the previous one is a new clock: a new segment; less is nudged


class NoFootage(ZeroCopyError):
    """The ring holds no packet (from a keyframe on) of the window asked for."""


@dataclass(frozen=True, kw_only=True)
class AudioParams:
    """What an MP4 needs of the audio stream beside the video (`record.audio`)."""

    codec: str  # FFmpeg's codec name: aac
    sample_rate: int
    time_base: Fraction
    extradata: bytes | None = None  # AAC's AudioSpecificConfig, if the stream has it apart (else its ADTS headers)


@dataclass(frozen=True, kw_only=True)
class StreamParams:
    """What an MP4 needs of the stream a segment's packets came from."""

    codec: str  # FFmpeg's codec name: h264, hevc, …
    width: int
    height: int
    time_base: Fraction
    rate: Fraction | None = None
    extradata: bytes | None = None  # parameter sets in Annex B form (start codes), if the stream has them apart
    audio: AudioParams | None = None  # its audio stream, when it has one that is kept


@dataclass(frozen=True, kw_only=True, slots=True)
class RecordedPacket:
    """One packet as it came: its data copied out of PyAV, timestamps in its segment's time base."""

    data: bytes
    pts: int
    dts: int
    keyframe: bool
    duration: int
    wall: float  # Unix time of its arrival
    segment: int
    audio: bool = False  # a packet of the audio stream (timestamps in `StreamParams.audio.time_base`)


@dataclass(frozen=True, kw_only=True)
class Window:
    """A clip's packets, taken from the ring at once: one segment's, from a keyframe on, in decode order."""

    params: StreamParams
    packets: tuple[RecordedPacket, ...]
    audio: tuple[RecordedPacket, ...]  # the audio packets shown from the first picture to the end of the last
    cut_at_gap: bool  # the time asked for reaches across a gap (a reconnection, a stall): the clip stops there
    late_start: bool  # the ring no longer (or not yet) held the start asked for: the clip starts later
    early_end: bool  # the stream had not reached the end asked for (it lagged, or recording stopped)


@dataclass(frozen=True, kw_only=True)
class Followed:
    """What `PacketRing.follow` found: the packets in the order they came, the cursor to ask from next, and whether
    packets were evicted before this reader had them."""

    packets: list[RecordedPacket]
    cursor: int
    lost: bool


class PacketRing:
    """Thread-safe: one thread adds (`new_segment`, `add`, `end_segment`), others read (`window`, `stats`,
    `wait_until`)."""

    def __init__(self, max_bytes: int):
        if max_bytes <= 0:
            raise ValueError(f"a ring needs a size in bytes > 0, not {max_bytes}")
        self.max_bytes = max_bytes
        self.changed = threading.Condition(threading.Lock())  # notified at each change while someone waits
        self._packets: deque[RecordedPacket] = deque()
        self._params: dict[int, StreamParams] = {}  # of the segments that still have packets, and the current one
        self._segment = 0  # the current segment (0: none yet)
        self._last: RecordedPacket | None = None  # the newest video packet
        self._last_audio: RecordedPacket | None = None
        self._open = False  # whether packets may join the current segment
        self._tick = 0.0  # the current segment's time base, in seconds
        self._bytes = 0
        self._waiting = 0  # threads in wait_until
        self.packets_added = 0
        self.breaks = 0  # segments started by a timestamp that went back or leapt, or a stall in arrival

    # --- the reading thread ---------------------------------------------------------------------------------
    def new_segment(self, params: StreamParams) -> int:
        """Packets from here on join a new segment (a new opening of the stream); its number."""
        with self.changed:
            self._start_segment(params)
            self.changed.notify_all()
            return self._segment

    def end_segment(self) -> None:
        """The stream dropped: no packet joins the current segment any more."""
        with self.changed:
            self._open = False
            self.changed.notify_all()

    def add(self, *, data: bytes, pts: int | None, dts: int | None, keyframe: bool, duration: int,
            wall: float, audio: bool = False) -> None:
        """One packet of the current segment (timestamps in its time base, or its audio's; a missing one is taken
        from the other, or follows the previous packet's)."""
        with self.changed:
            if not self._open:
                raise RuntimeError("no segment open: new_segment() first")
            params = self._params[self._segment]
            last = self._last_audio if audio else self._last
            last = last if last is not None and last.segment == self._segment else None
            dts = dts if dts is not None else pts
            if dts is None:
                dts = last.dts + max(1, last.duration) if last is not None else 0
            pts = pts if pts is not None else dts
            if last is not None:
                step = (dts - last.dts) * self._tick
                if not audio and new_time_base(step, 0.0, back_s=BACKWARDS_S, gap_s=MAX_LEAP_S,
                                               waited=wall - last.wall):
                    self._start_segment(params)  # another clock, or a stall: never one clip across it
                    self.breaks += 1
                elif dts <= last.dts:  # a muxer needs increasing decoding times
                    pts, dts = max(pts, last.dts + 1), last.dts + 1
            packet = RecordedPacket(data=data, pts=pts, dts=dts, keyframe=keyframe and not audio, duration=duration,
                                    wall=wall, segment=self._segment, audio=audio)
            self._packets.append(packet)
            if audio:
                self._last_audio = packet
            else:
                self._last = packet
            self._bytes += len(data) + PACKET_OVERHEAD
            self.packets_added += 1
            self._evict()
            if self._waiting:  # (most packets find nobody waiting: no need to wake anyone)
                self.changed.notify_all()

    def _start_segment(self, params: StreamParams) -> None:
        self._segment += 1
        self._params[self._segment] = params
        self._tick = float(params.time_base)  # a Fraction's arithmetic at every packet costs more than the rest
        self._open = True

    def _evict(self) -> None:
        while self._bytes > self.max_bytes and len(self._packets) > 1:
            old = self._packets.popleft()
            self._bytes -= len(old.data) + PACKET_OVERHEAD
            if self._packets[0].segment != old.segment:  # that segment is gone (and any that had no packet)
                for gone in [s for s in self._params if s < self._packets[0].segment and s != self._segment]:
                    del self._params[gone]

    # --- readers --------------------------------------------------------------------------------------------
    def stats(self) -> dict[str, float | int]:
        """What the ring holds: bytes (with each packet's overhead), seconds (arrival of the oldest to the newest),
        packets, segments."""
        with self.changed:
            span = self._packets[-1].wall - self._packets[0].wall if self._packets else 0.0
            segments = self._packets[-1].segment - self._packets[0].segment + 1 if self._packets else 0
            return {"bytes": self._bytes, "seconds": round(span, 3), "packets": len(self._packets),
                    "segments": segments}

    @property
    def segment(self) -> int:
        """The current segment's number (0 before the first): each opening of the stream takes the next."""
        return self._segment

    def params(self) -> StreamParams | None:
        """The current segment's stream parameters (its size, its codec), or None before the first."""
        with self.changed:
            return self._params.get(self._segment)

    def wait_until(self, ready: Callable[[float | None, bool], bool], timeout: float) -> bool:
        """Wait at most `timeout` s until `ready(newest packet's wall time or None, whether its segment goes on)`,
        checked at every change and at `poke()`; whether it became true."""
        with self.changed:
            self._waiting += 1
            try:
                return self.changed.wait_for(
                    lambda: ready(self._packets[-1].wall if self._packets else None,
                                  self._open and bool(self._packets) and self._packets[-1].segment == self._segment),
                    timeout)
            finally:
                self._waiting -= 1

    def params_of(self, segment: int) -> StreamParams | None:
        """The stream parameters of `segment`, while it still has packets (or is the current one)."""
        with self.changed:
            return self._params.get(segment)

    def follow(self, after: int, timeout: float, audio: bool = False) -> Followed:
        """For a reader that follows the stream as it comes (continuous recording, live video): the packets added
        after the `after`-th (`Followed.cursor` of its last call; 0: from the oldest held), waiting at most `timeout`
        s for one; the video's alone unless `audio`. A reader too slow for the ring loses what was evicted first
        (`lost`, and it goes on from the oldest held); it never holds the reading thread back."""
        with self.changed:
            self._waiting += 1
            try:
                self.changed.wait_for(lambda: self.packets_added > after, timeout)
            finally:
                self._waiting -= 1
            oldest = self.packets_added - len(self._packets) + 1  # the number of the oldest packet held
            start = after + 1 - oldest
            lost = after > 0 and start < 0
            packets = list(itertools.islice(self._packets, max(start, 0), None))
            if not audio:
                packets = [p for p in packets if not p.audio]
            return Followed(packets=packets, cursor=self.packets_added, lost=lost)

    def poke(self) -> None:
        """Wake `wait_until` to check again (something else than the ring changed)."""
        with self.changed:
            self.changed.notify_all()

    def window(self, first_seen: float, last_seen: float, pre_s: float, post_s: float) -> Window:
        """The packets of a clip of what happened from `first_seen` to `last_seen` (wall times): from the keyframe
        at or before `first_seen - pre_s` to the last packet at or before `last_seen + post_s`, of one segment: the
        earliest that overlaps the sighting (else the earliest that overlaps the whole window). Pictures shown before
        that keyframe are left out (an open GOP's leading pictures, which may refer to the GOP before: they would not
        decode). `NoFootage` if the ring holds none of it."""
        start, end = first_seen - pre_s, last_seen + post_s
        with self.changed:
            packets = [p for p in self._packets if not p.audio]
            sounds = [p for p in self._packets if p.audio]
            params = dict(self._params)
            current = self._segment if self._open else None
        runs = _runs(packets)
        chosen = (next((r for r in runs if _overlaps(packets, r, first_seen, last_seen)), None)
                  or next((r for r in runs if _overlaps(packets, r, start, end)), None))
        if chosen is None:
            raise NoFootage("the ring holds nothing of that time")
        lo, hi = chosen
        keys = [i for i in range(lo, hi + 1) if packets[i].keyframe and packets[i].wall <= end]
        if not keys:
            raise NoFootage("the ring holds no keyframe in that time")
        begin = max((i for i in keys if packets[i].wall <= start), default=keys[0])
        stop = max(i for i in range(begin, hi + 1) if packets[i].wall <= end or i == begin)
        gap_before = packets[begin].wall > start and chosen != runs[0]
        segment_over = chosen != runs[-1] or current != packets[hi].segment
        gap_after = packets[stop].wall < end and stop == hi and segment_over
        key = packets[begin]  # the pictures shown before it (an open GOP's leading ones) may need the GOP before
        kept = (key, *(p for p in packets[begin + 1:stop + 1] if p.pts >= key.pts))
        chosen_params = params[packets[lo].segment]
        return Window(params=chosen_params, packets=kept, audio=_audio_of(sounds, chosen_params, kept),
                      cut_at_gap=gap_before or gap_after, late_start=packets[begin].wall > start and not gap_before,
                      early_end=stop == hi and packets[hi].wall < end and not gap_after)


def _runs(packets: list[RecordedPacket]) -> list[tuple[int, int]]:
    """(first index, last index) of each segment's packets, oldest first."""
    runs: list[tuple[int, int]] = []
    for i, p in enumerate(packets):
        if runs and packets[runs[-1][1]].segment == p.segment:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    return runs


def _overlaps(packets: list[RecordedPacket], run: tuple[int, int], a: float, b: float) -> bool:
    return packets[run[0]].wall <= b and packets[run[1]].wall >= a


def _audio_of(sounds: list[RecordedPacket], params: StreamParams, kept: tuple[RecordedPacket, ...]) -> tuple[
        RecordedPacket, ...]:
    """The audio packets of `kept`'s segment shown from its first picture to the end of its last."""
    if params.audio is None or not sounds:
        return ()
    tick, video = float(params.audio.time_base), float(params.time_base)
    start, end = kept[0].pts * video, max(p.pts + p.duration for p in kept) * video
    return tuple(p for p in sounds if p.segment == kept[0].segment and start <= p.pts * tick < end)
