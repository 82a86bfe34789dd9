#!/usr/bin/env python3
"""The decode gate (`--decode-gate`, issue 40) measured: `detect --model objects --detect-fps 5 --motion --track`
on a quiet and a busy 1080p30 scene encoded as a camera encodes them (tests/support/cameraclips.py: a keyframe every
2 s, no B-frames, sensor noise), with the gate (`auto`) and without (`off`), side by side in one run: CPU per source
frame (the run report's process CPU over its frames), frames decoded, the new/end events and crossings (the same or
not), and with `--realtime` the delay to each walk's `new` event (its wall time after the object's first frame was
due; `new` waits for --min-hits inferred frames). A figure for docs/performance.md, not a test.

    python scripts/bench_decode_gate.py [--quiet-s 120] [--garden-s 60] [--busy-s 30] [--runs 2] [--realtime]
                                        [--scenes quiet,garden,busy]

Three scenes: *quiet*, one 3 s walk a minute (someone passes now and then: most of a home camera's day); *garden*,
one 3 s walk in every 15 s (something moves ~20 % of the time, as the issue's garden and scripts/make_bench_clips.py's
busy-20); *busy*, a walk every 4 s. A scene's first 6 s are the gate's calibration (three keyframe intervals decoded
whole), counted in.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))

from cameraclips import Walk, write_camera_clip  # noqa: E402

import zerocopy  # noqa: E402

LINE = "gate:0.5,0,0.5,1"


def run(clip: Path, gate: str, realtime: bool) -> dict:
    """One run's figures."""
    heard: list[dict] = []
    firsts: list[float] = []
    started: list[float] = []  # when the first result came (its frame at media time ~0)

    def on_event(e) -> None:
        record = e.to_record()
        heard.append(record)
        if realtime and record.get("type") == "new" and started:
            firsts.append(time.perf_counter() - started[0] - record["first_pts"])

    with zerocopy.Detector(model="objects", path="software", detect_fps=5, motion=True, track=True, lines=(LINE,),
                           decode_gate=gate, realtime=realtime) as det:
        t0 = time.perf_counter()
        for _ in det.run(str(clip), on_event=on_event):
            if not started:
                started.append(time.perf_counter())
        report = det.report()
    (source,) = report["inputs"]
    gated = (source.get("damage") or {}).get("decode_gate") or {}
    events = [(e["type"], e.get("label"), e.get("first_pts"), e.get("last_pts"), e.get("direction"))
              for e in heard if e["type"] in ("new", "end", "cross")]
    return {"cpu_ms": report["cpu"]["seconds"] * 1e3 / max(1, report["frames"]), "frames": report["frames"],
            "decoded": gated.get("decoded", report["frames"]), "events": events, "catch_ups": gated.get("catch_ups"),
            "rise_ms": gated.get("rise_to_inference_ms"), "new_result_ms": sorted(firsts),
            "wall_s": time.perf_counter() - t0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quiet-s", type=float, default=120.0)
    ap.add_argument("--garden-s", type=float, default=60.0)
    ap.add_argument("--busy-s", type=float, default=30.0)
    ap.add_argument("--scenes", default="quiet,garden,busy", help="which scenes, comma-separated")
    ap.add_argument("--runs", type=int, default=2, help="interleaved runs of each (the lowest CPU kept)")
    ap.add_argument("--realtime", action="store_true", help="paced as a camera: the delay to each first detection")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scenes = {"quiet": (args.quiet_s, tuple(Walk(21.3 + 60 * n) for n in range(int((args.quiet_s + 36) // 60)))),
                  "garden": (args.garden_s, tuple(Walk(6.3 + 15 * n) for n in range(int(args.garden_s // 15)))),
                  "busy": (args.busy_s, tuple(Walk(1.3 + 4 * n, leftwards=n % 2 == 1)
                                              for n in range(int((args.busy_s - 3) // 4))))}
        for name, (seconds, walks) in scenes.items():
            if name not in args.scenes.split(","):
                continue
            clip = Path(tmp) / f"{name}.mp4"
            write_camera_clip(clip, seconds, walks, fps=30, width=1920, height=1080, noise=3.0)
            best: dict[str, dict] = {}
            for _ in range(args.runs):
                for gate in ("off", "auto"):
                    got = run(clip, gate, args.realtime)
                    if gate not in best or got["cpu_ms"] < best[gate]["cpu_ms"]:
                        best[gate] = got
            off, auto = best["off"], best["auto"]
            print(f"{name}: {len(walks)} walks in {seconds:g} s, {off['frames']} frames")
            for gate, got in best.items():
                print(f"  {gate:4}  CPU {got['cpu_ms']:.2f} ms/frame  decoded {got['decoded']}/{got['frames']}  "
                      f"catch-ups {got['catch_ups']}  rise->inference {got['rise_ms']}  "
                      f"first detections' latency (s) {[round(x, 2) for x in got['new_result_ms']]}")
            print(f"  ratio {auto['cpu_ms'] / off['cpu_ms']:.2f}x  same new/end events and crossings: "
                  f"{auto['events'] == off['events']} ({sum(e[0] == 'new' for e in off['events'])} objects)")


if __name__ == "__main__":
    main()
