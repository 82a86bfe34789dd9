"""The codec side of the decode gate (`decode.gate`): what a `PyAVDecoder` does with each packet while the gate is
open, quiet, opening or closing, on any path (`skip_frame` is the codec context's, with or without VA-API)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import av

from zerocopy.decode.gate import CLOSE, DECODE, KEEP, KEYFRAME, OPEN, DecodeGate, Demand, GateReport

HOLD_S = 1.0  # a frame left undecoded is given this long (media time) after it: the gate may open on it meanwhile


@dataclass(frozen=True, slots=True)
class Out:
    """One frame of the stream, in order: its decoded `frame` (None: the gate left it undecoded), its timestamp in
    the stream's time base (`pts`) and in seconds (`time`), and the perf_counter at which its packet was read."""

    frame: Any
    pts: int | None
    time: float | None
    read_at: float


class GatedCodec:
    """Feeds a stream's codec context as the gate decides (`feed(packet, read_at)` → the frames now due, in order).

    While quiet it keeps every packet since the last keyframe and gives each frame after the keyframe undecoded only
    `HOLD_S` of media time after it (or at the next keyframe), so that the gate may still open on it (`DecodeGate`:
    `OPEN` decodes the kept packets from the keyframe on, and gives the frames not given yet decoded) while the
    frames still flow on, a second late at most, whatever the keyframe interval; a keyframe decodes alone (the codec
    drained, then flushed: its frame threads hold no frame back), with `skip_frame = "NONKEY"`. Frames given before
    (the keyframe decoded again at a catch-up) are decoded for their references and not given twice."""

    def __init__(self, codec: av.VideoCodecContext, time_base, demand: Demand, stop: threading.Event, name: str,
                 report: GateReport | None = None, offset: Callable[[], float] = lambda: 0.0):
        self.codec, self.time_base, self.stop, self.name = codec, time_base, stop, name
        self.offset = offset  # what the decoder adds to the stream's times (after a reconnection): the consumer's clock
        self.gate = DecodeGate(demand, report, name)
        self.report = self.gate.report
        self.demand = demand
        self._gop: list[av.Packet] = []  # the packets since the last keyframe (while the gate runs)
        self._kept: list[Out] = []  # the frames of the packets kept while quiet, not given yet
        self._read_at: dict[int, float] = {}  # when each kept packet was read, by pts
        # frames a catch-up decodes again that were given before: the first this many it decodes (frames come out
        # in packet order: no B-frames here). Counted, not compared by timestamp: a stream's clock may go back (a
        # loop, MPEG-TS's 26.5-hour wrap)
        self._skip = 0
        self.given = 0  # frames given so far

    def _off(self, why: str) -> None:
        self.gate.off(why)
        self._gop.clear()

    def feed(self, packet: av.Packet | None, read_at: float) -> list[Out]:
        """The frames due after this packet (None, reading failed, or an empty one, the demuxer's last: the codec
        drained, the kept frames given undecoded)."""
        if packet is None or packet.size == 0:
            return self._give_kept() + self._fresh(self.codec.decode(packet), read_at)
        self.report.frames += 1
        if packet.pts is None:
            self._off("its packets carry no timestamps")
        if packet.is_keyframe and self.codec.has_b_frames:
            self._off("its frames are reordered (B-frames): a packet is not where its frame is")
        quiet_keyframe = packet.is_keyframe and not self.gate.open and self.report.off is None
        if quiet_keyframe and not self.demand.settled(self.given, self.stop):  # the verdict on the keyframe before
            return []
        t = float(packet.pts * self.time_base) if packet.pts is not None else None
        action = self.gate.packet(packet.size, packet.is_keyframe, None if t is None else t + self.offset())
        if action == DECODE:
            if self.report.off is None:
                self._keep_packet(packet)
            return self._fresh(self.codec.decode(packet), read_at)
        if action == CLOSE:
            out = self._fresh(self.codec.decode(None), read_at)  # what the frame threads hold
            self.codec.flush_buffers()
            self.codec.skip_frame = "NONKEY"
            self._hold(packet, read_at)
            return out
        if action == KEEP:
            self._hold(packet, read_at)
            return self._give_kept(t) if t is not None else []
        if action == KEYFRAME:
            out = self._give_kept()
            self.codec.flush_buffers()
            decoded = self.codec.decode(packet) + self.codec.decode(None)
            self.codec.flush_buffers()
            self._keep_packet(packet)
            return out + self._fresh(decoded, read_at)
        assert action == OPEN
        return self._catch_up(packet, read_at)

    def _keep_packet(self, packet: av.Packet) -> None:
        if packet.is_keyframe:
            self._gop.clear()
            self._read_at.clear()
        self._gop.append(packet)

    def _hold(self, packet: av.Packet, read_at: float) -> None:
        self._keep_packet(packet)
        self._read_at[packet.pts] = read_at
        self._kept.append(Out(None, packet.pts, float(packet.pts * self.time_base), read_at))  # kept: pts not None

    def _give_kept(self, now: float | None = None) -> list[Out]:
        """The kept frames, undecoded: all of them, or (at the stream's time `now`) those `HOLD_S` or more before it
        and those after it (the stream's clock went back: they came before)."""
        if now is None:
            out, self._kept = self._kept, []
        else:
            n = next((i for i, k in enumerate(self._kept[:-1]) if now - HOLD_S < k.time <= now), len(self._kept) - 1)
            out, self._kept = self._kept[:n], self._kept[n:]
        self.given += len(out)
        return out

    def _catch_up(self, packet: av.Packet, read_at: float) -> list[Out]:
        """Decode the kept packets from the last keyframe on (this one after them), full speed: those of the frames
        given (the keyframe, those `HOLD_S` old) for the others' references only."""
        self._skip = len(self._gop) - len(self._kept)
        self._kept.clear()
        self.codec.flush_buffers()
        self.codec.skip_frame = "DEFAULT"
        out: list[Out] = []
        if packet.is_keyframe:  # the consumer wanted frames at this keyframe: the interval before it first
            for kept in self._gop:
                out += self._fresh(self.codec.decode(kept), read_at)
            self._keep_packet(packet)
            return out + self._fresh(self.codec.decode(packet), read_at)
        self._keep_packet(packet)
        self._read_at[packet.pts] = read_at
        for kept in self._gop:
            out += self._fresh(self.codec.decode(kept), read_at)
        return out

    def _fresh(self, frames: list, read_at: float) -> list[Out]:
        """The decoded frames not given yet (a catch-up decodes again what was given), as `Out`s."""
        self.report.decoded += len(frames)
        out = []
        for frame in frames:
            pts = frame.pts
            if self._skip > 0:
                self._skip -= 1
                continue
            at = self._read_at.get(pts, read_at) if pts is not None else read_at
            out.append(Out(frame, pts, float(frame.time) if frame.time is not None else None, at))
        self.given += len(out)
        return out
