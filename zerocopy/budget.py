"""How a pipeline on the CPU splits the cores between decoding and inference.

Both run at once: the decoder on its own thread(s), OpenVINO on its own. Measured on 2 cores
(BlazeFace, 1080p H.264, `zerocopy bench`): on light footage one decoder thread and one inference
thread took the least CPU per frame and gave the most frames per second (FFmpeg's frame threading
costs 17% more CPU per frame there, decoding alone, and competes with inference for the same
cores). On heavy footage the single decoder thread is the bottleneck; `--decode-threads 0` then
lets FFmpeg use every core, for 22–35% more frames per second at about the same CPU per frame
(docs/performance.md has the figures).
"""

from __future__ import annotations

import os


def usable_cores() -> int:
    """Cores this process may run on (the affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def inference_threads(inputs: int = 1) -> int:
    """OpenVINO's CPU threads: half the cores for one input; every core for `inputs` > 1 decoded at
    once (`--parallel`). There one model serves every stream, so inference is the larger share of the
    work and the busiest: measured on 2 cores with `face-wide`, one inference thread capped the
    pipeline at ~125 frames/s (4 streams at 30 FPS, 1.6 cores busy), two carried 5 streams."""
    return usable_cores() if inputs > 1 else max(1, usable_cores() // 2)


def default_decode_threads(device: str = "CPU", inputs: int = 1) -> int:
    """FFmpeg's decoding threads of each input when none were asked for (`--decode-threads`).

    One input: the cores its inference does not use (all of them when inference runs on a GPU).
    Several at once with CPU inference: one each (inference has every core and the inputs are the
    parallelism; frame threading costs more CPU per frame, and a single-threaded decoder logs on its
    own thread, so FFmpeg's messages stay with their input). With GPU inference: the cores divided
    among the inputs (at least one each)."""
    on_gpu = device.split(".")[0] != "CPU"
    if inputs > 1:  # with GPU inference the CPU would otherwise idle: the cores divided among the inputs
        return max(1, usable_cores() // inputs) if on_gpu else 1
    return usable_cores() if on_gpu else max(1, usable_cores() - inference_threads())
