#!/usr/bin/env python3
"""Far objects (issue 39, item 4): on a 1080p clip where a person at 13 % and a cat at 9 % of the frame height walk
across a garden (`tests/support/farclip.py`), `zerocopy detect --model objects --detect-fps 5 --motion` three ways,
side by side: with regions around motion (the default), with `--tiles 2` instead, and with neither
(`--regions false`). Prints, for each, the share of the inferred frames on which each object is found (its box at IoU
≥ 0.5 against the model's own box on the still photo, mapped into the frame) and the run's CPU per frame (the
report's: every thread of the run, model compilation and start-up excluded), and each one's CPU against the
tiles'. Runs are interleaved, `--repeats` of each; the CPU shown is each one's median. A figure for
docs/regions.md, not a test.

    python scripts/bench_regions.py [--path PATH] [--repeats N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "scripts"))

from measure_input_sensitivity import ByHand  # noqa: E402  (the model run by hand on a still photo)
from support.farclip import WALKERS, write_far_clip  # noqa: E402

from zerocopy.detections import box_iou  # noqa: E402
from zerocopy.samples import load_photo  # noqa: E402

WAYS = {"regions": ("--regions", "true"), "tiles 2": ("--tiles", "2"), "neither": ("--regions", "false")}


def still_box(photo: str, label: str) -> np.ndarray:
    """The model's own best box of `label` on the whole still photo, in the photo's pixels."""
    img = load_photo(photo)
    h, w = img.shape[:2]
    found = ByHand(label)(np.asarray(Image.fromarray(img).resize((300, 300), Image.BILINEAR)), w, h)
    if not len(found):
        raise SystemExit(f"the model finds no {label} on the still {photo}")
    return found.xyxy[int(np.argmax(found.scores))]


def truth_boxes(placed: dict[str, list]) -> dict[str, list[np.ndarray | None]]:
    """Per label, per frame: the object's box in the frame (None: not wholly in the picture)."""
    out = {}
    for w in WALKERS:
        box = still_box(w.photo, w.label)
        out[w.label] = [None if p is None else box * p[2] + np.array([p[0], p[1], p[0], p[1]], np.float32)
                        for p in placed[w.label]]
    return out


def recall(lines: list[dict], truth: list[np.ndarray | None], label: str) -> tuple[int, int]:
    """(frames found on, inferred frames where the object is wholly in the picture)."""
    hits = total = 0
    for line in lines:
        box = truth[line["frame"]]
        if box is None or line.get("inferred") is False:
            continue
        total += 1
        boxes = [d["box"] for d in line["detections"] if d.get("name") == label]
        hits += bool(boxes) and float(box_iou(np.asarray([box]), np.asarray(boxes)).max()) >= 0.5
    return hits, total


def run(clip: Path, way: tuple[str, ...], path: str, out: Path) -> tuple[list[dict], dict]:
    lines, report = out / "run.jsonl", out / "run.report.json"
    subprocess.run([sys.executable, "-m", "zerocopy", "detect", str(clip), "--model", "objects", "--detect-fps", "5",
                    "--motion", *way, "--path", path, "--json", str(lines), "--report", str(report), "--quiet"],
                   check=True)
    return [json.loads(s) for s in lines.read_text().splitlines()], json.loads(report.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--path", default="software", help="the decoding path of every run (default: software)")
    ap.add_argument("--repeats", type=int, default=2, help="runs of each way, interleaved (default: 2)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        clip = Path(tmp) / "far.mp4"
        placed = write_far_clip(clip)
        truth = truth_boxes(placed)
        cpu: dict[str, list[float]] = {name: [] for name in WAYS}
        found: dict[str, dict[str, tuple[int, int]]] = {}
        added: dict[str, float] = {}
        for _ in range(args.repeats):
            for name, way in WAYS.items():
                lines, report = run(clip, way, args.path, Path(tmp))
                cpu[name].append(report["cpu"]["ms_per_frame"] * report["frames"] / max(1, report["inferred_frames"]))
                found[name] = {w.label: recall(lines, truth[w.label], w.label) for w in WALKERS}
                stage = report.get("regions") or report.get("tiles") or {}
                added[name] = stage.get("regions", 0) / max(1, report["inferred_frames"])
    tiles = statistics.median(cpu["tiles 2"])
    labels = [w.label for w in WALKERS]
    print(f"{'':10}" + "".join(f"{label + ' found':>16}" for label in labels)
          + f"{'inferences':>12}{'CPU ms':>10}{'vs tiles':>10}")
    print(f"{'':10}" + "".join(f"{'(of inferred)':>16}" for _ in labels) + f"{'a frame':>12}{'a frame':>10}")
    for name in WAYS:
        med = statistics.median(cpu[name])
        cells = "".join(f"{f'{h}/{n} {h / max(1, n):.2f}':>16}" for h, n in (found[name][label] for label in labels))
        print(f"{name:10}{cells}{1 + added[name]:>12.2f}{med:>10.1f}{med / tiles:>10.2f}")
    print(f"(CPU: ms of the run's CPU per inferred frame, median of {args.repeats}; path {args.path})")


if __name__ == "__main__":
    main()
