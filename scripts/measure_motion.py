#!/usr/bin/env python3
"""What the motion stage (`--motion`) costs a frame on the software path: the small luma picture made by swscale
from the decoded planes, then the gate (detector and rules), in CPU time of the thread that runs them, as the path
runs them: the frames come from the path's own decoder (`PyAVDecoder.on_cpu`, decoding on a thread of its own,
one FFmpeg thread), whose time is not counted. A figure for docs/analytics.md, not a test.

    python scripts/measure_motion.py [--clip PATH] [--frames N] [--baseline] [--detect-fps FPS]

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


def measure(clip: Path, frames: int | None, baseline: bool, detect_fps: float | None) -> dict[str, list[float]]:
    """Per frame: ms of CPU of the motion stage (the gate, the luma picture included where it measures), whether it
    measured, moved, was inferred; per measured frame the luma picture's ms; (--baseline) the BGR luma picture."""
    times: dict[str, list[float]] = {"stage": [], "luma": [], "measured": [], "bgr luma": [], "moving": [],
                                     "inferred": []}
    decoder = PyAVDecoder.on_cpu(clip, threads=1)
    try:
        rate = decoder.rate
        planes, bgr_luma = PlanesLuma(), BgrLuma()

        def luma(frame):
            t0 = time.thread_time()
            made = planes(frame)
            times["luma"].append((time.thread_time() - t0) * 1e3)
            return made

        gate = MotionGate(MotionSpec(luma=luma), rate, DetectRate(detect_fps, rate) if detect_fps else None)
        for i, decoded in enumerate(decoder.frames()):
            if frames is not None and i >= frames:
                break
            frame = decoded.frame
            measured = gate.measured
            t0 = time.thread_time()
            verdict = gate(i, decoded.pts, frame)
            times["stage"].append((time.thread_time() - t0) * 1e3)
            times["measured"].append(float(gate.measured > measured))
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
    ap.add_argument("--detect-fps", type=float, default=5.0,
                    help="the gate's --detect-fps (default 5; 0: every frame is due)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        clip = args.clip
        if clip is None:
            clip = Path(tmp) / "motion-1080p.mp4"
            write_clip(clip, ClipSpec(width=1920, height=1080, frames=args.frames, fps=30, noise=3.0,
                                      face="grace_hopper", options=(("preset", "veryfast"), ("crf", "23"))))
        t = measure(clip, args.frames, args.baseline, args.detect_fps or None)
        with av.open(str(clip)) as c:
            size = f"{c.streams.video[0].width}x{c.streams.video[0].height}"
    n = len(t["stage"])
    measured = [ms for ms, m in zip(t["stage"], t["measured"], strict=True) if m]
    print(f"{clip.name} ({size}, {n} frames, --detect-fps {args.detect_fps or 'off'} --motion; motion measured on "
          f"{np.mean(t['measured']):.0%} of the frames, seen on {np.mean(t['moving']):.0%}, "
          f"{np.mean(t['inferred']):.0%} inferred)")
    for name, values in (("motion stage, every frame", t["stage"]), ("motion stage, frames measured", measured),
                         ("  of which the luma picture", t["luma"]), ("luma picture (baseline, BGR)", t["bgr luma"])):
        if len(values):
            print(f"  {name:30s} {np.mean(values):.3f} ms CPU/frame (median {np.median(values):.3f}, "
                  f"p95 {np.percentile(values, 95):.3f})")


if __name__ == "__main__":
    main()
