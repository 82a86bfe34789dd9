"""CPU resize of decoded planes straight to NV12 at the model's size. No full-size copy is made.

Each output sample gathers its bilinear taps (half-pixel centres, as `cv2.resize(INTER_LINEAR)`)
from the decoder's own plane buffers, so the cost scales with the model's input size, not the
video's. The colour transform to BT.601 limited range runs after the resize, on the small planes.
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


@dataclass(frozen=True)
class _Taps:
    """Flat indices and weights of the four bilinear taps of every output sample of one plane."""

    index: np.ndarray  # (4, out_h * out_w) into the plane's flat buffer
    weight: np.ndarray  # (4, out_h * out_w) float32, summing to 1 per sample
    shape: tuple[int, int]

    @classmethod
    def build(cls, src_w: int, src_h: int, stride: int, step: int, offset: int, out_w: int, out_h: int):
        def axis(n_src: int, n_out: int):
            pos = (np.arange(n_out, dtype=np.float64) + 0.5) * (n_src / n_out) - 0.5
            pos = np.clip(pos, 0, n_src - 1)
            lo = np.floor(pos).astype(np.intp)
            hi = np.minimum(lo + 1, n_src - 1)
            return lo, hi, pos - lo

        x0, x1, wx = axis(src_w, out_w)
        y0, y1, wy = axis(src_h, out_h)
        r0, r1 = (y0 * stride)[:, None], (y1 * stride)[:, None]
        c0, c1 = (x0 * step + offset)[None, :], (x1 * step + offset)[None, :]
        wx, wy = wx[None, :], wy[:, None]
        index = np.stack([r0 + c0, r0 + c1, r1 + c0, r1 + c1]).reshape(4, -1)
        weight = np.stack([(1 - wx) * (1 - wy), wx * (1 - wy), (1 - wx) * wy, wx * wy]).reshape(4, -1)
        return cls(index, weight.astype(np.float32), (out_h, out_w))

    def apply(self, flat: np.ndarray) -> np.ndarray:
        """One gather of all taps, one weighted sum: (out_h, out_w) float32."""
        return np.einsum("kn,kn->n", flat.take(self.index), self.weight).reshape(self.shape)


@dataclass
class _Plan:
    layout: str  # "planar" | "semi" | "gray"
    dtype: np.dtype
    y: _Taps
    cb: _Taps | None
    cr: _Taps | None
    colour: ColourTransform
    y_half: _Taps | None = None  # luma at chroma resolution, for a non-identity colour transform


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
    """

    def __init__(self, dst_w: int, dst_h: int, mode: ResizeMode, ring: int = 0):
        if dst_w % 2 or dst_h % 2:
            raise ValueError(f"NV12 needs an even input size, got {dst_w}x{dst_h}")
        self.dst_w, self.dst_h, self.mode, self.ring = dst_w, dst_h, mode, ring
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
        y_half = None
        if not colour.identity:
            y_half = _Taps.build(p[0].width, p[0].height, p[0].line_size // size, 1, 0, cw // 2, ch // 2)
        return _Plan(layout, dtype, y, cb, cr, colour, y_half)

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
        _to_bt601(y, plan.y_half.apply(planes[0]) if plan.y_half else None, cb, cr, plan.colour)
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


def _to_bt601(y: np.ndarray, y_half: np.ndarray | None, cb: np.ndarray, cr: np.ndarray,
              t: ColourTransform) -> None:
    """In place: apply the affine colour transform (each luma sample takes its 2×2 block's chroma,
    chroma takes the luma sampled at its own position, `y_half`), then clip to 8-bit codes and add
    0.5 so that the cast on assignment rounds."""
    if not t.identity:
        m, off = t.matrix, t.offset
        h, w = y.shape  # even: Geometry keeps the content size even
        blocks = y.reshape(h // 2, 2, w // 2, 2)
        chroma_in_luma = m[0, 1] * cb + m[0, 2] * cr + off[0]
        cb_new = m[1, 0] * y_half + m[1, 1] * cb + m[1, 2] * cr + off[1]
        cr[...] = m[2, 0] * y_half + m[2, 1] * cb + m[2, 2] * cr + off[2]
        cb[...] = cb_new
        y *= m[0, 0]
        blocks += chroma_in_luma[:, None, :, None]
    for plane in (y, cb, cr):
        np.clip(plane, 0.0, 255.0, out=plane)
        plane += 0.5
