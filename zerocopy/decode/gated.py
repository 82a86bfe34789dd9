"""The codec side of the decode gate (`decode.gate`): what a `PyAVDecoder` does with each packet while the gate is
open, quiet, opening or closing, on any path (`skip_frame` is the codec context's, with or without VA-API)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import av

from zerocopy.decode.gate import CLOSE, DECODE, KEEP, KEYFRAME, OPEN, DecodeGate, Demand, GateReport


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

    While quiet it keeps every packet since the last keyframe and gives the frames after the keyframe only when the
    next keyframe comes, so that the gate may still open on them (`DecodeGate`: `OPEN` decodes the kept packets from
    the keyframe on, and gives the frames not given yet decoded); a keyframe decodes alone (the codec drained, then
    flushed: its frame threads hold no frame back), with `skip_frame = "NONKEY"`. Frames given before (the keyframe
    decoded again at a catch-up) are decoded for their references and not given twice."""

    def __init__(self, codec: av.VideoCodecContext, time_base, demand: Demand, stop: threading.Event, name: str,
                 report: GateReport | None = None):
        self.codec, self.time_base, self.stop, self.name = codec, time_base, stop, name
        self.gate = DecodeGate(demand, report, name)
        self.report = self.gate.report
        self.demand = demand
        self._gop: list[av.Packet] = []  # the packets since the last keyframe (while the gate runs)
        self._kept: list[Out] = []  # the frames of the packets kept while quiet, not given yet
        self._read_at: dict[int, float] = {}  # when each kept packet was read, by pts
        self._last: int | None = None  # the pts of the last frame given
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
        action = self.gate.packet(packet.size, packet.is_keyframe, t)
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
            return []
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

    def _give_kept(self) -> list[Out]:
        out, self._kept = self._kept, []
        self.given += len(out)
        if out:
            self._last = out[-1].pts if self._last is None else max(self._last, out[-1].pts)
        return out

    def _catch_up(self, packet: av.Packet, read_at: float) -> list[Out]:
        """Decode the kept packets from the last keyframe on (this one after them), full speed."""
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
            if pts is not None and self._last is not None and pts <= self._last:
                continue
            if pts is not None:
                self._last = pts
            at = self._read_at.get(pts, read_at) if pts is not None else read_at
            out.append(Out(frame, pts, float(frame.time) if frame.time is not None else None, at))
        self.given += len(out)
        return out
