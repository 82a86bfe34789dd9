"""The OpenVINO properties a model is compiled with, per device and task, and why."""

from __future__ import annotations

from typing import Any

from zerocopy.budget import inference_threads


def default_config(device: str, inputs: int = 1, task: str = "detect") -> dict[str, Any]:
    """THROUGHPUT everywhere, without OpenVINO's automatic batching; on the CPU, inference gets
    `budget.inference_threads(inputs)`: half the cores for one input, every core for several, and
    models whose outputs are read as values (`task` "process": maps; "classify": region models'
    landmarks and scores) run in f32.

    Why f32 there: on a CPU with AVX512_BF16 or AMX, OpenVINO's CPU plugin runs every model in bf16
    unless told otherwise (2025.4, 2026.3 and 2026.4 alike). Measured on a 2-core AMD EPYC with AVX512_BF16
    (OpenVINO 2026.4.1), bf16 against f32 on the person clip of tests/e2e/test_process.py: the
    `person-mask` map differs by up to 0.997 (0.004 on average) and 3.8 % of its mask pixels flip
    across 0.5; `text-map` by up to 0.22, 0.4 % of its text pixels flipped; the hand landmarks by up to
    0.58 px. For detectors bf16 moves scores by ~1e-4 (docs/architecture.md), and costs 1.3-1.8x less time
    (face 0.70 vs 0.92 ms, objects 7.9 vs 14.3 ms): they keep the CPU's default. `--ov-config
    INFERENCE_PRECISION_HINT=bf16` (or f32) overrides either.

    zerocopy batches itself (`--batch`). On a GPU, THROUGHPUT would otherwise let OpenVINO wrap the
    model in its BATCH device: DetectionOutput models then go to HETERO:BATCH,GPU, which cannot
    compile on a remote context; other models get a batch that the few requests in flight never
    fill (each waits for the batch timeout); and a full batch copies its inputs with `data()`,
    which remote tensors do not implement.

    On the CPU, decoding and inference share the cores. Measured on 2 cores with BlazeFace over a
    1080p H.264 clip, the whole pipeline took 2.0 ms of CPU per frame with one inference thread
    against 3.3 ms with THROUGHPUT's two stream threads (which mostly wake and spin); FPS was level
    within noise. Override with `--ov-config INFERENCE_NUM_THREADS=…` for big models.
    """
    cfg: dict[str, Any] = {"PERFORMANCE_HINT": "THROUGHPUT", "ALLOW_AUTO_BATCHING": "NO"}
    if device.split(".")[0] == "CPU":
        cfg["INFERENCE_NUM_THREADS"] = str(inference_threads(inputs))
        if task != "detect":
            cfg["INFERENCE_PRECISION_HINT"] = "f32"
    return cfg
