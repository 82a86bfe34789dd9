#!/usr/bin/env python3
"""Collect everything a hardware run should send back into one JSON file, and print a summary.

    python scripts/igpu_report.py [--out FILE] [--frames N] [--skip-tests]

1. `zerocopy doctor` (versions, devices, render nodes, OpenCL, native bridge, verdict per path);
2. the hardware tests (`pytest -m igpu`), pass/fail/skip with messages;
3. every path on the same 1080p H.264 clip (made from a real photo), run in turn: FPS, CPU per frame,
   per-step times, and agreement of each path's detections with the software path's;
4. region crops (`classify=["face-mesh"]`) on every path on a 720p clip: the region stage's times per
   region and per frame, and how far each path's landmarks are from the software path's (issue 17);
5. small objects with `--tiles 1` (`objects` on a 1080p clip of a person at a fifth of the height) on every
   path: FPS, the tiles' times, and agreement with the software path;
6. stream density (`zerocopy bench --streams auto`);
7. what the motion gate buys (issue 28): stream density on busy-20.mp4 (a 1080p30 camera busy ~20 % of the
   time, `scripts/make_bench_clips.py`) at `--detect-fps 5`, with and without `--motion`, side by side.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from zerocopy.agreement import compare_runs
from zerocopy.api import Detector
from zerocopy.cli.detect import Outputs, run_detect
from zerocopy.doctor import collect
from zerocopy.errors import ZeroCopyError
from zerocopy.samples import ClipSpec, write_clip

ROOT = Path(__file__).resolve().parents[1]
PATHS = ("software", "baseline", "copy", "zero-copy")


def hardware_tests() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "igpu.xml"
        proc = subprocess.run([sys.executable, "-m", "pytest", "-m", "igpu", "-q", "-rs", f"--junitxml={xml}",
                               "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True, text=True)
        cases = []
        if xml.exists():
            for case in ET.parse(xml).getroot().iter("testcase"):
                outcome, message = "passed", ""
                for tag in ("failure", "error", "skipped"):
                    node = case.find(tag)
                    if node is not None:
                        outcome, message = tag, (node.get("message") or "")[:500]
                cases.append({"test": f"{case.get('classname')}.{case.get('name')}", "outcome": outcome,
                              "message": message, "seconds": float(case.get("time") or 0)})
    return {"exit_code": proc.returncode, "cases": cases, "tail": proc.stdout.strip().splitlines()[-3:]}


def run_density(workdir: Path, max_streams: int) -> dict:
    """`zerocopy bench --streams auto` on a 1080p30 H.264 clip, every path that runs here."""
    from zerocopy.bench.density import stream_density
    from zerocopy.bench.runner import BenchOptions

    clip = workdir / "clip-1080p30.mp4"
    write_clip(clip, ClipSpec(width=1920, height=1080, fps=30, frames=150, face="grace_hopper"))
    try:
        return stream_density(BenchOptions(input=str(clip), frames=150), max_streams,
                              log=lambda m: print(m, file=sys.stderr))
    except ZeroCopyError as e:
        return {"error": str(e)}


def run_motion_density(workdir: Path, max_streams: int, frames: int = 900) -> dict:
    """`bench --streams auto --detect-fps 5` on busy-20.mp4 without and with `--motion`, every path that runs:
    the streams each keeps, and their ratio (the issue's target: ≥ 1.5)."""
    from make_bench_clips import write_busy_clip

    from zerocopy.bench.density import stream_density
    from zerocopy.bench.runner import BenchOptions
    from zerocopy.config import RunConfig

    clip = workdir / "busy-20.mp4"
    write_busy_clip(clip, frames)
    out: dict = {"clip": {"width": 1920, "height": 1080, "fps": 30, "frames": frames}}
    for name, motion in (("detect_fps_5", False), ("detect_fps_5_motion", True)):
        opts = BenchOptions(input=str(clip), frames=frames, config=RunConfig(detect_fps=5.0, motion=motion))
        try:
            out[name] = stream_density(opts, max_streams, log=lambda m: print(m, file=sys.stderr))
        except ZeroCopyError as e:
            out[name] = {"error": str(e)}
    without, gated = (out[k].get("density", {}) for k in ("detect_fps_5", "detect_fps_5_motion"))
    out["ratio"] = {path: round(gated[path]["streams"] / without[path]["streams"], 2)
                    for path in without if path in gated and without[path].get("streams")}
    return out


def run_paths(frames: int, workdir: Path) -> dict:
    clip = workdir / "clip-1080p.mp4"
    write_clip(clip, ClipSpec(width=1920, height=1080, frames=frames, face="grace_hopper"))
    out: dict = {"clip": {"width": 1920, "height": 1080, "frames": frames, "codec": "h264"}, "paths": {},
                 "unavailable": {}}
    lines = {}
    for path in PATHS:
        jsonl = workdir / f"{path}.jsonl"
        try:
            with Detector(path=path) as det:
                run = run_detect(det, [str(clip)], Outputs(json=str(jsonl)))
        except ZeroCopyError as e:
            out["unavailable"][path] = str(e)
            continue
        r = run.report
        out["paths"][path] = {"fps": r["fps"], "cpu_ms_per_frame": r["cpu"]["ms_per_frame"],
                              "cpu_percent": r["cpu"]["percent"], "peak_rss_mb": r["peak_rss_mb"],
                              "device": r["device"], "nireq": r["nireq"], "stages": r["stages"]}
        lines[path] = [json.loads(x) for x in jsonl.read_text().splitlines()]
    for path, got in lines.items():
        if path != "software" and "software" in lines:
            out["paths"][path]["agreement_with_software"] = compare_runs(lines["software"], got)
    return out


def keypoint_agreement(reference: list[dict], other: list[dict], iou: float = 0.5) -> dict:
    """Landmarks of the boxes two runs share (same frame, IoU ≥ `iou`): per box, the median distance
    between the same points over the box's width (0.01: a hundredth of the face)."""
    from zerocopy.detections import box_iou

    errors = []
    for a, b in zip(reference, other, strict=False):
        pa = [d for d in a["detections"] if "keypoints" in d]
        pb = [d for d in b["detections"] if "keypoints" in d]
        if not pa or not pb:
            continue
        m = box_iou(np.array([d["box"] for d in pa], np.float32), np.array([d["box"] for d in pb], np.float32))
        for i, j in enumerate(m.argmax(1)):
            if m[i, j] >= iou:
                ka, kb = np.array(pa[i]["keypoints"]), np.array(pb[j]["keypoints"])
                width = max(1.0, pa[i]["box"][2] - pa[i]["box"][0])
                errors.append(float(np.median(np.linalg.norm(ka - kb, axis=1))) / width)
    return {"boxes": len(errors), "median": round(float(np.median(errors)), 4) if errors else None,
            "max": round(max(errors), 4) if errors else None}


def run_regions(frames: int, workdir: Path) -> dict:
    """Every path with face-mesh on each face box: the region stage's times, landmarks against software's."""
    clip = workdir / "clip-720p-regions.mp4"
    write_clip(clip, ClipSpec(width=1280, height=720, frames=frames, face="grace_hopper"))
    out: dict = {"clip": {"width": 1280, "height": 720, "frames": frames}, "paths": {}, "unavailable": {}}
    lines = {}
    for path in PATHS:
        jsonl = workdir / f"{path}-regions.jsonl"
        try:
            with Detector(path=path, classify=["face-mesh"]) as det:
                run = run_detect(det, [str(clip)], Outputs(json=str(jsonl)))
        except ZeroCopyError as e:
            out["unavailable"][path] = str(e)
            continue
        out["paths"][path] = {"fps": run.report["fps"], "rois": run.report.get("rois")}
        lines[path] = [json.loads(x) for x in jsonl.read_text().splitlines()]
    for path, got in lines.items():
        if path != "software" and "software" in lines:
            out["paths"][path]["landmarks_vs_software"] = keypoint_agreement(lines["software"], got)
    return out


def run_tiles(frames: int, workdir: Path) -> dict:
    """Every path with `objects --tiles 1` on a person at a fifth of a 1080p frame's height: FPS, the tiles'
    times, the share of frames with the person, agreement with the software path."""
    from zerocopy.samples import write_photo_clip

    clip = workdir / "clip-1080p-tiles.mp4"
    write_photo_clip(clip, "astronaut", "rocket", 0.2, width=1920, height=1080, frames=frames)
    out: dict = {"clip": {"width": 1920, "height": 1080, "frames": frames}, "paths": {}, "unavailable": {}}
    lines = {}
    for path in PATHS:
        jsonl = workdir / f"{path}-tiles.jsonl"
        try:
            with Detector(path=path, model="objects", tiles=1, classes=["person"]) as det:
                run = run_detect(det, [str(clip)], Outputs(json=str(jsonl)))
        except ZeroCopyError as e:
            out["unavailable"][path] = str(e)
            continue
        lines[path] = [json.loads(x) for x in jsonl.read_text().splitlines()]
        found = sum(bool(x["detections"]) for x in lines[path]) / max(1, len(lines[path]))
        out["paths"][path] = {"fps": run.report["fps"], "tiles": run.report.get("tiles"), "person_found": found}
    for path, got in lines.items():
        if path != "software" and "software" in lines:
            out["paths"][path]["agreement_with_software"] = compare_runs(lines["software"], got)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--skip-tests", action="store_true", help="leave out the hardware tests")
    ap.add_argument("--skip-density", action="store_true",
                    help="leave out the stream density measurements (the motion gate's too)")
    ap.add_argument("--max-streams", type=int, default=16, help="stream density: try at most this many")
    ap.add_argument("--skip-regions", action="store_true", help="leave out region crops (face-mesh on every path)")
    ap.add_argument("--skip-tiles", action="store_true", help="leave out --tiles (objects on every path)")
    ap.add_argument("--skip-motion", action="store_true",
                    help="leave out the motion gate's stream density (two density runs on a 30 s 1080p clip)")
    args = ap.parse_args()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = args.out or ROOT / f"igpu-report-{platform.node() or 'host'}-{stamp}.json"
    report: dict = {"created": stamp, "doctor": collect()}
    if not args.skip_tests:
        print("running the hardware tests …", file=sys.stderr)
        report["hardware_tests"] = hardware_tests()
    print("running every path on a 1080p clip …", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        report["paths"] = run_paths(args.frames, Path(tmp))
        if not args.skip_regions:
            print("region crops: face-mesh on each face box, every path …", file=sys.stderr)
            report["regions"] = run_regions(min(args.frames, 120), Path(tmp))
        if not args.skip_tiles:
            print("tiles: objects --tiles 1 on a small person, every path …", file=sys.stderr)
            report["tiles"] = run_tiles(min(args.frames, 60), Path(tmp))
        if not args.skip_density:
            print("measuring stream density: paced 1080p30 streams each path keeps in real time …", file=sys.stderr)
            report["density"] = run_density(Path(tmp), args.max_streams)
        if not args.skip_motion and not args.skip_density:
            print("motion gate: stream density at --detect-fps 5 without and with --motion …", file=sys.stderr)
            report["motion"] = run_motion_density(Path(tmp), args.max_streams)
    out.write_text(json.dumps(report, indent=2) + "\n")

    print(f"\n{'path':<10} {'fps':>8} {'CPU ms/frame':>13} {'preprocess ms':>14} {'agreement':>10}")
    for path, r in report["paths"]["paths"].items():
        agree = r.get("agreement_with_software", {}).get("matched_share", "")
        print(f"{path:<10} {r['fps']:>8} {r['cpu_ms_per_frame']:>13} {r['stages']['preprocess']['mean_ms']:>14} "
              f"{agree:>10}")
    for path, why in report["paths"]["unavailable"].items():
        print(f"{path:<10} unavailable: {why}")
    for path, d in report.get("density", {}).get("density", {}).items():
        print(f"{path:<10} keeps {d['streams']}{'+' if d['capped'] else ''} paced 1080p30 streams "
              f"(p95 latency {d['p95_latency_ms']} ms, CPU {d['cpu_percent']}%)")
    motion = report.get("motion", {})
    for path, ratio in motion.get("ratio", {}).items():
        without, gated = (motion[k]["density"][path] for k in ("detect_fps_5", "detect_fps_5_motion"))
        print(f"{path:<10} busy-20.mp4 at --detect-fps 5: {without['streams']}{'+' if without['capped'] else ''} "
              f"streams, with --motion {gated['streams']}{'+' if gated['capped'] else ''} ({ratio}×)")
    for path, r in report.get("regions", {}).get("paths", {}).items():
        rois, marks = r["rois"] or {}, r.get("landmarks_vs_software", {})
        crop = (rois.get("per_region_crop_ms") or {}).get("mean_ms", "")
        print(f"{path:<10} regions: {rois.get('regions', 0)}, crop {crop} ms/region, landmarks vs software "
              f"(median / box width) {marks.get('median', '')}")
    for path, r in report.get("tiles", {}).get("paths", {}).items():
        tiles, agree = r["tiles"] or {}, r.get("agreement_with_software", {})
        crop = (tiles.get("per_region_crop_ms") or {}).get("mean_ms", "")
        print(f"{path:<10} tiles: {r['fps']} fps, person in {r['person_found']:.2f} of frames, crop {crop} ms/tile, "
              f"agreement with software {agree.get('matched_share', '')}")
    if "hardware_tests" in report:
        outcomes = [c["outcome"] for c in report["hardware_tests"]["cases"]]
        print("\nhardware tests: " + ", ".join(f"{outcomes.count(o)} {o}" for o in sorted(set(outcomes))))
    print(f"\nreport: {out}  (please send this file back)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
