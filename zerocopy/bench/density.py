"""Stream density: how many paced copies of one clip a path keeps in real time on this machine."""

from __future__ import annotations

from collections.abc import Callable

from zerocopy.bench.runner import BenchOptions, describe_input, machine, plan, resolved_config, run_worker
from zerocopy.decode.base import GUESSED_RATE
from zerocopy.errors import PathUnavailable, ZeroCopyError
from zerocopy.infer.model import make_core

MAX_LATENCY_MS = 1000.0  # a stream is kept in real time when its p95 arrival-to-result latency stays below


def stream_density(opts: BenchOptions, max_streams: int = 16, log: Callable[[str], None] = lambda _m: None) -> dict:
    """Per path, the most copies of the input (each paced at its native rate, all at once into one model)
    this machine keeps in real time: every frame processed, each stream at ≥ 90 % of its rate, p95
    latency ≤ 1 s. Doubling, then halving
    the gap; each trial in its own process. `opts.frames` frames per stream (at the input's rate)."""
    paths, refused = plan(opts)
    if not paths:
        raise PathUnavailable(refused)
    info = describe_input(opts.input, opts.frames)
    frames = min(opts.frames, info["frames"] or opts.frames)
    # decoding threads and nireq stay "auto": each trial's Detector resolves them for its streams
    config = resolved_config(opts, make_core(None), log).replace(realtime=True)
    common = {"input": opts.input, "frames": frames, "config": config.to_dict(), "kind": "streams",
              "max_latency_ms": MAX_LATENCY_MS, "rate": info.get("rate") or GUESSED_RATE}
    density: dict[str, dict] = {}
    every_frame: dict[str, int] = {}  # with --detect-fps: the same search inferring every frame, side by side
    unavailable = {p: "; ".join(why) for p, why in refused.items()}
    for path in paths:
        if config.detect_fps:
            plain = {**common, "config": config.replace(detect_fps=None).to_dict()}
            every_frame[path] = _search(plain, path, max_streams, log, "every frame")[0]
        good, bad, tried = _search(common, path, max_streams, log, f"{config.detect_fps:g}/s" if config.detect_fps
                                   else "")
        first = tried.get(1, {})
        if "unavailable" in first or "error" in first:
            unavailable[path] = first.get("unavailable") or first["error"]
            continue
        best = tried.get(good, {})
        density[path] = {"streams": good, "capped": bad is None, "fps_per_stream": best.get("fps_per_stream"),
                         "inference_fps_per_stream": best.get("inference_fps_per_stream"),
                         "cpu_percent": best.get("cpu_percent"), "p95_latency_ms": best.get("p95_latency_ms"),
                         "trials": {str(k): {x: v[x] for x in ("ok", "p95_latency_ms", "fps_per_stream",
                                                                "cpu_percent") if x in v} for k, v in tried.items()}}
    if not density:
        raise ZeroCopyError("nothing measured: " + "; ".join(f"{p}: {w}" for p, w in unavailable.items()))
    out = {"machine": machine(), "input": info, "density": density, "unavailable": unavailable,
           "settings": {"model": config.model, "device": config.device, "frames_per_stream": frames,
                        "max_streams": max_streams, "max_p95_latency_ms": MAX_LATENCY_MS, "paced": "native rate"}}
    if config.detect_fps:
        out["settings"]["detect_fps"] = config.detect_fps
        out["every_frame_streams"] = every_frame
        out["detect_fps_vs_every_frame"] = {p: round(density[p]["streams"] / every_frame[p], 2)
                                            for p in density if every_frame.get(p)}
    if "software" in density and density.get("baseline", {}).get("streams"):
        out["software_vs_baseline_streams"] = round(density["software"]["streams"] / density["baseline"]["streams"], 2)
    return out


def _search(common: dict, path: str, max_streams: int, log: Callable[[str], None],
            what: str) -> tuple[int, int | None, dict[int, dict]]:
    """The most streams `path` keeps in real time: doubling, then halving the gap; each trial in its own
    process. Returns (streams kept, the fewest that fell behind or None if capped, every trial's output)."""
    tried: dict[int, dict] = {}

    def trial(n: int) -> bool:
        out = run_worker({**common, "path": path, "streams": n})
        tried[n] = out
        log(f"{path}{f' ({what})' if what else ''}: {n} stream(s): " + (
            f"{'kept up' if out.get('ok') else 'fell behind'} (p95 latency {out.get('p95_latency_ms')} ms, "
            f"{out.get('fps_per_stream')} fps each, CPU {out.get('cpu_percent')}%)" if "streams" in out
            else out.get("error") or out.get("unavailable", "")))
        return bool(out.get("ok"))

    good, bad = 0, None
    n = 1
    while n <= max_streams:
        if trial(n):
            good, n = n, n * 2
        else:
            bad = n
            break
    if bad is not None:
        while bad - good > 1:
            mid = (good + bad) // 2
            good, bad = (mid, bad) if trial(mid) else (good, mid)
    return good, bad, tried
