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

import av
import openvino as ov

from zerocopy.agreement import agreement
from zerocopy.bench.clip import describe_input
from zerocopy.catalog import CATALOG
from zerocopy.config import AUTO_ORDER, RunConfig
from zerocopy.errors import InputError, PathUnavailable, ZeroCopyError
from zerocopy.infer.model import make_core, pick_device
from zerocopy.plan import plan_detection, plan_processing
from zerocopy.probe import gather, refusals, verdicts
from zerocopy.stats import cpu_name

BENCH_PATHS = (*AUTO_ORDER, "baseline")
_Runs = dict[str, list[dict]]  # a path's (or a limit's) name → what its runs gave


@dataclass(kw_only=True)
class BenchOptions:
    """What to measure (`input`, `paths`), how long (`frames` after `warmup`, `repeat` runs) and with
    which run settings (`config`: each worker gets it whole, as JSON)."""

    input: str
    config: RunConfig = field(default_factory=RunConfig)
    paths: list[str] | None = None
    frames: int = 300
    warmup: int = 30
    repeat: int = 3


def run_worker(args: dict) -> dict:
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
    for stage in ("rois", "tiles"):
        each = [r[stage] for r in runs if r.get(stage)]
        if each:
            out[stage] = _median_rois(each)
    return out


def _median_rois(rois: list[dict]) -> dict:
    """The region stage (`--classify`, or `--tiles`) over the repeats: medians of its counts and times."""
    out: dict = {k: round(statistics.median(r[k] for r in rois), 3) for k in ("regions", "regions_per_s")}
    for key in ("per_region_crop_ms", "per_region_crop_cpu_ms", "per_region_inference_ms", "per_frame_ms"):
        if all(key in r for r in rois):
            out[key] = {stat: round(statistics.median(r[key][stat] for r in rois), 3) for stat in rois[0][key]}
    return out


def _vs_baseline(runs: list[dict], baseline: list[dict]) -> dict | None:
    """FPS and CPU-per-frame ratios against the baseline, per interleaved pair (run i of each, made
    side by side), so that drift between repeats cancels: median and range over the pairs. None
    when no pair gives a ratio."""
    pairs = list(zip(runs, baseline, strict=False))
    out: dict = {"pairs": len(pairs)}
    for key, name in (("fps", "fps_ratio"), ("cpu_ms_per_frame", "cpu_ratio")):
        ratios = [r[key] / b[key] for r, b in pairs if b.get(key) and r.get(key)]
        if ratios:
            out[name] = round(statistics.median(ratios), 3)
            out[f"{name}_range"] = [round(min(ratios), 3), round(max(ratios), 3)]
    return out if len(out) > 1 else None


def _median(runs: list[dict], key: str) -> float | None:
    return round(statistics.median(r[key] for r in runs), 3) if runs else None


def frames_to_measure(info: dict, opts: BenchOptions, log: Callable[[str], None]) -> int:
    """Frames each run measures after its warm-up: `opts.frames`, or what the input has past the
    warm-up (with a notice); an input with nothing past the warm-up is refused."""
    have = info["available"]
    if have >= opts.warmup + opts.frames:
        return opts.frames
    path, warmup = info["path"], opts.warmup
    if have == 0:
        raise InputError(f"{path}: no video frame to measure")
    if have == 1:
        what = "a still image, not a video" if info["still"] else "a single frame"
        raise InputError(f"{path}: {what}: bench needs a clip longer than its warm-up (--warmup {warmup})")
    if have <= warmup:
        raise InputError(f"{path}: {have} frames, none past the {warmup} warm-up ones: use a longer clip or "
                         f"--warmup {have - 1} or less")
    log(f"{path} has {have} frames, fewer than {warmup} warm-up + {opts.frames} to measure: "
        f"measuring the {have - warmup} after the warm-up")
    return have - warmup


def machine() -> dict:
    return {"cpu": cpu_name(), "cores": os.cpu_count(), "python": sys.version.split()[0],
            "openvino": ov.get_version(), "pyav": av.__version__,
            "ffmpeg_libavcodec": ".".join(map(str, av.library_versions["libavcodec"]))}


def plan(opts: BenchOptions) -> tuple[list[str], dict[str, list[str]]]:
    """Paths to run and, for the others, why not (never dropped silently)."""
    wanted = opts.paths or list(BENCH_PATHS)
    facts = gather(make_core(None).available_devices)
    static = refusals(facts, opts.config.batch, True, opts.config.device)
    if "baseline" in wanted and verdicts(facts)["baseline"] != "available":
        static["baseline"] = [verdicts(facts)["baseline"].removeprefix("unavailable: ")]
    return [p for p in wanted if p not in static], {p: static[p] for p in wanted if p in static}


def is_process_model(model: str) -> bool:
    return model in CATALOG and CATALOG[model].task == "process"


def _frames_line(counts: list[int]) -> int | str:
    lo, hi = min(counts), max(counts)
    return lo if lo == hi else f"{lo}–{hi}"


def run_bench(opts: BenchOptions, log: Callable[[str], None] = lambda _m: None) -> dict:
    """Refuses up front (`InputError`: nothing past the warm-up; `PathUnavailable`: none of the
    paths asked for can run here); raises `ZeroCopyError` when no path measured anything. Every
    figure comes from frames actually measured: each path's `frames`, `settings.frames_per_run`."""
    if opts.warmup < 1 or opts.frames < 1 or opts.repeat < 1:
        raise InputError("--frames, --warmup and --repeat must be at least 1")
    paths, refused = plan(opts)
    if not paths:
        raise PathUnavailable(refused)
    core = make_core(None)
    resolved = resolved_config(opts, core, log)
    info = describe_input(opts.input, opts.warmup + opts.frames)
    frames = frames_to_measure(info, opts, log)
    unavailable = {p: "; ".join(why) for p, why in refused.items()}
    # the software path's decoding threads next to inference on the device `auto` picks, for every path
    config = resolved.resolve(device=pick_device(core, opts.config.device)).replace(
        device=opts.config.device)
    threads = config.decode_threads
    common = {"input": opts.input, "frames": frames, "warmup": opts.warmup, "config": config.to_dict()}
    runs, limits, limit_errors, lines = _interleaved(paths, common, threads, unavailable, opts.repeat, log)
    result_paths = _path_results(paths, runs, lines, unavailable, frames, log)
    lim = _limits(limits, limit_errors, threads)
    bounds = [v for v in (lim["decode_only_fps"], lim["inference_only_fps"]) if v]
    bound = min(bounds) if len(bounds) == 2 else None  # with one limit unmeasured, the slower is unknown
    for entry in result_paths.values():
        entry["pipeline_efficiency"] = round(entry["fps"] / bound, 3) if bound else None
    return {
        "machine": machine(),
        "input": {k: v for k, v in info.items() if k not in ("available", "still")},
        "settings": {"model": config.model, "device": config.device, "nireq": opts.config.nireq,
                     "frames": opts.frames, "frames_per_run": frames, "warmup": opts.warmup, "repeat": opts.repeat,
                     "order": "interleaved", "ov_config": config.ov_config, "decode_threads": threads,
                     "batch": config.batch, "config": config.to_dict()},
        "paths": result_paths,
        "unavailable": unavailable,
        "limits": lim,
    }


def resolved_config(opts: BenchOptions, core, log: Callable[[str], None]) -> RunConfig:
    """`opts.config` resolved for its model by the run's plan, as `detect` and `process` make it (`plan.py`): the
    model read, `classes` and `classify` checked against its labels, the region models pulled, once, before
    measuring: a model that cannot be read or fed, or a bad name, is one error, not a refusal of every path."""
    make = plan_processing if is_process_model(opts.config.model) else plan_detection
    return make(opts.config, core, log=log).config


def _interleaved(paths: list[str], common: dict, threads: int, unavailable: dict[str, str], repeat: int,
                 log: Callable[[str], None]) -> tuple[_Runs, _Runs, dict[str, str], dict[str, list[dict]]]:
    """Every run, each in a worker process, `repeat` rounds of the paths then the limits: each path's runs, each
    limit's runs, each limit's first error, and the detections of each path's first run (its JSON Lines). A path
    that cannot run is put in `unavailable` and not run again."""
    runs: _Runs = {p: [] for p in paths}
    # "decode": as the software path decodes; "decode-all-cores": FFmpeg's own threading, for contrast
    limits: _Runs = {"decode": [], "inference": []}
    if threads != 0:
        limits["decode-all-cores"] = []
    limit_errors: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="zerocopy-bench-") as tmp:
        detections: dict[str, Path] = {}
        total = repeat * (len(paths) + len(limits))
        done = 0
        for rep in range(repeat):
            for name in list(paths) + list(limits):
                if name in limits:
                    all_cores = {**common["config"], "decode_threads": 0}
                    kind, extra = ("decode", {"config": all_cores}) if name == "decode-all-cores" else (name, {})
                    out = run_worker({**common, "kind": kind, **extra})
                    if "error" in out:
                        limit_errors.setdefault(name, out["error"])
                    else:
                        limits[name].append(out)
                else:
                    if name in unavailable:
                        continue
                    jsonl = Path(tmp) / f"{name}-{rep}.jsonl"
                    out = run_worker({**common, "kind": "path", "path": name, "jsonl": str(jsonl)})
                    if "unavailable" in out or "error" in out:
                        unavailable[name] = out.get("unavailable") or out["error"]
                        total -= repeat - rep - 1  # not run again
                    else:
                        runs[name].append(out)
                        detections.setdefault(name, jsonl)
                done += 1
                log(f"[{done}/{total}] {name}: " + (f"{out['fps']} fps" if "fps" in out else
                                                    out.get("error") or out.get("unavailable", "")))
        lines = {p: [json.loads(x) for x in f.read_text().splitlines()] for p, f in detections.items()}
    return runs, limits, limit_errors, lines


def _path_results(paths: list[str], runs: _Runs, lines: dict[str, list[dict]], unavailable: dict[str, str],
                  frames: int, log: Callable[[str], None]) -> dict[str, dict]:
    """Each path measured: the medians of its runs, its agreement with its reference path and its ratios to the
    baseline; `ZeroCopyError` when none was, with why (paths that failed alike said together)."""
    result_paths = {}
    for name in paths:
        if name in unavailable or not runs[name]:
            continue
        entry = _median_stats(runs[name])
        measured = [r["frames"] for r in runs[name]]
        entry["frames"] = int(statistics.median(measured))
        entry["runs_frames"] = measured
        if min(measured) < frames:
            log(f"{name}: {_frames_line(measured)} frames measured per run, not {frames}: the input decodes "
                "fewer frames than it holds")
        ref = "baseline" if name == "software" else "software"
        if ref in lines and name in lines and (agree := agreement(lines[ref], lines[name])):
            entry["agreement"] = {"reference": ref, **agree}
        if name != "baseline" and runs.get("baseline"):
            vs = _vs_baseline(runs[name], runs["baseline"])
            if vs:
                entry["vs_baseline"] = vs
        result_paths[name] = entry
    if not result_paths:
        by_reason: dict[str, list[str]] = {}
        for name in paths:
            by_reason.setdefault(unavailable.get(name, "no run"), []).append(name)
        raise ZeroCopyError("nothing measured: " + "; ".join(f"{', '.join(names)}: {why}"
                                                             for why, names in by_reason.items()))
    return result_paths


def _limits(limits: _Runs, limit_errors: dict[str, str], threads: int) -> dict:
    """The medians of the decode-only and inference-only runs (None: not measured), with why a limit failed."""
    lim = {
        "decode_only_fps": _median(limits["decode"], "fps"),
        "decode_only_cpu_ms_per_frame": _median(limits["decode"], "cpu_ms_per_frame"),
        "inference_only_fps": _median(limits["inference"], "fps"),
        "decode_threads": threads,
    }
    if "decode-all-cores" in limits:
        lim["decode_all_cores_fps"] = _median(limits["decode-all-cores"], "fps")
        lim["decode_all_cores_cpu_ms_per_frame"] = _median(limits["decode-all-cores"], "cpu_ms_per_frame")
    failed = {name: why for name, why in limit_errors.items() if not limits[name]}
    if failed:
        lim["errors"] = failed
    return lim
