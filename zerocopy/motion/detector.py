"""Motion on a small luma picture, numpy only (OpenCV is an optional extra): a running-average background, each
pixel's brightness difference from it over the threshold, counted in 8×8-pixel cells (a cell moves when a quarter
of its pixels changed: the noise suppression), the masked areas left out, and the moving cells joined into boxes.

The picture is `luma_size` of the frame: 192 pixels on its long side (192×112 for 16:9), each side a multiple of
the cell. That is Frigate's order of size (its motion picture is 100 lines high) and small enough that the whole
stage stays near 0.1 ms a frame; a cell is then 1/24 of the frame's width (80 pixels at 1080p), so an object half
a cell wide (~40 pixels at 1080p) still moves a cell. Every rule counts in media time (seconds), not frames.

- Calibration: for `CALIBRATE_S` after the first frame and after each `reset` (a reconnection, a gap in the
  timestamps, a whole-scene change) the background learns fast and nothing is called motion; the record says
  `calibrating` (the gate infers then).
- Whole scene: when more than `WHOLE_SCENE` of the picture moves at once (a camera's IR switch, a shake, lights),
  it is said (`whole_scene`), the background starts again and calibrates; the state lasts while the scene keeps
  changing that much after each calibration, so a stage can count its episodes and seconds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from zerocopy.analytics.geometry import Points, inside, place

CELL = 8  # pixels of the luma picture a side of a cell
LUMA_LONG = 192  # the luma picture's long side, pixels
CELL_SHARE = 0.25  # a cell moves when this share of its pixels changed
WHOLE_SCENE = 0.8  # more than this share of the cells moving at once: the whole scene changed
CALIBRATE_S = 1.0  # seconds of fast learning after a start or a reset
CALIBRATE_RATE = 0.5  # the background's step towards each frame while calibrating
BACKGROUND_S = 4.0  # the running average's time constant: what stays still this long becomes background
LEARN_EVERY_S = 0.1  # the background learns at most this often (its step made for the time passed)

Box = tuple[float, float, float, float]
_popcount = getattr(np, "bitwise_count", None)  # numpy >= 2.0; 5× faster than summing the cells' bytes


def luma_size(width: int, height: int, long: int = LUMA_LONG, cell: int = CELL) -> tuple[int, int]:
    """The motion picture's (width, height) for a `width`×`height` frame: `long` on its long side, the other side
    in proportion, both multiples of `cell`."""
    short = max(cell, round(long * min(width, height) / max(width, height) / cell) * cell)
    return (long, short) if width >= height else (short, long)


@dataclass(frozen=True, kw_only=True, slots=True)
class Motion:
    """What the detector saw on one frame: `moving` (some cell moved), the boxes of connected moving cells as
    fractions of the frame (x1, y1, x2, y2; for drawing), the `fraction` of the picture's cells moving, whether the
    background is still `calibrating`, and `whole_scene` (the picture changed as a whole, see the module)."""

    moving: bool = False
    boxes: tuple[Box, ...] = ()
    fraction: float = 0.0
    calibrating: bool = False
    whole_scene: bool = False


CALIBRATING = Motion(calibrating=True)
AFTER_WHOLE_SCENE = Motion(calibrating=True, whole_scene=True)


class MotionDetector:
    """`__call__(luma, t, source)` → `Motion`: `luma` a uint8 picture (any size; cropped to whole cells), `t` the
    frame's media time in seconds, `source` the decoded frame's (width, height), where the `masks` (polygons in its
    pixels, or fractions of it: `RunConfig.motion_mask`'s points) are placed on the first frame. One per input.
    With `boxes` False the records carry none (joining the cells is the one step whose cost grows with the motion:
    ~0.5 ms with half the picture moving; only drawing needs them)."""

    def __init__(self, threshold: int = 25, masks: Sequence[Points] = (), cell: int = CELL, boxes: bool = True):
        self.threshold, self.masks, self.cell, self.boxes = float(threshold), tuple(masks), cell, boxes
        self._shape: tuple | None = None
        self._bg: np.ndarray | None = None
        self._whole = False
        self.reset()

    def reset(self) -> None:
        """Start the background again from the next frame (and calibrate)."""
        self._fresh = True
        self._until = self._last = 0.0

    def _setup(self, luma: np.ndarray, source: tuple[int, int]) -> None:
        c = self.cell
        h, w = (luma.shape[0] // c) * c, (luma.shape[1] // c) * c
        if h == 0 or w == 0:
            raise ValueError(f"a motion picture of {luma.shape[1]}x{luma.shape[0]} is smaller than a {c}-pixel cell")
        self._shape = (luma.shape, source)
        self._h, self._w = h, w
        self._bg = np.zeros((h, w), np.float32)  # the running average
        self._d = np.empty_like(self._bg)
        self._bg8 = np.zeros((h, w), np.uint8)  # the same, rounded down: what each frame is compared with
        self._hi, self._lo = np.empty((h, w), np.uint8), np.empty((h, w), np.uint8)
        self._changed = np.empty((h, w), bool)
        visible = _unmasked(self.masks, luma.shape, source)[:h, :w] if self.masks else np.ones((h, w), bool)
        # with masks, the threshold per pixel, past any difference where masked: the mask costs nothing more a frame
        limit = min(255, int(self.threshold))
        self._limit = np.where(visible, limit, 255).astype(np.uint8) if self.masks else limit
        counts = visible.reshape(h // c, c, w // c, c).sum(axis=(1, 3))
        usable = counts >= c * c // 2  # a cell mostly masked never counts
        self._need = np.where(usable, np.ceil(CELL_SHARE * counts), c * c + 1).astype(np.int32)
        self._usable = max(1, int(usable.sum()))
        self.reset()

    def _start(self, pic: np.ndarray, t: float) -> None:
        self._bg[...] = pic
        self._bg8[...] = pic
        self._fresh, self._until, self._last = False, t + CALIBRATE_S, t

    def _learn(self, pic: np.ndarray, rate: float) -> None:
        """The background a step `rate` (0–1) of the way to `pic`."""
        d = np.subtract(pic, self._bg, out=self._d)
        d *= rate
        self._bg += d
        np.copyto(self._bg8, self._bg, casting="unsafe")

    def __call__(self, luma: np.ndarray, t: float, source: tuple[int, int]) -> Motion:
        if self._shape != (luma.shape, tuple(source)):
            self._setup(luma, tuple(source))
        pic = luma[: self._h, : self._w]
        if self._fresh:
            self._start(pic, t)
            return AFTER_WHOLE_SCENE if self._whole else CALIBRATING
        if t < self._until:  # calibrating: the background learns fast, nothing is motion yet
            self._learn(pic, CALIBRATE_RATE)
            self._last = t
            return AFTER_WHOLE_SCENE if self._whole else CALIBRATING
        cells = self._cells(pic)
        since = t - self._last
        if since >= LEARN_EVERY_S or since < 0:
            self._learn(pic, 1.0 - math.exp(-min(1.0, max(0.0, since)) / BACKGROUND_S))
            self._last = t
        n = int(np.count_nonzero(cells))
        fraction = n / self._usable
        if fraction > WHOLE_SCENE:
            self._whole = True
            self._start(pic, t)
            return Motion(fraction=fraction, calibrating=True, whole_scene=True)
        self._whole = False
        if n == 0:
            return Motion()
        boxes = _boxes(cells, self.cell / self._w, self.cell / self._h) if self.boxes else ()
        return Motion(moving=True, boxes=boxes, fraction=fraction)

    def _cells(self, pic: np.ndarray) -> np.ndarray:
        """Which cells moved: enough of their pixels differ from the background by more than the threshold (in
        uint8: |a - b| as max - min, a fifth of the float work)."""
        hi = np.maximum(pic, self._bg8, out=self._hi)
        hi -= np.minimum(pic, self._bg8, out=self._lo)
        changed = np.greater(hi, self._limit, out=self._changed)
        c, gh, gw = self.cell, self._h // self.cell, self._w // self.cell
        if c == 8 and _popcount is not None:  # a row's 8 bools (bytes 0/1) as one uint64: its bits are the count
            counts = _popcount(changed.view(np.uint64)).reshape(gh, c, gw).sum(axis=1, dtype=np.int32)
        else:
            counts = changed.view(np.uint8).reshape(gh, c, gw, c).sum(axis=(1, 3), dtype=np.int32)
        return counts >= self._need


def _unmasked(masks: Sequence[Points], shape: tuple[int, ...], source: tuple[int, int]) -> np.ndarray:
    """The luma pixels outside every mask (masks placed on the `source` frame, scaled to the luma picture)."""
    h, w = shape[:2]
    ys, xs = np.mgrid[0:h, 0:w]
    centres = np.stack([xs.ravel() + 0.5, ys.ravel() + 0.5], axis=1)
    hidden = np.zeros(h * w, bool)
    scale = np.array([w / source[0], h / source[1]])
    for points in masks:
        hidden |= inside(place(points, *source).xy * scale, centres)
    return ~hidden.reshape(h, w)


# A cell's neighbours already visited in a row-major walk: 8-connected moving cells make one box.
_BEFORE = ((0, -1), (-1, -1), (-1, 0), (-1, 1))


def _boxes(cells: np.ndarray, cw: float, ch: float) -> tuple[Box, ...]:
    """Boxes (fractions of the frame) around each 8-connected group of moving cells (union-find over pairs of
    neighbours, made with numpy; few cells move on a frame worth boxes)."""
    gh, gw = cells.shape
    ys, xs = np.nonzero(cells)
    index = np.full((gh + 1, gw + 2), -1, np.int64)  # a border of -1 above and on both sides
    index[ys + 1, xs + 1] = np.arange(len(ys))
    parent = list(range(len(ys)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for dy, dx in _BEFORE:
        other = index[ys + 1 + dy, xs + 1 + dx]
        for a, b in zip(np.flatnonzero(other >= 0).tolist(), other[other >= 0].tolist(), strict=True):
            ra, rb = root(a), root(b)
            if ra != rb:
                parent[ra] = rb
    groups: dict[int, list[int]] = {}
    for i in range(len(ys)):
        groups.setdefault(root(i), []).append(i)
    out = []
    for members in groups.values():
        gy, gx = ys[members], xs[members]
        out.append((float(gx.min() * cw), float(gy.min() * ch), float((gx.max() + 1) * cw), float((gy.max() + 1) * ch)))
    return tuple(sorted(out))
