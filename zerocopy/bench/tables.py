"""The benchmark's outputs: a terminal table, a Markdown table, and a plot."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from zerocopy.errors import ZeroCopyError, counted
from zerocopy.paths import decode_infer, where_it_runs


def _rows(result: dict) -> list[list[str]]:
    rows = []
    for name, r in result["paths"].items():
        agree = r.get("agreement")
        rows.append([
            name, "/".join(decode_infer(name, r.get("device") or "CPU")), f"{r['fps']:.1f}",
            f"{r['cpu_ms_per_frame']:.2f}", f"{r['cpu_percent']:.0f}",
            f"{r['stages']['decode']['mean_ms']:.2f}", f"{r['stages']['preprocess']['mean_ms']:.3f}",
            f"{r['stages']['inference']['mean_ms']:.2f}", f"{r['stages']['postprocess']['mean_ms']:.3f}",
            f"{r['peak_rss_mb']:.0f}",
            _agreement_cell(agree),
            f"{r['pipeline_efficiency']:.2f}" if r.get("pipeline_efficiency") else "-",
        ])
    return rows


def _agreement_cell(agree: dict | None) -> str:
    """The share of the reference path's detections this path matched, and the boxes it found beyond the
    reference's count (`compare_runs`: the two paths' figures read each other's way round); for an
    image-to-image model, how far its maps' share of pixels from 0.5 up differs at most (`compare_maps`)."""
    if not agree:
        return "-"
    parts = ([f"{agree['matched_share'] * 100:.0f}% matched, {agree['extra']} extra"] if "matched_share" in agree
             else [])
    if "maps" in agree:
        parts.append(f"map share ±{agree['maps']['max_share_diff']:.4f}")
    return f"{', '.join(parts)} vs {agree['reference']}"


HEADER = ["path", "decode/infer", "FPS", "CPU ms/frame", "CPU %", "decode ms", "preprocess ms", "inference ms",
          "postprocess ms", "peak RSS MB", "agreement", "efficiency"]


def _by_thread(cpu: dict) -> str:
    labels = {"decoding": "decoding", "main": "Python main thread", "other": "inference and other workers"}
    return ", ".join(f"{labels.get(k, k)} {v:.2f}" for k, v in cpu.items())


def _vs_baseline_line(name: str, vs: dict) -> str:
    def one(label: str, key: str) -> str | None:
        if key not in vs:
            return None
        lo, hi = vs.get(f"{key}_range", (vs[key], vs[key]))
        return f"{label} × {vs[key]:.2f}" + (f" ({lo:.2f}–{hi:.2f})" if vs.get("pairs", 0) > 1 else "")

    parts = [p for p in (one("FPS", "fps_ratio"), one("CPU/frame", "cpu_ratio")) if p]
    pairs = vs.get("pairs", 0)  # one pair has no range: a median of one, said as such
    what = f"median of {counted(pairs, 'side-by-side pair')} (range)" if pairs > 1 else "one side-by-side pair"
    return f"{name} vs baseline, {what}: {', '.join(parts) or 'no ratio'}"


def _rois_line(rois: dict, what: str = "regions (--classify)") -> str:
    """The region stage (`--classify`; the same figures for `--tiles`): how many regions, what each cost (wall
    time, and the CPU time of the thread that crops), what a frame with regions cost."""
    crop, cpu = rois["per_region_crop_ms"], rois.get("per_region_crop_cpu_ms")
    cpu_text = f"; CPU {cpu['mean_ms']:.3f} ms" if cpu else ""
    return (f"{what}: {rois['regions']:g} in the measured frames, crop {crop['mean_ms']:.3f} "
            f"ms/region (p95 {crop['p95_ms']:.3f}{cpu_text}), "
            f"inference {rois['per_region_inference_ms']['mean_ms']:.2f} ms/region, "
            f"{rois['per_frame_ms']['mean_ms']:.2f} ms per frame with regions, {rois['regions_per_s']:g} regions/s")


def _where_lines(result: dict) -> list[str]:
    """The paths that decode and infer apart (the software path inferring on the GPU), said in words."""
    return [f"{name}: {where_it_runs(name, r['device'])}" for name, r in result["paths"].items()
            if r.get("device") and len(set(decode_infer(name, r["device"]))) == 2]


def _path_notes(result: dict, shown: Callable[[str], str], sep: str) -> list[str]:
    """The lines under either table about each path: against the baseline, CPU by thread, regions and tiles, and
    the paths that could not run (`shown(name)`: the path's name as the table writes it; `sep` after it)."""
    paths = result["paths"].items()
    lines = [_vs_baseline_line(shown(n), r["vs_baseline"]) for n, r in paths if r.get("vs_baseline")]
    lines += [f"{shown(n)}{sep}CPU ms/frame by thread: {_by_thread(r['cpu_ms_per_frame_by_thread'])}"
              for n, r in paths if r.get("cpu_ms_per_frame_by_thread")]
    for n, r in paths:
        if r.get("rois"):
            lines.append(f"{shown(n)}{sep}{_rois_line(r['rois'])}")
        if r.get("tiles"):
            lines.append(f"{shown(n)}{sep}{_rois_line(r['tiles'], 'tiles (--tiles)')}")
    return lines + [f"{shown(n)}: unavailable: {why}" for n, why in result["unavailable"].items()]


def _limits_line(lim: dict) -> str:
    threads = lim.get("decode_threads")
    how = "FFmpeg's own threading" if threads == 0 else f"{counted(threads, 'thread')}, as software decodes"
    errors = lim.get("errors", {})
    if lim.get("decode_only_fps"):
        decode = (f"decode only {lim['decode_only_fps']} fps ({how}; {lim['decode_only_cpu_ms_per_frame']} ms "
                  "CPU/frame)")
    else:
        decode = f"decode only not measured ({errors.get('decode', 'no run')})"
    if lim.get("inference_only_fps"):
        infer = f"inference only {lim['inference_only_fps']} fps"
    else:
        infer = f"inference only not measured ({errors.get('inference', 'no run')})"
    text = f"{decode}, {infer}"
    if lim.get("decode_all_cores_fps"):
        text += (f"; decode with FFmpeg's own threading: {lim['decode_all_cores_fps']} fps "
                 f"({lim['decode_all_cores_cpu_ms_per_frame']} ms CPU/frame)")
    elif "decode-all-cores" in errors:
        text += f"; decode with FFmpeg's own threading not measured ({errors['decode-all-cores']})"
    return text


def measured_frames(result: dict) -> str:
    """The frames each run measured, from the runs themselves ("300", "8", "598–600"), and why fewer
    than asked when so: "8 frames measured after 2 warm-up (the input has 10; 300 asked)"."""
    counts = [n for r in result["paths"].values() for n in r.get("runs_frames") or [r.get("frames")] if n]
    settings = result["settings"]
    asked = settings["frames"]
    lo, hi = (min(counts), max(counts)) if counts else (asked, asked)
    text = f"{lo if lo == hi else f'{lo}–{hi}'} frames measured after {settings['warmup']} warm-up"
    if hi < asked:
        has = result["input"].get("frames")
        short = has and has < settings["warmup"] + asked
        text += f" (the input has {has}; {asked} asked)" if short else f" ({asked} asked)"
    return text


def _footer_runs(result: dict) -> str:
    repeat = result["settings"]["repeat"]
    runs = f"medians of {repeat} interleaved runs" if repeat > 1 else "1 run per path"
    return f"{runs}, {measured_frames(result)}"


def table(result: dict) -> str:
    rows = [HEADER] + _rows(result)
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    lines = ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lim = result["limits"]
    lines.append("")
    lines.append(f"limits: {_limits_line(lim)}")
    lines.append("efficiency = FPS / the slower of decode only (as software decodes) and inference only")
    lines.extend(_where_lines(result))
    lines += _path_notes(result, lambda name: name, ": ")
    if "baseline" in result["paths"]:
        lines.append("baseline: decode = cv2.VideoCapture.grab(); preprocess = retrieve() (the full-size YUV→BGR "
                     "conversion) + cv2.resize")
    inp, m = result["input"], result["machine"]
    lines.append(f"input: {inp['codec']} {inp['width']}x{inp['height']}; machine: {m['cpu']}, {m['cores']} cores; "
                 f"{_footer_runs(result)}")
    return "\n".join(lines)


def markdown(result: dict) -> str:
    out = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    out += ["| " + " | ".join(r) + " |" for r in _rows(result)]
    lim, inp, m = result["limits"], result["input"], result["machine"]
    out.append("")
    out.append(f"Limits: {_limits_line(lim)}. "
               f"Input: {inp['codec']} {inp['width']}×{inp['height']}. Machine: {m['cpu']}, {m['cores']} cores. "
               f"{_footer_runs(result).capitalize()}.")
    out += [f"- {line}" for line in _where_lines(result)]
    out += [f"- {line}" for line in _path_notes(result, lambda name: f"`{name}`", " ")]
    return "\n".join(out) + "\n"


def plot(result: dict, target: str | Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ZeroCopyError("--plot needs matplotlib: pip install 'zerocopy[bench]'") from None
    names = list(result["paths"])
    panels = [
        ("preprocessing time (ms/frame)", [result["paths"][n]["stages"]["preprocess"]["mean_ms"] for n in names]),
        ("CPU time (ms/frame)", [result["paths"][n]["cpu_ms_per_frame"] for n in names]),
        ("throughput (FPS)", [result["paths"][n]["fps"] for n in names]),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8))
    colours = ["#2a9d8f" if n != "baseline" else "#9e9e9e" for n in names]
    for ax, (title, values) in zip(axes, panels, strict=True):
        bars = ax.bar(names, values, color=colours)
        ax.set_title(title)
        ax.bar_label(bars, fmt="%.2f" if max(values, default=0) < 10 else "%.0f", fontsize=8)
        ax.tick_params(axis="x", labelrotation=20)
    inp = result["input"]
    fig.suptitle(f"zerocopy bench: {inp['codec']} {inp['width']}x{inp['height']}, {result['machine']['cpu']}",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(target, dpi=120)
    plt.close(fig)


def density_table(result: dict) -> str:
    """`bench --streams auto`: the streams each path keeps in real time."""
    rows = [("path", "streams", "FPS per stream", "inferences/s per stream", "CPU %", "p95 latency ms")]
    for name, d in result["density"].items():
        streams = f"{d['streams']}{'+' if d.get('capped') else ''}"
        rows.append((name, streams, str(d["fps_per_stream"]), str(d.get("inference_fps_per_stream", "")),
                     str(d["cpu_percent"]), str(d["p95_latency_ms"])))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    s = result["settings"]
    lines.append("")
    lines.append(f"streams: copies of the input at once, each paced at its native rate ({s['frames_per_stream']} "
                 "frames each),")
    lines.append(f"kept in real time: every frame, ≥ 90% of the rate, p95 arrival-to-result latency ≤ "
                 f"{s['max_p95_latency_ms']:.0f} ms; '+': the --max-streams cap was reached")
    if "software_vs_baseline_streams" in result:
        capped = all(result["density"][p].get("capped") for p in ("software", "baseline"))
        lines.append(f"software keeps {result['software_vs_baseline_streams']} × the baseline's streams"
                     + (" (both reached the cap: raise --max-streams)" if capped else ""))
    for name, ratio in result.get("detect_fps_vs_every_frame", {}).items():
        lines.append(f"{name}: inferring {s['detect_fps']:g} frames a second keeps {ratio} × the streams of inferring "
                     f"every frame ({result['every_frame_streams'][name]}, measured in the same run)")
    for name, why in result.get("unavailable", {}).items():
        lines.append(f"{name}: unavailable: {why}")
    return "\n".join(lines)


def plot_density(result: dict, target: str | Path) -> None:
    """A bar per path: the streams it keeps in real time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(result["density"])
    fig, ax = plt.subplots(figsize=(1.6 + 1.2 * len(names), 3.2))
    ax.bar(names, [result["density"][n]["streams"] for n in names], color="#4a7ab8")
    ax.set_ylabel("streams kept in real time")
    ax.set_title(f"stream density ({result['input'].get('width')}x{result['input'].get('height')}, "
                 f"p95 ≤ {result['settings']['max_p95_latency_ms']:.0f} ms)", fontsize=9)
    fig.tight_layout()
    fig.savefig(target, dpi=120)
    plt.close(fig)
