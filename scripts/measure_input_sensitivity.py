#!/usr/bin/env python3
"""How `objects`' boxes on the photo clips react to the way the model input is made (docs/models.md).

The software path and the baseline disagree on a second, enclosing Cat box of the cat clip. This runs the
model by hand on the clips' frames, each made into the 300×300 input several ways — ordinary RGB resamplers
(what a BGR pipeline such as the baseline does) and NV12 at the model's size with its chroma at half that
(what the software and GPU paths feed) — and prints:
- the best and second Cat scores per frame and way, on the cat clip;
- for each photo clip, how far the ordinary RGB resamplers agree with one another (`compare_runs`, each
  pair): the floor no two pipelines can be asked to beat. tests/e2e/test_objects.py judges the paths'
  agreement against it.
Run: `python scripts/measure_input_sensitivity.py`.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Callable
from pathlib import Path

import av
import numpy as np
import openvino as ov
from PIL import Image

from zerocopy.agreement import compare_runs
from zerocopy.catalog import CATALOG
from zerocopy.catalog.fetch import pull
from zerocopy.names import spelled
from zerocopy.postprocess import make_postprocessor
from zerocopy.samples import write_photo_clip

SIZE = 300
FRAMES = (0, 2, 5, 6)
CLIPS = (("astronaut", "person"), ("chelsea", "cat"), ("coffee", "coffee cup"))  # at 40 % of the height


def rgb_ways() -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    """Ordinary ways to resize an RGB picture to the model's input."""
    import cv2

    ways = {f"cv2 {n}": (lambda a, f=f: cv2.resize(a, (SIZE, SIZE), interpolation=f))
            for n, f in (("area", cv2.INTER_AREA), ("linear", cv2.INTER_LINEAR), ("cubic", cv2.INTER_CUBIC))}
    for name, f in (("PIL bilinear", Image.BILINEAR), ("PIL lanczos", Image.LANCZOS)):
        ways[name] = lambda a, f=f: np.asarray(Image.fromarray(a).resize((SIZE, SIZE), f))
    return ways


def nv12_to_rgb(frame: av.VideoFrame, interpolation: str) -> np.ndarray:
    """The frame scaled to the model's size as NV12 (limited-range BT.601, as the clip is), then to RGB with
    its chroma repeated, as a converter inside the model would."""
    yuv = frame.reformat(width=SIZE, height=SIZE, format="nv12", interpolation=interpolation).to_ndarray()
    y = (yuv[:SIZE].astype(np.float32) - 16) * 1.164
    uv = yuv[SIZE:].reshape(SIZE // 2, SIZE // 2, 2).astype(np.float32).repeat(2, 0).repeat(2, 1) - 128
    u, v = uv[..., 0], uv[..., 1]
    return np.stack([y + 1.596 * v, y - 0.392 * u - 0.813 * v, y + 2.017 * u], -1).clip(0, 255)


class ByHand:
    """`objects` run by hand on an RGB input, keeping one label's boxes at `threshold` (the catalogue's
    unless given), through the project's own decoder and NMS."""

    def __init__(self, label: str, threshold: float | None = None):
        entry = CATALOG["objects"]
        self.compiled = ov.Core().compile_model(str(pull("objects")), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        self.shapes = {o.get_any_name(): tuple(o.shape) for o in self.compiled.outputs}
        self.decode = make_postprocessor(entry.postprocess, SIZE, SIZE, self.shapes, entry.postprocess_options,
                                         entry.threshold if threshold is None else threshold,
                                         only_labels=(spelled(entry.labels).index(label),))

    def __call__(self, rgb: np.ndarray, width: int = SIZE, height: int = SIZE):
        class Stretch:  # the input stretched over the frame: normalised → frame pixels
            @staticmethod
            def to_source(b):
                return b * np.array([width, height, width, height], np.float32)

        result = self.compiled(np.asarray(rgb, np.float32)[None] / 127.5 - 1)
        return self.decode({n: result[self.compiled.output(n)] for n in self.shapes}, Stretch())


def decoded(clip: str | Path) -> list[av.VideoFrame]:
    with av.open(str(clip)) as container:
        return list(container.decode(video=0))


def resampler_agreement(clip: str | Path, label: str) -> dict[tuple[str, str], dict]:
    """`compare_runs` of every pair of ordinary RGB resamplers (cubic aside: it rings), the model run by hand
    on each frame of `clip` at the catalogue's threshold, `label`'s boxes only."""
    run = ByHand(label)
    frames = [f.to_ndarray(format="rgb24") for f in decoded(clip)]
    ways = {name: way for name, way in rgb_ways().items() if name != "cv2 cubic"}
    records = {}
    for name, way in ways.items():
        records[name] = []
        for rgb in frames:
            found = run(way(rgb), rgb.shape[1], rgb.shape[0])
            records[name].append({"detections": [{"box": b.tolist(), "score": float(s)}
                                                 for b, s in zip(found.xyxy, found.scores, strict=True)]})
    return {(a, b): compare_runs(records[a], records[b]) for a, b in itertools.combinations(ways, 2)}


def resampler_floor(clip: str | Path, label: str) -> dict:
    """The least `matched_share` and the most `extra` over every pair of `resampler_agreement`."""
    pairs = resampler_agreement(clip, label).values()
    return {"matched_share": min(p["matched_share"] for p in pairs), "extra": max(p["extra"] for p in pairs),
            "frames": min(p["frames"] for p in pairs)}


def main() -> None:
    run = ByHand("cat", threshold=0.2)

    def scores(rgb: np.ndarray) -> str:
        found = sorted(run(rgb).scores, reverse=True)
        return f"{found[0] if found else 0:.2f}/{found[1] if len(found) > 1 else 0:.2f}"

    with tempfile.TemporaryDirectory() as tmp:
        clip = Path(tmp) / "cat.mp4"
        write_photo_clip(clip, "chelsea", "rocket", 0.4)
        frames = decoded(clip)
        print("Cat scores, best/second, per frame of the cat clip (640×360, the cat at 40 % of the height)")
        ways = rgb_ways()
        for i in FRAMES:
            rgb = frames[i].to_ndarray(format="rgb24")
            row = [f"{name}: {scores(way(rgb))}" for name, way in ways.items()]
            row += [f"NV12 {n.lower()}: {scores(nv12_to_rgb(frames[i], n))}" for n in ("AREA", "BILINEAR")]
            print(f"frame {i}: " + " | ".join(row))
        print("\nHow far ordinary RGB resamplers agree with one another (the model by hand, threshold "
              f"{CATALOG['objects'].threshold}, one label; matched share of the first's boxes, extra boxes of the "
              "second)")
        for photo, label in CLIPS:
            clip = Path(tmp) / f"{photo}.mp4"
            write_photo_clip(clip, photo, "rocket", 0.4)
            for (a, b), r in resampler_agreement(clip, label).items():
                print(f"{photo} {label}: {a} vs {b}: matched {r['matched_share']:.3f} of {r['reference_detections']}"
                      f", extra {r['extra']} in {r['frames']} frames")


if __name__ == "__main__":
    main()
