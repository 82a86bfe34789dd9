"""Runs the benchmark: paths interleaved (A B C A B C …) so that drift on a shared machine hits all
alike, each run in its own process, warm-up frames excluded, medians over the repeats."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from zerocopy.agreement import compare_runs
from zerocopy.budget import decode_threads
from zerocopy.errors import InputError
from zerocopy.paths import AUTO_ORDER

BENCH_PATHS = (*AUTO_ORDER, "baseline")


@dataclass
class BenchOptions:
    input: str
    paths: list[str] | None = None
    model: str = "face"
    device: str = "auto"
    nireq: int | None = None
    frames: int = 300
    warmup: int = 30
    repeat: int = 3
    threshold: float = 0.5
    ov_config: dict[str, str] = field(default_factory=dict)
    decode_threads: int | None = None
    batch: int = 1


def _worker(args: dict) -> dict:
    proc = subprocess.run([sys.executable, "-m", "zerocopy.bench.worker", json.dumps(args)],
                          capture_output=True, text=True, timeout=1800)
    lines = proc.stdout.strip().splitlines()
    try:
        return json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"worker exited {proc.returncode}: {tail}"}


def _median_stats(runs: list[dict]) -> dict:
    out = {k: round(statistics.median(r[k] for r in runs), 3)
           for k in ("fps", "cpu_ms_per_frame", "cpu_percent", "peak_rss_mb")}
    out["stages"] = {
        stage: {stat: round(statistics.median(r["stages"][stage][stat] for r in runs), 3)
                for stat in runs[0]["stages"][stage]}
        for stage in runs[0]["stages"]
    }
    by_thread = [r["cpu_ms_per_frame_by_thread"] for r in runs if r.get("cpu_ms_per_frame_by_thread")]
    if by_thread:
        out["cpu_ms_per_frame_by_thread"] = {k: round(statistics.median(b[k] for b in by_thread), 3)
                                             for k in by_thread[0]}
    out["device"], out["nireq"], out["repeats"] = runs[0]["device"], runs[0]["nireq"], len(runs)
    out["runs_fps"] = [r["fps"] for r in runs]
    return out


def _vs_baseline(runs: list[dict], baseline: list[dict]) -> dict | None:
    """FPS and CPU-per-frame ratios against the baseline, per interleaved pair (run i of each, made
    side by side), so that drift between repeats cancels: median and range over the pairs."""
    pairs = list(zip(runs, baseline, strict=False))
    if not pairs:
        return None
    out: dict = {"pairs": len(pairs)}
    for key, name in (("fps", "fps_ratio"), ("cpu_ms_per_frame", "cpu_ratio")):
        ratios = [r[key] / b[key] for r, b in pairs if b[key]]
        if ratios:
            out[name] = round(statistics.median(ratios), 3)
            out[f"{name}_range"] = [round(min(ratios), 3), round(max(ratios), 3)]
    return out


def _median(runs: list[dict], key: str) -> float | None:
    return round(statistics.median(r[key] for r in runs), 3) if runs else None


def describe_input(path: str) -> dict:
    from zerocopy.decode.pyav import open_input

    with open_input(path) as c:
        s = c.streams.video[0]
        cc = s.codec_context
        return {"path": path, "codec": cc.name, "width": cc.width, "height": cc.height,
                "frames": s.frames or None, "rate": float(s.average_rate) if s.average_rate else None}


def machine() -> dict:
    import av
    import openvino as ov

    from zerocopy.stats import cpu_name

    return {"cpu": cpu_name(), "cores": os.cpu_count(), "python": sys.version.split()[0],
            "openvino": ov.get_version(), "pyav": av.__version__,
            "ffmpeg_libavcodec": ".".join(map(str, av.library_versions["libavcodec"]))}


def plan_paths(opts: BenchOptions) -> tuple[list[str], dict[str, str]]:
    """Paths to run and, for the others, why not (never dropped silently)."""
    from zerocopy.infer.model import make_core
    from zerocopy.probe import gather, refusals, verdicts

    wanted = opts.paths or list(BENCH_PATHS)
    facts = gather(make_core(None).available_devices)
    static = {p: "; ".join(r) for p, r in refusals(facts, opts.batch, True, opts.device).items()}
    if "baseline" in wanted and verdicts(facts)["baseline"] != "available":
        static["baseline"] = verdicts(facts)["baseline"].removeprefix("unavailable: ")
    return [p for p in wanted if p not in static], {p: static[p] for p in wanted if p in static}


def run_bench(opts: BenchOptions, log: Callable[[str], None] = lambda _m: None) -> dict:
    from zerocopy.infer.model import make_core, pick_device

    if opts.warmup < 1 or opts.frames < 1 or opts.repeat < 1:
        raise InputError("--frames, --warmup and --repeat must be at least 1")
    info = describe_input(opts.input)
    if info["frames"] and info["frames"] < opts.warmup + opts.frames:
        log(f"the input has {info['frames']} frames; measuring the {max(0, info['frames'] - opts.warmup)} "
            f"after the {opts.warmup} warm-up frames")
    paths, unavailable = plan_paths(opts)
    threads = decode_threads(opts.decode_threads, pick_device(make_core(None), opts.device))
    common = {"input": opts.input, "model": opts.model, "device": opts.device, "nireq": opts.nireq,
              "frames": opts.frames, "warmup": opts.warmup, "threshold": opts.threshold, "ov_config": opts.ov_config,
              "decode_threads": threads, "batch": opts.batch}
    runs: dict[str, list[dict]] = {p: [] for p in paths}
    # "decode": as the software path decodes; "decode-all-cores": FFmpeg's own threading, for contrast
    limits: dict[str, list[dict]] = {"decode": [], "inference": []}
    if threads != 0:
        limits["decode-all-cores"] = []
    with tempfile.TemporaryDirectory(prefix="zerocopy-bench-") as tmp:
        detections: dict[str, Path] = {}
        total = opts.repeat * (len(paths) + len(limits))
        done = 0
        for rep in range(opts.repeat):
            for name in list(paths) + list(limits):
                if name in limits:
                    kind, extra = ("decode", {"decode_threads": 0}) if name == "decode-all-cores" else (name, {})
                    out = _worker({**common, "kind": kind, **extra})
                    if "error" not in out:
                        limits[name].append(out)
                else:
                    if name in unavailable:
                        continue
                    jsonl = Path(tmp) / f"{name}-{rep}.jsonl"
                    out = _worker({**common, "kind": "path", "path": name, "jsonl": str(jsonl)})
                    if "unavailable" in out or "error" in out:
                        unavailable[name] = out.get("unavailable") or out["error"]
                        continue
                    runs[name].append(out)
                    detections.setdefault(name, jsonl)
                done += 1
                log(f"[{done}/{total}] {name}: " + (f"{out['fps']} fps" if "fps" in out else out.get("error", "")))
        lines = {p: [json.loads(x) for x in f.read_text().splitlines()] for p, f in detections.items()}

    result_paths = {}
    for name in paths:
        if name in unavailable or not runs[name]:
            continue
        entry = _median_stats(runs[name])
        ref = "baseline" if name == "software" else "software"
        if ref in lines and name in lines:
            entry["agreement"] = {"reference": ref, **compare_runs(lines[ref], lines[name])}
        if name != "baseline" and runs.get("baseline"):
            entry["vs_baseline"] = _vs_baseline(runs[name], runs["baseline"])
        result_paths[name] = entry
    lim = {
        "decode_only_fps": _median(limits["decode"], "fps"),
        "decode_only_cpu_ms_per_frame": _median(limits["decode"], "cpu_ms_per_frame"),
        "inference_only_fps": _median(limits["inference"], "fps"),
        "decode_threads": threads,
    }
    if "decode-all-cores" in limits:
        lim["decode_all_cores_fps"] = _median(limits["decode-all-cores"], "fps")
        lim["decode_all_cores_cpu_ms_per_frame"] = _median(limits["decode-all-cores"], "cpu_ms_per_frame")
    bounds = [v for v in (lim["decode_only_fps"], lim["inference_only_fps"]) if v]
    bound = min(bounds) if bounds else None
    for entry in result_paths.values():
        entry["pipeline_efficiency"] = round(entry["fps"] / bound, 3) if bound else None
    return {
        "machine": machine(),
        "input": info,
        "settings": {"model": opts.model, "device": opts.device, "nireq": opts.nireq, "frames": opts.frames,
                     "warmup": opts.warmup, "repeat": opts.repeat, "order": "interleaved",
                     "ov_config": opts.ov_config, "decode_threads": threads, "batch": opts.batch},
        "paths": result_paths,
        "unavailable": unavailable,
        "limits": lim,
    }
