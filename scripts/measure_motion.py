#!/usr/bin/env python3
"""What the motion stage (`--motion`) costs a frame on the software path: the small luma picture made by swscale
from the decoded planes, then the gate (detector and rules), in CPU time of the thread that runs them, as the path
runs them: the frames come from the path's own decoder (`PyAVDecoder.on_cpu`, decoding on a thread of its own,
one FFmpeg thread), whose time is not counted. A figure for docs/analytics.md, not a test.

    python scripts/measure_motion.py [--clip PATH] [--frames N] [--baseline]

Without --clip, a 1080p clip is made from real photos (a portrait moving across a still background with sensor
noise: motion on every frame, the dearer case). `scripts/make_bench_clips.py`'s busy-20.mp4 is the camera busy
about 20 % of the time. --baseline also times the baseline path's luma picture (point samples of the BGR picture,
the full-size conversion excluded: that path makes it anyway).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import av
import numpy as np

from zerocopy.decode.pyav import PyAVDecoder
from zerocopy.motion.gate import MotionGate, MotionSpec
from zerocopy.motion.luma import BgrLuma, PlanesLuma
from zerocopy.paths.rate import DetectRate
from zerocopy.samples import ClipSpec, write_clip


def measure(clip: Path, frames: int | None, baseline: bool) -> dict[str, list[float]]:
    """Per frame: ms of CPU for the luma picture, for the gate, and (--baseline) the BGR luma picture."""
    times: dict[str, list[float]] = {"luma": [], "gate": [], "bgr luma": [], "moving": [], "inferred": []}
    decoder = PyAVDecoder.on_cpu(clip, threads=1)
    try:
        rate = decoder.rate
        luma, bgr_luma = PlanesLuma(), BgrLuma()
        gate = MotionGate(MotionSpec(luma=luma), rate, DetectRate(5, rate))
        for i, decoded in enumerate(decoder.frames()):
            if frames is not None and i >= frames:
                break
            frame = decoded.frame
            t0 = time.thread_time()
            small = luma(frame)
            t1 = time.thread_time()
            verdict = gate(i, decoded.pts, small)
            t2 = time.thread_time()
            times["luma"].append((t1 - t0) * 1e3)
            times["gate"].append((t2 - t1) * 1e3)
            times["moving"].append(float(verdict.motion.moving))
            times["inferred"].append(float(verdict.infer))
            if baseline:
                bgr = frame.to_ndarray(format="bgr24")
                t3 = time.thread_time()
                bgr_luma(bgr)
                times["bgr luma"].append((time.thread_time() - t3) * 1e3)
    finally:
        decoder.close()
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clip", type=Path, help="a clip to measure on (default: a 1080p one made here)")
    ap.add_argument("--frames", type=int, default=300, help="frames to measure (default 300)")
    ap.add_argument("--baseline", action="store_true", help="also time the baseline path's luma picture")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        clip = args.clip
        if clip is None:
            clip = Path(tmp) / "motion-1080p.mp4"
            write_clip(clip, ClipSpec(width=1920, height=1080, frames=args.frames, fps=30, noise=3.0,
                                      face="grace_hopper", options=(("preset", "veryfast"), ("crf", "23"))))
        t = measure(clip, args.frames, args.baseline)
        with av.open(str(clip)) as c:
            size = f"{c.streams.video[0].width}x{c.streams.video[0].height}"
    n = len(t["luma"])
    total = np.add(t["luma"], t["gate"])
    print(f"{clip.name} ({size}, {n} frames; motion on {np.mean(t['moving']):.0%} of them, "
          f"{np.mean(t['inferred']):.0%} inferred at --detect-fps 5 --motion)")
    for name, values in (("luma picture (swscale)", t["luma"]), ("gate (detector)", t["gate"]),
                         ("motion stage, software path", total), ("luma picture (baseline, BGR)", t["bgr luma"])):
        if len(values):
            print(f"  {name:30s} {np.mean(values):.3f} ms CPU/frame (median {np.median(values):.3f}, "
                  f"p95 {np.percentile(values, 95):.3f})")


if __name__ == "__main__":
    main()
