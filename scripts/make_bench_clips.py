#!/usr/bin/env python3
"""Make the three 1080p H.264 clips docs/performance.md was measured on.

    python scripts/make_bench_clips.py [--out DIR] [--frames N]

light.mp4: a real photo moving over a still background (cheap to decode: a fixed camera on a static
scene, with no sensor noise). static-noise.mp4: the same with sensor-like noise, as a real fixed
camera records. realistic.mp4: the background also drifts, as with a hand-held camera. From photos
that ship in scikit-image and matplotlib.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from zerocopy.samples import ClipSpec, write_clip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("bench-clips"))
    ap.add_argument("--frames", type=int, default=700)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    common = dict(width=1920, height=1080, frames=args.frames, face="grace_hopper")
    for name, spec in (
        ("light.mp4", ClipSpec(**common, options=(("preset", "veryfast"),))),
        ("static-noise.mp4", ClipSpec(**common, noise=4.0, options=(("preset", "veryfast"), ("crf", "23")))),
        ("realistic.mp4", ClipSpec(**common, noise=4.0, pan=True, options=(("preset", "veryfast"), ("crf", "23")))),
    ):
        write_clip(args.out / name, spec)
        print(args.out / name)


if __name__ == "__main__":
    main()
