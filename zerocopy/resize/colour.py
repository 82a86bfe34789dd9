"""Y'CbCr ↔ Y'CbCr conversion to what OpenVINO's NV12 input expects: BT.601, limited range, 8 bit.

The conversion is affine in (Y', Cb, Cr), so it is done on the small, already-resized planes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# (Kr, Kb) of each matrix, keyed by FFmpeg's AVColorSpace value.
_KR_KB = {
    1: (0.2126, 0.0722),  # BT.709
    4: (0.30, 0.11),  # FCC
    5: (0.299, 0.114),  # BT.470BG (601 625-line)
    6: (0.299, 0.114),  # SMPTE 170M (601 525-line)
    7: (0.212, 0.087),  # SMPTE 240M
    9: (0.2627, 0.0593),  # BT.2020 non-constant luminance
    10: (0.2627, 0.0593),  # BT.2020 constant luminance (treated as NCL)
}
BT601 = (0.299, 0.114)
MATRIX_NAMES = {1: "bt709", 4: "fcc", 5: "bt601", 6: "bt601", 7: "smpte240m", 9: "bt2020", 10: "bt2020"}


def source_matrix(colorspace: int, width: int, height: int) -> int:
    """The AVColorSpace to decode with; unspecified streams are guessed by size, as players do."""
    if colorspace in _KR_KB:
        return colorspace
    return 1 if (height >= 720 or width >= 1280) else 6


def _rgb_from_ycbcr(kr: float, kb: float) -> np.ndarray:
    kg = 1.0 - kr - kb
    to_ycc = np.array([[kr, kg, kb],
                       [-kr / (2 * (1 - kb)), -kg / (2 * (1 - kb)), 0.5],
                       [0.5, -kg / (2 * (1 - kr)), -kb / (2 * (1 - kr))]])
    return np.linalg.inv(to_ycc)


def _ycbcr_from_rgb(kr: float, kb: float) -> np.ndarray:
    return np.linalg.inv(_rgb_from_ycbcr(kr, kb))


@dataclass(frozen=True)
class ColourTransform:
    """codes_out = M @ codes_in + offset, from the source's code values to 8-bit BT.601 limited."""

    matrix: np.ndarray  # (3, 3) float32
    offset: np.ndarray  # (3,) float32
    identity: bool

    @classmethod
    def for_source(cls, colorspace: int, full_range: bool, bits: int) -> ColourTransform:
        kr, kb = _KR_KB[colorspace]
        top = float(1 << bits) - 1.0
        unit = float(1 << (bits - 8))
        if full_range:
            y_scale, y_off, c_scale = 1.0 / top, 0.0, 1.0 / top
        else:
            y_scale, y_off, c_scale = 1.0 / (219.0 * unit), 16.0 * unit, 1.0 / (224.0 * unit)
        c_off = float(1 << (bits - 1))
        # source codes → normalised Y' [0,1], Cb/Cr [-0.5, 0.5]
        norm = np.diag([y_scale, c_scale, c_scale])
        norm_off = -norm @ np.array([y_off, c_off, c_off])
        # → R'G'B' → BT.601 normalised Y'CbCr → limited-range 8-bit codes
        mix = _ycbcr_from_rgb(*BT601) @ _rgb_from_ycbcr(kr, kb)
        out_scale = np.diag([219.0, 224.0, 224.0])
        out_off = np.array([16.0, 128.0, 128.0])
        m = out_scale @ mix @ norm
        off = out_scale @ mix @ norm_off + out_off
        ident = bool(np.allclose(m, np.eye(3), atol=1e-6) and np.allclose(off, 0, atol=1e-4))
        return cls(m.astype(np.float32), off.astype(np.float32), ident)
