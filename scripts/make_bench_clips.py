#!/usr/bin/env python3
"""Make the 1080p H.264 clips docs/performance.md and docs/analytics.md were measured on.

    python scripts/make_bench_clips.py [--out DIR] [--frames N] [--busy-frames N]

light.mp4: a real photo moving over a still background (cheap to decode: a fixed camera on a static
scene, with no sensor noise). static-noise.mp4: the same with sensor-like noise, as a real fixed
camera records. realistic.mp4: the background also drifts, as with a hand-held camera. From photos
that ship in scikit-image and matplotlib.

busy-20.mp4 (`--motion`'s clip): a fixed 1080p30 camera busy about 20 % of the time: people (real face
photos, cut out) walk across a still scene one at a time, 3 s in every 15 s, and every frame has sensor
noise (per-frame grain, std 3 of 255) the motion gate must not take for motion. 1800 frames (60 s, 4 walks)
unless --busy-frames (or --frames) says otherwise.
"""

from __future__ import annotations

import argparse
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from PIL import Image

from zerocopy.samples import ClipSpec, Person, Sprite, load_photo, rgb_to_frame, write_clip


def write_busy_clip(path: Path, frames: int, fps: int = 30, width: int = 1920, height: int = 1080,
                    cycle_s: float = 15.0, walk_s: float = 3.0, noise: float = 3.0, seed: int = 0) -> list[tuple]:
    """A still scene where one person walks across for `walk_s` seconds of every `cycle_s` (left to right, then
    back; faces 12–20 % of the height, photos in turn), with per-frame sensor noise of std `noise`. H.264
    (veryfast, crf 23, BT.709). Returns each walk's (first, last) frame."""
    rng = np.random.default_rng(seed)
    photos = {n: Image.fromarray(load_photo(n)) for n in ("astronaut", "grace_hopper", "coffee")}
    background = np.asarray(photos["coffee"].resize((width, height), Image.BILINEAR), np.float32)
    cycle, walk = round(cycle_s * fps), round(walk_s * fps)
    walks = [(n * cycle + (cycle - walk) // 2, n * cycle + (cycle - walk) // 2 + walk - 1)
             for n in range(frames // cycle)]
    sprites = []
    for n in range(len(walks)):
        leftwards = n % 2 == 1
        person = Person(photo=("astronaut", "grace_hopper")[n % 2], face_height=float(rng.uniform(0.12, 0.2)),
                        x=1.1 if leftwards else -0.1, y=float(rng.uniform(0.45, 0.6)),
                        drift=-1.2 if leftwards else 1.2, flip=leftwards)
        sprites.append(Sprite.make(person, width, height, photos))
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.codec_context.colorspace, stream.codec_context.color_range = 1, 1  # BT.709, limited
        stream.options = {"preset": "veryfast", "crf": "23"}
        for i in range(frames):
            canvas = background.copy()
            for (first, last), sprite in zip(walks, sprites, strict=True):
                if first <= i <= last:
                    sprite.paste(canvas, (i - first) / (last - first))
            canvas += rng.normal(0.0, noise, (height, width, 1)).astype(np.float32)
            frame = rgb_to_frame(np.clip(canvas + 0.5, 0, 255).astype(np.uint8), "yuv420p", "bt709", False)
            frame.pts, frame.time_base = i, Fraction(1, fps)
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    return walks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("bench-clips"))
    ap.add_argument("--frames", type=int, default=None, help="frames of each clip (default 700; busy-20.mp4: 1800)")
    ap.add_argument("--busy-frames", type=int, default=None, help="frames of busy-20.mp4 (default: --frames, or 1800)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    busy_frames = args.busy_frames or args.frames or 1800
    common = dict(width=1920, height=1080, frames=args.frames or 700, face="grace_hopper")
    for name, spec in (
        ("light.mp4", ClipSpec(**common, options=(("preset", "veryfast"),))),
        ("static-noise.mp4", ClipSpec(**common, noise=4.0, options=(("preset", "veryfast"), ("crf", "23")))),
        ("realistic.mp4", ClipSpec(**common, noise=4.0, pan=True, options=(("preset", "veryfast"), ("crf", "23")))),
    ):
        write_clip(args.out / name, spec)
        print(args.out / name)
    walks = write_busy_clip(args.out / "busy-20.mp4", busy_frames)
    busy = sum(last - first + 1 for first, last in walks) / busy_frames
    print(args.out / "busy-20.mp4", f"({len(walks)} walks, busy {busy:.0%} of the time)")


if __name__ == "__main__":
    main()
