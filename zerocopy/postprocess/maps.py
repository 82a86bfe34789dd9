"""An image-to-image model's output (a per-pixel map at the model's input size) → the same map over the
source frame's pixels: the inverse of `Geometry.fit` (the letterbox bars cut off, the picture's part of
the map resized to the frame). `ProbabilityMap` does it for a whole frame (`text-map`); the region
decoder `segmentation` (postprocess/regions.py) does it for a box's crop (`person-mask`), whose patches the
region stage composes into the frame.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from PIL import Image

from zerocopy.errors import ModelError
from zerocopy.frames import Geometry

MAP_KINDS = ("probability-map",)  # the frame-level decodings (`CatalogEntry.postprocess` of a frame model)


def to_source(values: np.ndarray, geometry: Geometry) -> np.ndarray:
    """A map over the model input (any resolution: a map at half the input's size is stretched over it)
    → a float32 `src_h`×`src_w` array over the source picture: bilinear, pixel centres aligned, and the
    bars never blended in (the picture's part is cut out first, so its edges repeat at the border)."""
    values = np.ascontiguousarray(values, np.float32)
    mh, mw = values.shape
    fx, fy = mw / geometry.dst_w, mh / geometry.dst_h
    x0, y0 = geometry.x0 * fx, geometry.y0 * fy
    x1, y1 = (geometry.x0 + geometry.content_w) * fx, (geometry.y0 + geometry.content_h) * fy
    left, top, right, bottom = int(np.floor(x0)), int(np.floor(y0)), int(np.ceil(x1)), int(np.ceil(y1))
    part = values[top:bottom, left:right]
    size = (geometry.src_w, geometry.src_h)
    box = (x0 - left, y0 - top, x1 - left, y1 - top)
    if size == (part.shape[1], part.shape[0]) and box == (0, 0, part.shape[1], part.shape[0]):
        return part.copy()
    return np.asarray(Image.fromarray(np.ascontiguousarray(part)).resize(size, Image.BILINEAR, box=box), np.float32)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return (1.0 / (1.0 + np.exp(-np.clip(x, -80.0, 80.0)))).astype(np.float32)


def _map_size(shape: tuple[int, ...]) -> tuple[int, int] | None:
    """(H, W) of a single-channel map output (N×1×H×W or N×H×W×1), else None."""
    if len(shape) != 4 or 1 not in (shape[1], shape[3]):
        return None
    h, w = (shape[2], shape[3]) if shape[1] == 1 else (shape[1], shape[2])
    return (h, w) if h > 1 and w > 1 else None


def map_output(model: str, shapes: Mapping[str, tuple[int, ...]]) -> tuple[str, tuple[int, int]]:
    """The output that is a single-channel map, the largest if several, and its (H, W); a `ModelError`
    naming the outputs when there is none."""
    found = {name: size for name, shape in shapes.items() if (size := _map_size(tuple(shape)))}
    if not found:
        raise ModelError(f"{model}: no single-channel map output (N×1×H×W or N×H×W×1); the outputs are "
                         f"{list(shapes.values())}")
    name = max(found, key=lambda n: found[n][0] * found[n][1])
    return name, found[name]


class MapReader:
    """Reads one frame's (or region's) map from a model's outputs: H×W float32, through a sigmoid when
    the model gives logits."""

    def __init__(self, model: str, shapes: Mapping[str, tuple[int, ...]], logits: bool = False):
        (self.name, self.size), self.logits = map_output(model, shapes), logits

    def __call__(self, outputs: Mapping[str, np.ndarray]) -> np.ndarray:
        values = np.asarray(outputs[self.name], np.float32).reshape(self.size)
        return sigmoid(values) if self.logits else values


class ProbabilityMap:
    """A whole-frame map model (`text-map`): its map over the frame, in [0, 1] (values outside are clipped)."""

    def __init__(self, model: str, shapes: Mapping[str, tuple[int, ...]], logits: bool = False):
        self.read = MapReader(model, shapes, logits)

    def __call__(self, outputs: Mapping[str, np.ndarray], geometry: Geometry) -> np.ndarray:
        return np.clip(to_source(self.read(outputs), geometry), 0.0, 1.0)


def frame_map(kind: str | None, model: str, shapes: Mapping[str, tuple[int, ...]]) -> ProbabilityMap | None:
    """The frame-level decoding of an image-to-image model (`kind`), or None for any other kind."""
    return ProbabilityMap(model, shapes) if kind in MAP_KINDS else None


LEVEL = 0.5  # a pixel counts as text / person from here (the summary's `share`)


def summary(values: np.ndarray) -> dict[str, float]:
    """A map in three numbers (JSON Lines' `map`): the share of pixels from `LEVEL` up, the highest value
    and the mean."""
    return {"share": round(float(np.mean(values >= LEVEL)), 5), "max": round(float(values.max()), 4),
            "mean": round(float(values.mean()), 5)}
