"""Real photos from installed packages, and clips made from them with known face positions.

Used by `make demo` and the tests: a face photo moves across a face-free background photo, so
the true face box of every frame is known. The face boxes below were checked by eye.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from PIL import Image

# Face boxes (x1, y1, x2, y2) in each photo's own pixels, checked by eye, and the head-and-shoulders
# crop that clips use (BlazeFace short-range is made for faces that fill a good part of the frame).
FACE_BOXES = {
    "astronaut": (180.0, 80.0, 272.0, 174.0),
    "grace_hopper": (165.0, 140.0, 365.0, 345.0),
}
PORTRAIT_CROPS = {
    "astronaut": (120, 20, 330, 250),
    "grace_hopper": (95, 70, 435, 430),
}
FACE_FREE = ("coffee", "rocket")

_MATRIX = {"bt601": ("ITU601", 6), "bt709": ("ITU709", 1), "bt2020": ("BT2020", 9)}


def load_photo(name: str) -> np.ndarray:
    """An RGB uint8 photo that ships inside an installed package (scikit-image or matplotlib)."""
    if name == "grace_hopper":
        from matplotlib import cbook

        path = cbook.get_sample_data("grace_hopper.jpg", asfileobj=False)
        return np.asarray(Image.open(path).convert("RGB"))
    try:
        from skimage import data
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise RuntimeError("scikit-image is needed for the sample photos: pip install scikit-image") from e
    img = getattr(data, name)()
    return np.asarray(Image.fromarray(img).convert("RGB"))


@dataclass(frozen=True)
class ClipSpec:
    width: int = 640
    height: int = 360
    frames: int = 24
    fps: int = 25
    codec: str = "libx264"
    pix_fmt: str = "yuv420p"
    matrix: str | None = None  # bt601 / bt709 / bt2020; None: bt709 from 720 lines up, else bt601
    full_range: bool = False
    face: str | None = "astronaut"  # None: a face-free clip
    background: str = "coffee"
    face_height: float = 0.8  # the portrait's height as a share of the frame's
    options: tuple[tuple[str, str], ...] = ()
    noise: float = 0.0  # per-frame sensor-like noise (std, 0-255 scale): makes decoding cost like real footage
    pan: bool = False  # the background drifts, as with a hand-held camera

    @property
    def colour_matrix(self) -> str:
        return self.matrix or ("bt709" if self.height >= 720 else "bt601")


CODEC_OPTIONS = {
    "libx264": (("preset", "ultrafast"),),
    "libx265": (("preset", "ultrafast"), ("x265-params", "log-level=error")),
    "libvpx-vp9": (("deadline", "realtime"), ("cpu-used", "8")),
    "libsvtav1": (("preset", "12"),),
}


def scene(spec: ClipSpec, index: int, photos: dict[str, Image.Image]) -> tuple[np.ndarray, np.ndarray]:
    """Frame `index` as RGB, and its true face boxes (k, 4)."""
    w, h = spec.width, spec.height
    if spec.pan:
        bg = photos[spec.background]
        zoom = bg.resize((int(w * 1.2), int(h * 1.2)), Image.BILINEAR)
        dx = int((zoom.width - w) * (0.5 + 0.5 * np.sin(index / 20.0)))
        dy = int((zoom.height - h) * (0.5 + 0.5 * np.cos(index / 27.0)))
        canvas = zoom.crop((dx, dy, dx + w, dy + h))
    else:
        canvas = photos[spec.background].resize((w, h), Image.BILINEAR)
    if spec.face is None:
        return _noisy(np.asarray(canvas), spec, index), np.zeros((0, 4), np.float32)
    face = photos[spec.face]
    scale = spec.face_height * h / face.height
    pw, ph = max(2, round(face.width * scale)), max(2, round(face.height * scale))
    t = index / max(1, spec.frames - 1)
    x = round((0.05 * w) + t * max(0, w - pw - 0.1 * w))
    y = (h - ph) // 2
    canvas.paste(face.resize((pw, ph), Image.BILINEAR), (x, y))
    cx, cy = PORTRAIT_CROPS[spec.face][:2]
    fb = np.asarray(FACE_BOXES[spec.face], np.float32) - np.array([cx, cy, cx, cy], np.float32)
    sx, sy = pw / face.width, ph / face.height
    box = np.array([fb[0] * sx + x, fb[1] * sy + y, fb[2] * sx + x, fb[3] * sy + y], np.float32)
    return _noisy(np.asarray(canvas), spec, index), box[None]


def _noisy(rgb: np.ndarray, spec: ClipSpec, index: int) -> np.ndarray:
    if not spec.noise:
        return rgb
    rng = np.random.default_rng(index)
    grain = rng.normal(0.0, spec.noise, rgb.shape[:2])[..., None].astype(np.float32)
    return np.clip(rgb.astype(np.float32) + grain, 0, 255).astype(np.uint8)


def rgb_to_frame(rgb: np.ndarray, pix_fmt: str, matrix: str, full_range: bool) -> av.VideoFrame:
    """RGB → a Y'CbCr frame converted (by swscale) and tagged with the given matrix and range."""
    name, code = _MATRIX[matrix]
    frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24")
    out = frame.reformat(format=pix_fmt, dst_colorspace=name, dst_color_range="JPEG" if full_range else "MPEG")
    out.colorspace = code
    out.color_range = 2 if full_range else 1
    return out


def write_clip(path: str | Path, spec: ClipSpec, container_format: str | None = None,
               container_options: dict[str, str] | None = None) -> list[np.ndarray]:
    """Encode the clip to `path`; returns the true face boxes of every frame."""
    if spec.codec == "libsvtav1":
        os.environ.setdefault("SVT_LOG", "1")  # SVT-AV1 prints its banner straight to stderr otherwise
    photos = {n: Image.fromarray(load_photo(n)) for n in {spec.background, spec.face} if n}
    if spec.face:
        photos[spec.face] = photos[spec.face].crop(PORTRAIT_CROPS[spec.face])
    truth = []
    with av.open(str(path), "w", format=container_format, options=container_options or {}) as out:
        stream = out.add_stream(spec.codec, rate=spec.fps)
        stream.width, stream.height, stream.pix_fmt = spec.width, spec.height, spec.pix_fmt
        cc = stream.codec_context
        cc.colorspace = _MATRIX[spec.colour_matrix][1]
        cc.color_range = 2 if spec.full_range else 1
        stream.options = dict(CODEC_OPTIONS.get(spec.codec, ()) + spec.options)
        for i in range(spec.frames):
            rgb, boxes = scene(spec, i, photos)
            frame = rgb_to_frame(rgb, spec.pix_fmt, spec.colour_matrix, spec.full_range)
            frame.pts, frame.time_base = i, Fraction(1, spec.fps)
            out.mux(stream.encode(frame))
            truth.append(boxes)
        out.mux(stream.encode(None))
    return truth


def write_size_change_clip(path: str | Path, specs: Sequence[ClipSpec]) -> list[np.ndarray]:
    """H.264 in MPEG-TS whose resolution changes between segments (byte-concatenated streams)."""
    truth: list[np.ndarray] = []
    data = io.BytesIO()
    tmp = Path(path).with_suffix(".part.ts")
    for spec in specs:
        truth += write_clip(tmp, replace(spec, codec="libx264"), container_format="mpegts")
        data.write(tmp.read_bytes())
    tmp.unlink()
    Path(path).write_bytes(data.getvalue())
    return truth
