"""Timing, CPU and memory accounting for a run."""

from __future__ import annotations

import ctypes
import math
import os
import platform
import resource
import time
from array import array
from dataclasses import dataclass, field

import numpy as np

STEPS = ("decode", "preprocess", "inference", "postprocess")  # the timed steps of every frame, in order


_LOW_MS, _HIGH_MS, _WIDTH = 0.01, 60_000.0, 1.02  # `Distribution`'s bins (module constants: `add` is hot)
_PER_LOW, _PER_LOG = 1.0 / _LOW_MS, 1.0 / math.log(_WIDTH)
_OVER = math.ceil(math.log(_HIGH_MS / _LOW_MS) * _PER_LOG) + 1  # the bin of times over _HIGH_MS


class Distribution:
    """Times in ms, in bounded memory whatever their number: a count per log-spaced bin (`BINS` of
    them, 2 % wide, from 0.01 ms to 60 s; about 6 KB) plus the exact count, sum, minimum and maximum.

    `mean` is exact. A percentile (numpy's default, linear between the two nearest ranks) is within
    1 % (relative) of numpy's on the same values: each rank is estimated by its bin's geometric
    middle (at most √1.02 − 1 < 1 % from any value in the bin), clamped to [min, max]. Times under
    0.01 ms are within 0.005 ms; times over 60 s count as the longest seen. The smallest and the
    largest are exact.
    """

    LOW_MS, HIGH_MS, WIDTH = _LOW_MS, _HIGH_MS, _WIDTH
    BINS = _OVER - 1  # 788

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget every time added so far (e.g. a benchmark's warm-up)."""
        self._counts = array("q", bytes(8 * (self.BINS + 2)))  # [0]: under LOW_MS, [BINS + 1]: over HIGH_MS
        self.count, self.total = 0, 0.0
        self.min, self.max = math.inf, -math.inf

    def add(self, ms: float) -> None:
        self.count += 1
        self.total += ms
        if ms < self.min:
            self.min = ms
        if ms > self.max:
            self.max = ms
        if ms < self.LOW_MS:
            self._counts[0] += 1
        else:
            self._counts[min(int(math.log(ms * _PER_LOW) * _PER_LOG) + 1, _OVER)] += 1

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0

    def _rank(self, cumulative: np.ndarray, rank: int) -> float:
        """The value of the `rank`-th smallest time (0-based), estimated from its bin."""
        if rank <= 0 or rank >= self.count - 1:
            return self.min if rank <= 0 else self.max
        b = int(np.searchsorted(cumulative, rank, side="right"))
        if b == 0:
            guess = (self.min + self.LOW_MS) / 2
        elif b > self.BINS:
            guess = self.max
        else:
            guess = self.LOW_MS * self.WIDTH ** (b - 0.5)
        return min(max(guess, self.min), self.max)

    def percentile(self, q: float) -> float:
        if not self.count:
            return 0.0
        cumulative = np.cumsum(np.frombuffer(self._counts, np.int64))
        k = q / 100.0 * (self.count - 1)
        lo, frac = int(k), k - int(k)
        low = self._rank(cumulative, lo)
        return low if not frac else low + frac * (self._rank(cumulative, lo + 1) - low)

    def summary(self) -> dict[str, float]:
        return {"mean_ms": round(self.mean, 3), "p50_ms": round(self.percentile(50), 3),
                "p95_ms": round(self.percentile(95), 3)}


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


DECODER_THREAD_NAME = "zc-decode"  # the OS name of the read-ahead thread (top and /proc show it)


def _task_cpu(task: str) -> tuple[str, float] | None:
    """(name, CPU seconds) of one thread: nanoseconds from `schedstat` where the kernel keeps them,
    else `stat`'s user + system clock ticks (10 ms steps). None if the thread has ended."""
    try:
        with open(f"{task}/stat", encoding="utf-8", errors="replace") as f:
            stat = f.read()
    except OSError:
        return None
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    try:
        with open(f"{task}/schedstat", encoding="ascii") as f:
            ns = int(f.read().split()[0])
        if ns > 0:
            return name, ns / 1e9
    except (OSError, ValueError, IndexError):
        pass
    fields = stat[stat.rindex(")") + 2 :].split()
    return name, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_cpu_seconds() -> dict[int, tuple[str, float]]:
    """CPU seconds so far of this process's live threads: `{tid: (kind, seconds)}`. Kinds:
    `decoding` (FFmpeg's `av:…` threads and the read-ahead thread), `main` (the Python main thread),
    `other` (OpenVINO's and OpenCV's workers, callbacks). Empty where /proc is missing."""
    pid = os.getpid()
    out: dict[int, tuple[str, float]] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        found = _task_cpu(f"/proc/{pid}/task/{tid}")
        if found is None:
            continue  # ended meanwhile
        name, seconds = found
        kind = ("main" if int(tid) == pid
                else "decoding" if name.startswith(("av:", DECODER_THREAD_NAME)) else "other")
        out[int(tid)] = (kind, seconds)
    return out


def cpu_by_thread_kind(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]],
                       frames: int) -> dict[str, float]:
    """ms of CPU per frame by thread kind between two `thread_cpu_seconds()` samples (threads that
    ended in between are missing; their share stays in the process total)."""
    totals = {"decoding": 0.0, "main": 0.0, "other": 0.0}
    for tid, (kind, seconds) in after.items():
        totals[kind] += seconds - before.get(tid, (kind, 0.0))[1]
    return {k: round(1e3 * v / frames, 3) for k, v in totals.items()} if frames and after else {}


def name_this_thread(name: str) -> None:
    """Give the calling thread an OS-level name (Linux; at most 15 bytes), as `top -H` shows."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(15, name.encode()[:15], 0, 0, 0)  # PR_SET_NAME
    except (OSError, AttributeError):
        pass


@dataclass
class RunClock:
    """Wall and process-CPU time from construction to `stop()`."""

    wall0: float = field(default_factory=time.perf_counter)
    cpu0: float = field(default_factory=lambda: sum(os.times()[:2]))
    wall: float = 0.0
    cpu: float = 0.0

    def restart(self) -> float:
        """Start again from now (after set-up); returns the seconds spent until now."""
        now = time.perf_counter()
        spent, self.wall0, self.cpu0 = now - self.wall0, now, sum(os.times()[:2])
        return spent

    def stop(self) -> None:
        self.wall = time.perf_counter() - self.wall0
        self.cpu = sum(os.times()[:2]) - self.cpu0


@dataclass
class StepTimes:
    """Each timed step's time per frame (`STEPS`; `Distribution`: bounded memory, however long the run)."""

    steps: dict[str, Distribution] = field(default_factory=lambda: {s: Distribution() for s in STEPS})

    def add(self, decode: float, preprocess: float, inference: float, postprocess: float) -> None:
        for name, v in zip(STEPS, (decode, preprocess, inference, postprocess), strict=True):
            self.steps[name].add(v)

    @property
    def stages(self) -> dict[str, Distribution]:
        """deprecated name of `steps`"""
        return self.steps

    def reset(self) -> None:
        """Forget the frames so far: what follows is measured alone (a benchmark's warm-up is over)."""
        for d in self.steps.values():
            d.reset()

    def summary(self) -> dict[str, dict[str, float]]:
        return {name: d.summary() for name, d in self.steps.items()}
