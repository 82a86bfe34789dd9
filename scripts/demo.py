#!/usr/bin/env python3
"""`make demo`: pull the default model, make a clip from a real photo, detect faces on the best path.

Leaves demo-output/detections.jsonl, demo-output/annotated.mp4 and demo-output/report.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from zerocopy.catalog import DEFAULT_MODEL
from zerocopy.catalog.fetch import pull
from zerocopy.cli import main as zerocopy_main
from zerocopy.samples import ClipSpec, write_clip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default="demo-output", help="output folder")
    ap.add_argument("--frames", type=int, default=150, help="clip length in frames (25 fps)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    print(f"1/3 model: {pull(DEFAULT_MODEL, log=print)}")
    clip = out / "clip.mp4"
    spec = ClipSpec(width=1280, height=720, frames=args.frames, face="astronaut")
    write_clip(clip, spec)
    print(f"2/3 clip: {clip} ({spec.width}x{spec.height} H.264, {spec.frames} frames, a real photo "
          "from scikit-image moving over another)")
    print("3/3 zerocopy detect --path auto …")
    rc = zerocopy_main(["detect", str(clip), "--model", DEFAULT_MODEL, "--path", "auto", "--threshold", "0.75",
                        "--json", str(out / "detections.jsonl"), "--output", str(out / "annotated.mp4"),
                        "--report", str(out / "report.json")])
    if rc != 0:
        return rc
    report = json.loads((out / "report.json").read_text())
    lines = [json.loads(x) for x in (out / "detections.jsonl").read_text().splitlines()]
    with_faces = sum(1 for x in lines if x["detections"])
    print()
    print(f"path        {report['path']} on {report['device']}")
    for path, why in report["refused"].items():
        print(f"  {path} refused: {why}")
    print(f"frames      {report['frames']} ({with_faces} with a face)")
    print(f"throughput  {report['fps']} fps, CPU {report['cpu']['ms_per_frame']} ms/frame "
          f"({report['cpu']['percent']}% of one core)")
    stages = ", ".join(f"{k} {v['mean_ms']} ms" for k, v in report["stages"].items())
    print(f"stages      {stages}")
    print(f"outputs     {out / 'detections.jsonl'}, {out / 'annotated.mp4'}, {out / 'report.json'}")
    return 0 if with_faces else 1


if __name__ == "__main__":
    sys.exit(main())
