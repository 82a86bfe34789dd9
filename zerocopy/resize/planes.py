"""CPU resize of decoded planes straight to NV12 at the model's size. No full-size copy is made.

Each output sample gathers its bilinear taps (half-pixel centres, as `cv2.resize(INTER_LINEAR)`)
from the decoder's own plane buffers, so the cost scales with the model's input size, not the
video's. The colour transform to BT.601 limited range runs after the resize, on the small planes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import av
import numpy as np

from zerocopy.frames import Geometry, ResizeMode
from zerocopy.resize.colour import ColourTransform, source_matrix

_PLANAR = re.compile(r"^yuvj?(420|422|440|444|411|410)p(\d+)?(le)?$")
_SEMI = {"nv12": (False, 8), "nv21": (True, 8), "p010le": (False, 16), "p012le": (False, 16),
         "p016le": (False, 16)}
_GRAY = re.compile(r"^gray(\d+)?(le)?$")


@dataclass(frozen=True)
class _Taps:
    """Flat indices and weights of the four bilinear taps for one plane at one output size."""

    i00: np.ndarray
    i01: np.ndarray
    i10: np.ndarray
    i11: np.ndarray
    wx: np.ndarray
    wy: np.ndarray

    @classmethod
    def build(cls, src_w: int, src_h: int, stride: int, step: int, offset: int, out_w: int, out_h: int):
        def axis(n_src: int, n_out: int):
            pos = (np.arange(n_out, dtype=np.float64) + 0.5) * (n_src / n_out) - 0.5
            pos = np.clip(pos, 0, n_src - 1)
            lo = np.floor(pos).astype(np.intp)
            hi = np.minimum(lo + 1, n_src - 1)
            return lo, hi, (pos - lo).astype(np.float32)

        x0, x1, wx = axis(src_w, out_w)
        y0, y1, wy = axis(src_h, out_h)
        r0, r1 = (y0 * stride)[:, None], (y1 * stride)[:, None]
        c0, c1 = (x0 * step + offset)[None, :], (x1 * step + offset)[None, :]
        return cls(r0 + c0, r0 + c1, r1 + c0, r1 + c1, wx[None, :], wy[:, None])

    def apply(self, flat: np.ndarray) -> np.ndarray:
        top = flat[self.i00] + (flat[self.i01] - flat[self.i00].astype(np.float32)) * self.wx
        bot = flat[self.i10] + (flat[self.i11] - flat[self.i10].astype(np.float32)) * self.wx
        return top + (bot - top) * self.wy


@dataclass
class _Plan:
    layout: str  # "planar" | "semi" | "gray"
    dtype: np.dtype
    y: _Taps
    cb: _Taps | None
    cr: _Taps | None
    colour: ColourTransform


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
    """Decoded `av.VideoFrame` → (Y [1,h,w,1], UV [1,h/2,w/2,2]) uint8 NV12 plus its `Geometry`."""

    def __init__(self, dst_w: int, dst_h: int, mode: ResizeMode):
        if dst_w % 2 or dst_h % 2:
            raise ValueError(f"NV12 needs an even input size, got {dst_w}x{dst_h}")
        self.dst_w, self.dst_h, self.mode = dst_w, dst_h, mode
        self._key: tuple | None = None
        self._plan: _Plan | None = None
        self._geometry: Geometry | None = None

    def _make_plan(self, frame: av.VideoFrame, layout: str, bits: int, swap: bool) -> _Plan:
        g = self._geometry
        assert g is not None
        cw, ch = g.content_w, g.content_h
        dtype = np.dtype("<u2") if bits > 8 else np.dtype(np.uint8)
        size = dtype.itemsize
        p = frame.planes
        y = _Taps.build(p[0].width, p[0].height, p[0].line_size // size, 1, 0, cw, ch)
        cb = cr = None
        if layout == "planar":
            cb = _Taps.build(p[1].width, p[1].height, p[1].line_size // size, 1, 0, cw // 2, ch // 2)
            cr = _Taps.build(p[2].width, p[2].height, p[2].line_size // size, 1, 0, cw // 2, ch // 2)
        elif layout == "semi":
            cw_src, ch_src = (frame.width + 1) // 2, (frame.height + 1) // 2
            stride = p[1].line_size // size
            cb = _Taps.build(cw_src, ch_src, stride, 2, 1 if swap else 0, cw // 2, ch // 2)
            cr = _Taps.build(cw_src, ch_src, stride, 2, 0 if swap else 1, cw // 2, ch // 2)
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
        key = (fmt, frame.width, frame.height, tuple(pl.line_size for pl in frame.planes),
               frame.colorspace, frame.color_range)
        if key != self._key:
            self._geometry = self.geometry_for(frame.width, frame.height)
            self._plan = self._make_plan(frame, layout, bits, swap)
            self._key = key
        plan, g = self._plan, self._geometry
        assert plan is not None and g is not None

        planes = [np.frombuffer(pl, plan.dtype) for pl in frame.planes]
        y = plan.y.apply(planes[0])
        if plan.layout == "gray":
            mid = float(1 << (bits - 1))
            cb = cr = np.full((g.content_h // 2, g.content_w // 2), mid, np.float32)
        else:
            uv_src = planes[1] if plan.layout == "semi" else None
            cb = plan.cb.apply(uv_src if uv_src is not None else planes[1])
            cr = plan.cr.apply(uv_src if uv_src is not None else planes[2])
        y, cb, cr = _to_bt601(y, cb, cr, plan.colour)

        y_out = np.full((1, g.dst_h, g.dst_w, 1), 16, np.uint8)
        uv_out = np.full((1, g.dst_h // 2, g.dst_w // 2, 2), 128, np.uint8)
        y_out[0, g.y0 : g.y0 + g.content_h, g.x0 : g.x0 + g.content_w, 0] = y
        uy, ux = g.y0 // 2, g.x0 // 2
        uv_region = uv_out[0, uy : uy + g.content_h // 2, ux : ux + g.content_w // 2]
        uv_region[..., 0] = cb
        uv_region[..., 1] = cr
        return y_out, uv_out, g


def _to_bt601(y: np.ndarray, cb: np.ndarray, cr: np.ndarray, t: ColourTransform):
    """Apply the affine colour transform; luma uses nearest-upsampled chroma, chroma 2×2-averaged luma."""
    if not t.identity:
        m, off = t.matrix, t.offset
        h, w = y.shape
        y_small = y[: h // 2 * 2, : w // 2 * 2].reshape(h // 2, 2, w // 2, 2).mean(axis=(1, 3))
        chroma_in_luma = m[0, 1] * cb + m[0, 2] * cr
        y_new = m[0, 0] * y + np.repeat(np.repeat(chroma_in_luma, 2, 0), 2, 1)[:h, :w] + off[0]
        cb_new = m[1, 0] * y_small + m[1, 1] * cb + m[1, 2] * cr + off[1]
        cr_new = m[2, 0] * y_small + m[2, 1] * cb + m[2, 2] * cr + off[2]
        y, cb, cr = y_new, cb_new, cr_new
    return (np.clip(np.rint(y), 0, 255).astype(np.uint8),
            np.clip(np.rint(cb), 0, 255).astype(np.uint8),
            np.clip(np.rint(cr), 0, 255).astype(np.uint8))
