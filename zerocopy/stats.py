"""Timing, CPU and memory accounting for a run."""

from __future__ import annotations

import os
import platform
import resource
import time
from dataclasses import dataclass, field

import numpy as np

STAGES = ("decode", "preprocess", "inference", "postprocess")


def summarise(values: list[float]) -> dict[str, float]:
    if not values:
        return {"mean_ms": 0.0, "p50_ms": 0.0, "p95_ms": 0.0}
    a = np.asarray(values, np.float64)
    return {"mean_ms": round(float(a.mean()), 3), "p50_ms": round(float(np.percentile(a, 50)), 3),
            "p95_ms": round(float(np.percentile(a, 95)), 3)}


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
        import ctypes

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
class StageTimes:
    samples: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in STAGES})

    def add(self, decode: float, preprocess: float, inference: float, postprocess: float) -> None:
        for name, v in zip(STAGES, (decode, preprocess, inference, postprocess), strict=True):
            self.samples[name].append(v)

    def summary(self) -> dict[str, dict[str, float]]:
        return {name: summarise(v) for name, v in self.samples.items()}
