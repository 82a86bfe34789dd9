"""CPU resize of decoded planes straight to NV12 at the model's size. No full-size copy is made.

Each axis of each plane is resampled on its own (rows first, then columns), reading the decoder's
own plane buffers: where the picture shrinks by 2 or more along an axis, each output sample is the
mean of the source samples its footprint covers (area averaging, as `cv2.resize(INTER_AREA)`;
plain bilinear sampling would alias: a face of ~10 model pixels then hinges on where the taps fall);
below that, bilinear with half-pixel centres (as `cv2.resize(INTER_LINEAR)`). The colour transform
to BT.601 limited range runs after the resize, on the small planes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import av
import numpy as np

from zerocopy.frames import Geometry, ResizeMode
from zerocopy.resize.colour import ColourTransform, source_matrix

_PLANAR = re.compile(r"^yuvj?(420|422|440|444|411|410)p(\d+)?(le)?$")
_SEMI = {"nv12": (False, 8), "nv21": (True, 8), "p010le": (False, 16), "p012le": (False, 16),
         "p016le": (False, 16)}
_GRAY = re.compile(r"^gray(\d+)?(le)?$")

# From this shrink factor on, an axis is area-averaged instead of bilinearly sampled.
AREA_FROM = 2.0


def uses_area(n_src: int, n_out: int, antialias: bool = True) -> bool:
    """Whether an axis of `n_src` samples resized to `n_out` is area-averaged (else bilinear)."""
    return antialias and n_src >= AREA_FROM * n_out


@dataclass(frozen=True)
class _Axis:
    """How one axis of a plane maps to the output.

    kind "copy": one source index per output sample. "linear": two taps (`index`, `weight`).
    "box": output sample j sums the source samples [start_j, start_j + width_j), the edges
    `round(j * n_src / n_out)`; widths differ by at most one, so `index` holds the first
    `min(width)` taps of every sample and `tail` / `tail_at` the last tap of the wider ones;
    `norm` is 1 / width.
    """

    kind: str
    index: np.ndarray  # (taps, n_out) source indices
    weight: np.ndarray | None = None  # linear: (2, n_out) float32
    tail: np.ndarray | None = None  # box: source index of the extra tap of the wider samples
    tail_at: np.ndarray | None = None  # box: which output samples have it
    norm: np.ndarray | None = None  # box: (n_out,) float32
    uniform: int = 0  # box: every width is this and sample j starts at j * uniform (strided slices)

    @classmethod
    def build(cls, n_src: int, n_out: int, antialias: bool = True, quantum: int = 1) -> _Axis:
        """`quantum` q > 1: the source arrives summed over runs of q samples (box edges then fall on
        multiples of q; indices count runs)."""
        if n_src == n_out:
            return cls("copy", np.arange(n_out, dtype=np.intp)[None])
        if uses_area(n_src, n_out, antialias):
            runs = n_src // quantum
            edges = np.minimum(np.round(np.arange(n_out + 1) * (n_src / n_out / quantum)).astype(np.intp), runs)
            start, width = edges[:-1], np.diff(edges)
            m = int(width.min())
            wide = np.nonzero(width > m)[0]
            uniform = m if not len(wide) and (start == np.arange(n_out) * m).all() else 0
            return cls("box", start[None] + np.arange(m, dtype=np.intp)[:, None],
                       tail=start[wide] + m if len(wide) else None, tail_at=wide if len(wide) else None,
                       norm=(1.0 / (width * quantum)).astype(np.float32), uniform=uniform)
        pos = (np.arange(n_out, dtype=np.float64) + 0.5) * (n_src / n_out) - 0.5
        pos = np.clip(pos, 0, n_src - 1)
        lo = np.floor(pos).astype(np.intp)
        hi = np.minimum(lo + 1, n_src - 1)
        frac = (pos - lo).astype(np.float32)
        return cls("linear", np.stack([lo, hi]), weight=np.stack([1 - frac, frac]))


def _resample(data: np.ndarray, ax: _Axis, axis: int, dtype) -> np.ndarray:
    """Resample `data` along `axis` (0: rows, 1: columns); box sums stay unnormalised, in `dtype`."""
    n = ax.index.shape[1]

    def take(i: np.ndarray) -> np.ndarray:
        if ax.uniform:  # a whole-number factor: the taps are strided slices, no gather needed
            first, k = int(i[0]), ax.uniform
            sl = slice(first, first + k * n, k)
            return data[sl] if axis == 0 else data[:, sl]
        return data[i] if axis == 0 else data[:, i]

    if ax.kind == "copy":
        return take(ax.index[0])
    if ax.kind == "linear":
        shape = (-1, 1) if axis == 0 else (1, -1)
        return take(ax.index[0]) * ax.weight[0].reshape(shape) + take(ax.index[1]) * ax.weight[1].reshape(shape)
    acc = take(ax.index[0]).astype(dtype)
    for i in ax.index[1:]:
        np.add(acc, take(i), out=acc)
    if ax.tail is not None:
        if axis == 0:
            acc[ax.tail_at] += data[ax.tail]
        else:
            acc[:, ax.tail_at] += data[:, ax.tail]
    return acc


@dataclass(frozen=True)
class _Resample:
    """One plane (or one channel of an interleaved plane) resized to (out_h, out_w): rows, then columns."""

    rows: _Axis
    cols: _Axis
    stride: int  # in samples
    step: int  # samples between neighbours in a row (2 for one channel of an interleaved plane)
    offset: int
    shape: tuple[int, int]  # the source (height, width)
    norm: np.ndarray | None  # (out_h, out_w) float32 area normalisation, or None
    sums: tuple[type, type]  # the integer type of the row sums and of the row-and-column sums
    pairs: bool  # columns are summed in pairs (strided, cheap) before the box gathers them

    @classmethod
    def build(cls, src_w: int, src_h: int, stride: int, step: int, offset: int, out_w: int, out_h: int,
              bits: int = 8, antialias: bool = True) -> _Resample:
        rows = _Axis.build(src_h, out_h, antialias)
        # Wide column boxes read whole rows of row sums: summing neighbours in pairs first halves
        # the gathers (box edges then fall on even columns: at most one source sample off).
        pairs = uses_area(src_w, out_w, antialias) and src_w >= 4 * out_w
        cols = _Axis.build(src_w, out_w, antialias, 2 if pairs else 1)
        norm = None
        if rows.norm is not None or cols.norm is not None:
            ry = rows.norm if rows.norm is not None else np.ones(out_h, np.float32)
            cx = cols.norm if cols.norm is not None else np.ones(out_w, np.float32)
            norm = (ry[:, None] * cx[None, :]).astype(np.float32)

        def fits(n: int) -> type:
            return np.uint16 if ((1 << bits) - 1) * n < (1 << 16) else np.uint32

        ty = rows.index.shape[0] + (rows.tail is not None) if rows.kind == "box" else 1
        tx = cols.index.shape[0] + (cols.tail is not None) if cols.kind == "box" else 1
        return cls(rows, cols, stride, step, offset, (src_h, src_w), norm,
                   (fits(ty), fits(ty * tx * (2 if pairs else 1))), pairs)

    def apply(self, flat: np.ndarray) -> np.ndarray:
        """The resized plane as (out_h, out_w) float32 code values."""
        item = flat.itemsize
        view = np.lib.stride_tricks.as_strided(flat[self.offset:], shape=self.shape,
                                               strides=(self.stride * item, self.step * item), writeable=False)
        part = _resample(view, self.rows, 0, self.sums[0])
        wide = np.float32 if part.dtype == np.float32 else self.sums[1]
        if self.pairs:
            n = self.shape[1] // 2
            part = np.add(part[:, 0 : 2 * n : 2], part[:, 1 : 2 * n : 2], dtype=wide)
        out = _resample(part, self.cols, 1, wide)
        if self.norm is not None:
            return np.multiply(out, self.norm, dtype=np.float32)
        return out.astype(np.float32, copy=False)


@dataclass
class _Plan:
    layout: str  # "planar" | "semi" | "gray"
    dtype: np.dtype
    y: _Resample
    cb: _Resample | None
    cr: _Resample | None
    colour: ColourTransform


@lru_cache(maxsize=64)
def _layout_of(fmt: str) -> tuple[str, int, bool] | None:
    """(layout, bits, swap_uv) for formats read directly; None for formats to convert first."""
    if m := _PLANAR.match(fmt):
        return "planar", int(m.group(2) or 8), False
    if fmt in _SEMI:
        swap, bits = _SEMI[fmt]
        return "semi", bits, swap
    if m := _GRAY.match(fmt):
        return "gray", int(m.group(1) or 8), False
    return None


class PlaneResizer:
    """Decoded `av.VideoFrame` → (Y [1,h,w,1], UV [1,h/2,w/2,2]) uint8 NV12 plus its `Geometry`.

    With `ring=n` the outputs come from n preallocated buffer pairs, reused in turn (their letterbox
    bars are filled once): a frame's planes stay valid until n more frames have been resized, so n
    must exceed the frames that can be in flight at once. `ring=0` allocates fresh planes each call.
    `antialias=False` samples bilinearly at every factor (aliasing; for comparisons only).
    """

    def __init__(self, dst_w: int, dst_h: int, mode: ResizeMode, ring: int = 0, antialias: bool = True):
        if dst_w % 2 or dst_h % 2:
            raise ValueError(f"NV12 needs an even input size, got {dst_w}x{dst_h}")
        self.dst_w, self.dst_h, self.mode, self.ring = dst_w, dst_h, mode, ring
        self.antialias = antialias
        self._key: tuple | None = None
        self._plan: _Plan | None = None
        self._geometry: Geometry | None = None
        self._buffers: list[tuple[np.ndarray, np.ndarray]] = []
        self._next = 0

    def _make_plan(self, frame: av.VideoFrame, layout: str, bits: int, swap: bool) -> _Plan:
        g = self._geometry
        assert g is not None
        cw, ch = g.content_w, g.content_h
        dtype = np.dtype("<u2") if bits > 8 else np.dtype(np.uint8)
        size = dtype.itemsize
        p = frame.planes
        aa = self.antialias
        y = _Resample.build(p[0].width, p[0].height, p[0].line_size // size, 1, 0, cw, ch, bits, aa)
        cb = cr = None
        if layout == "planar":
            cb = _Resample.build(p[1].width, p[1].height, p[1].line_size // size, 1, 0, cw // 2, ch // 2, bits, aa)
            cr = _Resample.build(p[2].width, p[2].height, p[2].line_size // size, 1, 0, cw // 2, ch // 2, bits, aa)
        elif layout == "semi":
            cw_src, ch_src = (frame.width + 1) // 2, (frame.height + 1) // 2
            stride = p[1].line_size // size
            cb = _Resample.build(cw_src, ch_src, stride, 2, 1 if swap else 0, cw // 2, ch // 2, bits, aa)
            cr = _Resample.build(cw_src, ch_src, stride, 2, 0 if swap else 1, cw // 2, ch // 2, bits, aa)
        full = frame.color_range == 2 or frame.format.name.startswith("yuvj")
        matrix = source_matrix(frame.colorspace, frame.width, frame.height)
        colour = ColourTransform.for_source(matrix, full, bits)
        return _Plan(layout, dtype, y, cb, cr, colour)

    def geometry_for(self, width: int, height: int) -> Geometry:
        return Geometry.fit(width, height, self.dst_w, self.dst_h, self.mode)

    def __call__(self, frame: av.VideoFrame) -> tuple[np.ndarray, np.ndarray, Geometry]:
        fmt = frame.format.name
        found = _layout_of(fmt)
        if found is None:  # RGB, palette, alpha…: convert once at source size, then proceed
            frame = frame.reformat(format="yuv420p")
            fmt, found = "yuv420p", _layout_of("yuv420p")
        layout, bits, swap = found
        frame_planes = frame.planes
        key = (fmt, frame.width, frame.height, tuple(pl.line_size for pl in frame_planes),
               frame.colorspace, frame.color_range)
        if key != self._key:
            self._geometry = self.geometry_for(frame.width, frame.height)
            self._plan = self._make_plan(frame, layout, bits, swap)
            self._key = key
            self._buffers = [self._blank() for _ in range(self.ring)]
        plan, g = self._plan, self._geometry
        assert plan is not None and g is not None
        planes = [np.frombuffer(pl, plan.dtype) for pl in frame_planes]
        y = plan.y.apply(planes[0])
        if plan.layout == "gray":
            mid = float(1 << (bits - 1))
            cb = np.full((g.content_h // 2, g.content_w // 2), mid, np.float32)
            cr = cb.copy()
        else:  # semi-planar: both chroma tap sets read the one interleaved plane
            cb = plan.cb.apply(planes[1])
            cr = plan.cr.apply(planes[1] if plan.layout == "semi" else planes[2])
        _to_bt601(y, cb, cr, plan.colour)
        if self._buffers:
            y_out, uv_out = self._buffers[self._next]
            self._next = (self._next + 1) % len(self._buffers)
        else:
            y_out, uv_out = self._blank()
        # y, cb, cr now hold rounded, clipped codes + 0.5: the cast on assignment truncates = rounds
        y_out[0, g.y0 : g.y0 + g.content_h, g.x0 : g.x0 + g.content_w, 0] = y
        uy, ux = g.y0 // 2, g.x0 // 2
        uv_region = uv_out[0, uy : uy + g.content_h // 2, ux : ux + g.content_w // 2]
        uv_region[..., 0] = cb
        uv_region[..., 1] = cr
        return y_out, uv_out, g

    def _blank(self) -> tuple[np.ndarray, np.ndarray]:
        """Black NV12 planes (Y 16, UV 128): the letterbox bars."""
        return (np.full((1, self.dst_h, self.dst_w, 1), 16, np.uint8),
                np.full((1, self.dst_h // 2, self.dst_w // 2, 2), 128, np.uint8))


def _to_bt601(y: np.ndarray, cb: np.ndarray, cr: np.ndarray, t: ColourTransform) -> None:
    """In place: apply the affine colour transform (each luma sample takes its 2×2 block's chroma,
    chroma takes the mean of its 2×2 block of luma), then clip to 8-bit codes and add 0.5 so that
    the cast on assignment rounds."""
    if not t.identity:
        m, off = t.matrix, t.offset
        # (content sizes are even: Geometry keeps them so)
        y_half = (y[0::2, 0::2] + y[0::2, 1::2] + y[1::2, 0::2] + y[1::2, 1::2]) * 0.25
        chroma_in_luma = m[0, 1] * cb + m[0, 2] * cr + off[0]
        cb_new = m[1, 0] * y_half + m[1, 1] * cb + m[1, 2] * cr + off[1]
        cr[...] = m[2, 0] * y_half + m[2, 1] * cb + m[2, 2] * cr + off[2]
        cb[...] = cb_new
        y *= m[0, 0]
        for r in (0, 1):
            for c in (0, 1):
                y[r::2, c::2] += chroma_in_luma
    for plane in (y, cb, cr):
        np.clip(plane, 0.0, 255.0, out=plane)
        plane += 0.5
