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
