#!/usr/bin/env python3
"""Does a region model's own request queue cost anything a single scheduler would win back?
(docs/architecture.md, "Why region models keep a request queue of their own".)

On one clip of several faces, side by side, `--repeat` times each (medians):

  A  detection alone (`Detector`, the chosen path and device);
  B  detection and `face-mesh` on every face box: the run as shipped, each frame's regions started together on
     the region model's own queue and waited for before the frame leaves, the detector's requests in flight
     meanwhile;
  C  the region model alone, fed as many regions as B inferred, through one `AsyncInferQueue` of the device's
     optimal size with nothing else running: the most any scheduler could get out of the device for them.

On a device that each job saturates alone (a CPU with THROUGHPUT; a GPU kept busy), one scheduler for both
could at best take A + C (and B also cuts the regions, which any scheduler would have to). The script prints
B / (A + C), and the same without B's cutting time: near 1, the separate queue leaves nothing to win on
this device; clearly above, the gap is what a shared scheduler could recover. Run:
`python scripts/measure_region_queue.py [--device CPU] [--faces 6] [--frames 150]`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import openvino as ov

import zerocopy
from zerocopy.catalog.fetch import pull
from zerocopy.infer.properties import default_config
from zerocopy.samples import ClipSpec, crowd, write_clip


def detect(clip: Path, path: str, device: str, classify: bool) -> tuple[float, int, float]:
    """Seconds for the whole run (after its warm-up: the compile is outside), the regions it inferred, and the
    seconds it spent cutting them (which any scheduler needs as well)."""
    det = zerocopy.Detector(path=path, device=device, classify=["face-mesh:face"] if classify else [])
    try:
        list(det.run(str(clip), max_frames=5))  # compile and warm up
        t0 = time.perf_counter()
        list(det.run(str(clip)))
        seconds = time.perf_counter() - t0
        rois = det.result().reports.get("rois")
        if rois is None:
            return seconds, 0, 0.0
        said = rois.summary()
        return seconds, int(said["regions"]), said["regions"] * said["per_region_crop_ms"]["mean_ms"] / 1e3
    finally:
        det.close()


def regions_alone(device: str, regions: int) -> float:
    """Seconds for `regions` inferences of the region model on one queue of the device's optimal size."""
    core = ov.Core()
    model = core.read_model(str(pull("face-mesh", log=lambda msg: None)))
    compiled = core.compile_model(model, device, {**default_config(device), "INFERENCE_PRECISION_HINT": "f32"}
                                  if device == "CPU" else default_config(device))
    shape = [d.get_length() for d in model.inputs[0].get_partial_shape()]
    x = np.random.default_rng(0).random(shape, np.float32)
    queue = ov.AsyncInferQueue(compiled, compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS"))
    for _ in range(8):
        queue.start_async({0: x})
    queue.wait_all()
    t0 = time.perf_counter()
    for _ in range(regions):
        queue.start_async({0: x})
    queue.wait_all()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="CPU")
    ap.add_argument("--path", default="software")
    ap.add_argument("--faces", type=int, default=6)
    ap.add_argument("--frames", type=int, default=150)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        clip = Path(tmp) / "faces.mp4"
        write_clip(clip, ClipSpec(width=1280, height=720, frames=args.frames, fps=25, noise=2.0,
                                  people=crowd(args.faces, sizes=(0.12, 0.25))))
        a, b, c, crops, regions = [], [], [], [], 0
        for _ in range(args.repeat):  # interleaved, so a noisy neighbour weighs on all three alike
            a.append(detect(clip, args.path, args.device, False)[0])
            seconds, regions, cut = detect(clip, args.path, args.device, True)
            b.append(seconds)
            crops.append(cut)
            c.append(regions_alone(args.device, regions))
    ma, mb, mc, cut = (statistics.median(v) for v in (a, b, c, crops))
    print(f"{args.frames} frames of {args.faces} faces, 1280x720, {args.path} path on {args.device} "
          f"({os.cpu_count()} cores), medians of {args.repeat}")
    print(f"A  detection alone                      {ma:6.2f} s")
    print(f"B  detection + face-mesh (own queue)    {mb:6.2f} s   ({regions} regions)")
    print(f"   of which cutting the regions         {cut:6.2f} s   (any scheduler needs it too)")
    print(f"C  face-mesh alone, one optimal queue   {mc:6.2f} s")
    print(f"B / (A + C) = {mb / (ma + mc):.2f};  without the cutting: (B - cut) / (A + C) = "
          f"{(mb - cut) / (ma + mc):.2f}   (1.00: nothing left for one shared scheduler to win)")


if __name__ == "__main__":
    main()
