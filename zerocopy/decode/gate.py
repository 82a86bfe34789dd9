"""The decode gate (`--decode-gate auto`, with `--motion`): while nothing needs the frames, decode keyframes only.

A camera that watches an empty scene sends small packets between its keyframes: the picture hardly changes, so the
encoder has little to say. While the frames' consumer (the motion gate, `motion.gate.MotionGate.wants_frames`) says
that nothing is tracked and the last decoded frame showed no motion, the decoder (`decode.gated.GatedCodec`) decodes
keyframes only (motion is measured on them), keeps the other packets since the last keyframe, and watches each one's
size against a quiet baseline. The gate opens when a packet grows past it, when the consumer wants frames again
(motion on a keyframe, an object tracked, a keepalive due), and then the kept packets are decoded from the keyframe
on, as fast as the machine allows, before reading on as without the gate; it closes again once the consumer has wanted
nothing for `CLOSE_AFTER_S` of media time.

The baseline (`SizeBaseline`) is calibrated per stream on the packets that arrive while the consumer wants nothing: at
each position after a keyframe (an encoder spends more on the frames just after one), the `PERCENTILE` of that
position's sizes over the last `WINDOW` keyframe intervals, so noise that makes every packet vary is inside it. A
packet rises when the mean of its and the `RISE_PACKETS - 1` packets before it, each over its position's baseline,
reaches `RISE`, or when it alone reaches `SPIKE`. The gate closes only once every position of the keyframe interval
has `MIN_SAMPLES` quiet sizes. A stream whose packet sizes cannot follow the scene keeps full decoding, said once: one
padded to a constant bit rate (at least `PADDED_SHARE` of the calibration's packets of one size, the encoder's
filler), one with frames reordered (B-frames: a frame's packet is not where the frame is), or one without timestamps.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

log = logging.getLogger("zerocopy")

PERCENTILE = 75  # the baseline at a position: this percentile of its quiet sizes
WINDOW = 8  # quiet keyframe intervals the baseline keeps, per position
MIN_SAMPLES = 3  # quiet sizes every position needs before the gate may close
RISE = 1.4  # packets over their baseline by this much on average (over RISE_PACKETS) open the gate
RISE_PACKETS = 3
SPIKE = 2.5  # one packet this many times its baseline opens it alone
PADDED_SHARE = 0.1  # this share of the quiet packets of one size (±2 bytes): padded (x264 CBR: 22-31 %, VBR 1 %)
CALIBRATION_PACKETS = 400  # the quiet packets the padding test counts (made once, at calibration)
DELAYS_KEPT = 256  # rise-to-inference delays the report keeps, the newest
CLOSE_AFTER_S = 0.5  # media seconds the consumer wanted no frame before the gate closes


def percentile(values: Iterable[int], q: float) -> float:
    """numpy's default (linear) percentile `q` of a few values, without numpy's cost (once a packet)."""
    ordered = sorted(values)
    at = (len(ordered) - 1) * q / 100
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


class SizeBaseline:
    """The quiet sizes of a stream's packets at each position after a keyframe (1: the first packet after it), and
    whether a packet rises above them (see the module)."""

    def __init__(self) -> None:
        self._sizes: dict[int, deque[int]] = {}
        self._recent: deque[float] = deque(maxlen=RISE_PACKETS)
        self.interval = 0  # the longest keyframe interval seen, in packets after the keyframe
        self._all: list[int] = []  # the first CALIBRATION_PACKETS quiet sizes, for the padding test

    def learn(self, position: int, size: int) -> None:
        """A packet at `position` after a keyframe arrived while the consumer wanted nothing."""
        self._sizes.setdefault(position, deque(maxlen=WINDOW)).append(size)
        if len(self._all) < CALIBRATION_PACKETS:
            self._all.append(size)

    def keyframe(self, interval: int) -> None:
        """A keyframe came `interval` packets after the one before."""
        self.interval = max(self.interval, interval)
        self._recent.clear()

    def fresh(self) -> None:
        """The next packet starts the rise test again (after the gate closed)."""
        self._recent.clear()

    @property
    def calibrated(self) -> bool:
        """Every position of the keyframe interval has enough quiet sizes."""
        return self.interval > 1 and all(len(self._sizes.get(p, ())) >= MIN_SAMPLES
                                         for p in range(1, self.interval))

    def expected(self, position: int) -> float:
        """The baseline at `position` (past the longest interval seen: the last position's)."""
        sizes = self._sizes.get(min(position, max(self._sizes, default=position)))
        if not sizes:
            return float("inf")
        return max(1.0, percentile(sizes, PERCENTILE))

    def rises(self, position: int, size: int) -> bool:
        """Whether this packet (the next after those given before, since the keyframe) rises above the baseline."""
        ratio = size / self.expected(position)
        self._recent.append(ratio)
        return ratio >= SPIKE or (len(self._recent) == RISE_PACKETS and sum(self._recent) / RISE_PACKETS >= RISE)

    def padded(self) -> int | None:
        """The size most of the quiet packets learnt so far (the first `CALIBRATION_PACKETS`) were padded to, if
        they were; else None."""
        if not self._all:
            return None
        counts = Counter(self._all)
        size, _ = counts.most_common(1)[0]
        near = sum(n for s, n in counts.items() if abs(s - size) <= 2)
        return size if near >= PADDED_SHARE * len(self._all) else None


@dataclass(kw_only=True)
class GateReport:
    """What the decode gate did on one input: frames read and decoded (keyframes while quiet, catch-ups, and all
    while open), the catch-ups and what opened them, the delay from a packet-size rise to the next inferred frame,
    and why the gate is off (None while it runs)."""

    frames: int = 0
    decoded: int = 0
    catch_ups: int = 0
    opened_by: Counter = field(default_factory=Counter)  # "packet size" or "frames wanted"
    rise_to_inference_ms: deque[float] = field(default_factory=lambda: deque(maxlen=DELAYS_KEPT))
    off: str | None = None

    def to_dict(self) -> dict:
        delays = self.rise_to_inference_ms
        return {"frames": self.frames, "decoded": self.decoded,
                "decoded_share": round(self.decoded / self.frames, 3) if self.frames else None,
                "catch_ups": self.catch_ups, "opened_by": dict(self.opened_by),
                "rise_to_inference_ms": {"count": len(delays), "median": round(float(np.median(delays)), 1),
                                         "max": round(max(delays), 1)} if delays else None,
                "off": self.off}


class Demand:
    """What the frames' consumer says about them, from its thread to the decoder's: after judging each frame,
    whether it wants the next ones decoded (`judge`), and each inferred frame (`inferred`, for the delay from a
    packet-size rise to the next inference). The decoder waits on it (`settled`) where its decision depends on the
    frames it gave already, so a file read as fast as it decodes is gated as a live source is."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.judged = 0  # frames judged so far
        self.wanted = True  # the last one judged wants the next frames decoded
        self.wanted_at: float | None = None  # the media time of the last frame judged wanting the next
        self.wanted_from = math.inf  # the media time from which frames are wanted whatever they show (a keepalive)
        self.last_t: float | None = None  # the media time of the last frame judged
        self._rose: float | None = None  # perf_counter of a packet-size rise not yet followed by an inference
        self.report: GateReport | None = None

    def judge(self, wanted: bool, t: float, wanted_from: float = math.inf) -> None:
        """The consumer judged its next frame (media time `t`): whether it wants the next ones decoded, and from
        which media time it will want them whatever they show (`MotionGate.wanted_from`)."""
        with self._cond:
            self.judged += 1
            self.wanted, self.last_t, self.wanted_from = wanted, t, wanted_from
            if wanted:
                self.wanted_at = t
            self._cond.notify_all()

    def quiet_for(self, since: float | None = None) -> float:
        """Media seconds the consumer has wanted no frame, counted from `since` at the earliest (0 while it wants
        them; inf if it never did and `since` is None)."""
        if self.wanted or self.last_t is None:
            return 0.0
        starts = [t for t in (self.wanted_at, since) if t is not None]
        return self.last_t - max(starts) if starts else float("inf")

    def settled(self, given: int, stop: threading.Event) -> bool:
        """Wait until the consumer judged the `given` frames the decoder gave (False: stopped first)."""
        with self._cond:
            while self.judged < given:
                if stop.is_set():
                    return False
                self._cond.wait(0.05)
        return True

    def rose(self) -> None:
        """A packet-size rise opened the gate (the decoder's thread)."""
        self._rose = time.perf_counter()

    def inferred(self) -> None:
        """A frame goes to inference (the consumer's thread)."""
        rose, self._rose = self._rose, None
        if rose is not None and self.report is not None:
            self.report.rise_to_inference_ms.append((time.perf_counter() - rose) * 1e3)


DECODE, KEYFRAME, KEEP, OPEN, CLOSE = "decode", "keyframe", "keep", "open", "close"


class DecodeGate:
    """One input's gate decisions, packet by packet (`packet(size, key)`), from the sizes and the consumer's
    `Demand`: `DECODE` (open: decode it), `CLOSE` (open until now: finish what the decoder holds, then keep this
    packet), `KEYFRAME` (quiet: decode this keyframe alone, after giving the frames kept before it as not decoded),
    `KEEP` (quiet: keep it, not decoded yet) or `OPEN` (quiet until now: decode the kept packets from the last
    keyframe, then this one, and stay open). A keyframe while quiet is decided once the consumer judged every frame
    given before it (the decoder waits: `Demand.settled`). `off(why)` keeps full decoding from then on."""

    def __init__(self, demand: Demand, report: GateReport | None = None, name: str = "input"):
        self.demand, self.name = demand, name
        self.report = report or GateReport()
        demand.report = self.report
        self.baseline = SizeBaseline()
        self.open = True
        self.position = -1  # packets since the last keyframe (-1: none seen yet)
        self._tested = False  # the padding test was made
        self._opened_at: float | None = None  # the media time of the packet that last opened the gate
        self._t: float | None = None

    def off(self, why: str) -> None:
        """Full decoding from now on, because of `why` (said once, as a warning on the "zerocopy" logger)."""
        if self.report.off is None:
            log.warning("%s: the decode gate is off, every frame is decoded: %s", self.name, why)
            self.report.off = why
        self.open = True

    def packet(self, size: int, key: bool, t: float | None = None) -> str:
        """The decision on the next packet: `size` bytes, a keyframe or not, at media time `t` (from which, when it
        opens the gate, the consumer's quiet is counted before the gate may close again)."""
        self._t = t
        if key:
            if self.position > 0:
                self.baseline.keyframe(self.position)
            self.position = 0
        elif self.position >= 0:
            self.position += 1
        if self.report.off is not None or self.position < 0:
            return DECODE
        return self._while_open(size, key) if self.open else self._while_quiet(size, key)

    def _while_open(self, size: int, key: bool) -> str:
        quiet = not self.demand.wanted
        if quiet and not key:
            self.baseline.learn(self.position, size)
        if not self.baseline.calibrated:
            return DECODE
        if not self._tested:
            self._tested = True
            padded = self.baseline.padded()
            if padded is not None:
                self.off(f"its packets are padded to a constant bit rate ({padded} bytes), so their sizes do not "
                         "follow the scene")
                return DECODE
        if self.demand.quiet_for(self._opened_at) >= CLOSE_AFTER_S:
            self.open = False
            self.baseline.fresh()
            return CLOSE
        return DECODE

    def _while_quiet(self, size: int, key: bool) -> str:
        if key:
            return self._opened("frames wanted") if self.demand.wanted else KEYFRAME
        if self.baseline.rises(self.position, size):
            self.demand.rose()
            return self._opened("packet size")
        self.baseline.learn(self.position, size)
        due = self._t is not None and self._t >= self.demand.wanted_from
        return self._opened("frames wanted") if self.demand.wanted or due else KEEP

    def _opened(self, why: str) -> str:
        self.open = True
        self._opened_at = self._t if self._t is not None else self.demand.last_t
        self.report.catch_ups += 1
        self.report.opened_by[why] += 1
        return OPEN
