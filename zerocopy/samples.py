"""Real photos from installed packages, and clips made from them with known face positions.

Used by `make demo` and the tests: a face photo moves across a face-free background photo, so
the true face box of every frame is known. The face boxes below were checked by eye.
"""

from __future__ import annotations

import io
import os
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from av.video.reformatter import VideoReformatter
from PIL import Image, ImageDraw, ImageFilter

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
# Face-free scenes the footage tests use: a cat's face, a cup of coffee, a rocket, a garage.
FACE_FREE_SCENES = ("chelsea", "coffee", "rocket", "motorcycle")

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
    img = data.stereo_motorcycle()[0] if name == "motorcycle" else getattr(data, name)()
    return np.asarray(Image.fromarray(img).convert("RGB"))


@dataclass(frozen=True, kw_only=True)
class Person:
    """One face in a crowd scene: which photo, how big its face is, where, and what makes it look
    different from the other faces made from the same photo."""

    photo: str = "astronaut"
    face_height: float = 0.1  # the true face box's height as a share of the frame's height
    x: float = 0.5  # the face box's centre in the first frame, as shares of the frame's width / height
    y: float = 0.5
    flip: bool = False  # mirrored
    gain: float = 1.0  # brightness factor
    drift: float = 0.0  # horizontal motion, in frame widths over the whole clip


@dataclass(frozen=True, kw_only=True)
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
    people: tuple[Person, ...] = ()  # several faces at known sizes over the background (`face` unused)

    @property
    def colour_matrix(self) -> str:
        return self.matrix or ("bt709" if self.height >= 720 else "bt601")


CODEC_OPTIONS = {
    "libx264": (("preset", "ultrafast"),),
    "libx265": (("preset", "ultrafast"), ("x265-params", "log-level=error")),
    "libvpx-vp9": (("deadline", "realtime"), ("cpu-used", "8")),
    "libsvtav1": (("preset", "12"),),
}


def scene(spec: ClipSpec, index: int, photos: dict[str, Image.Image],
          sprites: Sequence[Sprite] = ()) -> tuple[np.ndarray, np.ndarray]:
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
    if spec.people:
        rgb = np.asarray(canvas, np.float32)
        boxes = [sprite.paste(rgb, index / max(1, spec.frames - 1)) for sprite in sprites]
        rgb = np.clip(rgb + 0.5, 0, 255).astype(np.uint8)
        return _noisy(rgb, spec, index), np.asarray(boxes, np.float32).reshape(-1, 4)
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


# How much of the photo around its face box a person's cut-out keeps, in face-box sizes:
# (left, top, right, bottom). Hair and shoulders, as a real person would show.
_CUT_MARGIN = (0.7, 0.6, 0.7, 1.3)


@dataclass(kw_only=True)
class Sprite:
    """A person cut out of a photo at its size in the clip, with a soft elliptical edge."""

    rgb: np.ndarray  # (ph, pw, 3) float32
    alpha: np.ndarray  # (ph, pw, 1) float32 in [0, 1]
    face: np.ndarray  # the face box inside the cut-out, (4,) float32
    start: tuple[float, float]  # the face box centre in the first frame, frame pixels
    travel: float  # horizontal motion over the clip, frame pixels

    @classmethod
    def make(cls, person: Person, width: int, height: int, photos: dict[str, Image.Image]) -> Sprite:
        photo = photos[person.photo]
        fx1, fy1, fx2, fy2 = FACE_BOXES[person.photo]
        fw, fh = fx2 - fx1, fy2 - fy1
        ml, mt, mr, mb = _CUT_MARGIN
        cut = (max(0, round(fx1 - ml * fw)), max(0, round(fy1 - mt * fh)),
               min(photo.width, round(fx2 + mr * fw)), min(photo.height, round(fy2 + mb * fh)))
        scale = person.face_height * height / fh
        pw, ph = max(4, round((cut[2] - cut[0]) * scale)), max(4, round((cut[3] - cut[1]) * scale))
        img = photo.crop(cut).resize((pw, ph), Image.LANCZOS)  # antialiased, as a camera's optics are
        sx, sy = pw / (cut[2] - cut[0]), ph / (cut[3] - cut[1])
        face = np.array([(fx1 - cut[0]) * sx, (fy1 - cut[1]) * sy, (fx2 - cut[0]) * sx, (fy2 - cut[1]) * sy],
                        np.float32)
        rgb = np.asarray(img, np.float32) * person.gain
        if person.flip:
            rgb = rgb[:, ::-1]
            face = np.array([pw - face[2], face[1], pw - face[0], face[3]], np.float32)
        # A soft ellipse: the cut-out's rectangle edges would be a shape no real scene has.
        feather = max(1.0, 0.04 * min(pw, ph))
        mask = Image.new("L", (pw, ph), 0)
        ImageDraw.Draw(mask).ellipse((feather, feather, pw - 1 - feather, ph - 1 - feather), fill=255)
        mask = mask.filter(ImageFilter.GaussianBlur(feather / 2))
        alpha = np.asarray(mask, np.float32)[..., None] / 255.0
        return cls(rgb=np.ascontiguousarray(rgb), alpha=alpha, face=face,
                   start=(person.x * width, person.y * height), travel=person.drift * width)

    def paste(self, canvas: np.ndarray, t: float) -> np.ndarray:
        """Blend into `canvas` (float32 RGB, in place) at clip time `t` in [0, 1]; the true face box."""
        cx = self.start[0] + t * self.travel
        x0 = round(cx - (self.face[0] + self.face[2]) / 2)
        y0 = round(self.start[1] - (self.face[1] + self.face[3]) / 2)
        ph, pw = self.alpha.shape[:2]
        H, W = canvas.shape[:2]
        ax, ay = max(0, -x0), max(0, -y0)
        bx, by = min(pw, W - x0), min(ph, H - y0)
        if ax < bx and ay < by:
            region = canvas[y0 + ay : y0 + by, x0 + ax : x0 + bx]
            a = self.alpha[ay:by, ax:bx]
            region += a * (self.rgb[ay:by, ax:bx] - region)
        return self.face + np.array([x0, y0, x0, y0], np.float32)


def crowd(count: int, seed: int = 0, sizes: tuple[float, float] = (0.08, 0.2), drift: float = 0.04,
          photos: Sequence[str] = ("astronaut", "grace_hopper")) -> tuple[Person, ...]:
    """`count` people whose faces are `sizes[0]`..`sizes[1]` of the frame height (evenly spread),
    placed in a 16:9 frame so that no cut-out covers another's face anywhere along their paths, each
    flipped or not, brightened or darkened, photos taken in turn. Deterministic for a given seed."""
    rng = np.random.default_rng(seed)
    heights = np.linspace(sizes[1], sizes[0], count)  # the largest first: they are the hardest to fit
    aspect = 9 / 16  # frame height in frame widths
    ml, mt, mr, mb = _CUT_MARGIN

    def overlap(a, b) -> bool:
        return not (a[0] >= b[2] or a[2] <= b[0] or a[1] >= b[3] or a[3] <= b[1])

    for _ in range(200):
        placed: list[tuple[Person, tuple, tuple]] = []  # person, cut-out extent, face extent (+ margin)
        for i, fh in enumerate(heights):
            photo = photos[i % len(photos)]
            fx1, fy1, fx2, fy2 = FACE_BOXES[photo]
            fw = fh * aspect * (fx2 - fx1) / (fy2 - fy1)  # face width in frame widths
            for _ in range(200):
                d = float(rng.uniform(-drift, drift))
                x = float(rng.uniform(fw * (0.5 + ml) + max(0, -d), 1 - fw * (0.5 + mr) - max(0, d)))
                y = float(rng.uniform(fh * (0.5 + mt), 1 - fh * 0.5 - 0.02))
                cut = (x - fw * (0.5 + ml) + min(0, d), y - fh * (0.5 + mt),
                       x + fw * (0.5 + mr) + max(0, d), y + fh * (0.5 + mb))
                face = (x - fw * 0.75 + min(0, d), y - fh * 0.75, x + fw * 0.75 + max(0, d), y + fh * 0.75)
                if not any(overlap(cut, of) or overlap(face, oc) for _, oc, of in placed):
                    person = Person(photo=photo, face_height=float(fh), x=x, y=y, flip=bool(rng.integers(2)),
                                    gain=float(rng.uniform(0.8, 1.15)), drift=d)
                    placed.append((person, cut, face))
                    break
            else:
                break  # start again with a new layout
        if len(placed) == count:
            return tuple(p for p, _, _ in placed)
    raise ValueError(f"cannot place {count} people with faces of {sizes} of the frame height")


def _noisy(rgb: np.ndarray, spec: ClipSpec, index: int) -> np.ndarray:
    if not spec.noise:
        return rgb
    rng = np.random.default_rng(index)
    grain = rng.normal(0.0, spec.noise, rgb.shape[:2])[..., None].astype(np.float32)
    return np.clip(rgb.astype(np.float32) + grain, 0, 255).astype(np.uint8)


_LOCAL = threading.local()


def _reformatter() -> VideoReformatter:
    """This thread's converter, kept: a new one for every frame (`frame.reformat`) cost 2-3 ms of swscale set-up, ten
    times the conversion."""
    try:
        return _LOCAL.reformatter
    except AttributeError:
        _LOCAL.reformatter = VideoReformatter()
        return _LOCAL.reformatter


def rgb_to_frame(rgb: np.ndarray, pix_fmt: str, matrix: str, full_range: bool) -> av.VideoFrame:
    """RGB → a Y'CbCr frame converted (by swscale) and tagged with the given matrix and range."""
    name, code = _MATRIX[matrix]
    frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24")
    out = _reformatter().reformat(frame, format=pix_fmt, dst_colorspace=name,
                               dst_color_range="JPEG" if full_range else "MPEG")
    out.colorspace = code
    out.color_range = 2 if full_range else 1
    return out


def write_clip(path: str | Path, spec: ClipSpec, container_format: str | None = None,
               container_options: dict[str, str] | None = None) -> list[np.ndarray]:
    """Encode the clip to `path`; returns the true face boxes of every frame."""
    if spec.codec == "libsvtav1":
        os.environ.setdefault("SVT_LOG", "1")  # SVT-AV1 prints its banner straight to stderr otherwise
    names = {spec.background} | ({p.photo for p in spec.people} if spec.people else {spec.face})
    photos = {n: Image.fromarray(load_photo(n)) for n in names if n}
    if spec.face and not spec.people:
        photos[spec.face] = photos[spec.face].crop(PORTRAIT_CROPS[spec.face])
    sprites = [Sprite.make(p, spec.width, spec.height, photos) for p in spec.people]
    truth = []
    with av.open(str(path), "w", format=container_format, options=container_options or {}) as out:
        stream = out.add_stream(spec.codec, rate=spec.fps)
        stream.width, stream.height, stream.pix_fmt = spec.width, spec.height, spec.pix_fmt
        cc = stream.codec_context
        cc.colorspace = _MATRIX[spec.colour_matrix][1]
        cc.color_range = 2 if spec.full_range else 1
        stream.options = dict(CODEC_OPTIONS.get(spec.codec, ()) + spec.options)
        for i in range(spec.frames):
            rgb, boxes = scene(spec, i, photos, sprites)
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
    fd, name = tempfile.mkstemp(suffix=".ts", prefix=f".{Path(path).name}.", dir=Path(path).parent)  # made new
    os.close(fd)
    tmp = Path(name)
    try:
        for spec in specs:
            truth += write_clip(tmp, replace(spec, codec="libx264"), container_format="mpegts")
            data.write(tmp.read_bytes())
    finally:
        tmp.unlink()
    Path(path).write_bytes(data.getvalue())
    return truth


def write_photo_clip(path: str | Path, photo: str, background: str = "rocket", height_share: float = 0.4,
                     width: int = 640, height: int = 360, frames: int = 12, fps: int = 25) -> list[tuple]:
    """A whole photo (an object: `astronaut`, `chelsea`, `coffee`) at `height_share` of the frame
    height moving left to right over a `background` photo, H.264. Returns, per frame, where the photo
    was pasted: (x, y, scale) — a box `b` on the still photo is `b * scale + (x, y, x, y)` in the frame."""
    bg = Image.fromarray(load_photo(background)).resize((width, height), Image.BILINEAR)
    img = Image.fromarray(load_photo(photo))
    scale = height_share * height / img.height
    pw, ph = max(2, round(img.width * scale)), max(2, round(img.height * scale))
    small = img.resize((pw, ph), Image.BILINEAR)
    placed = []
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = dict(CODEC_OPTIONS["libx264"])
        for i in range(frames):
            t = i / max(1, frames - 1)
            x, y = round(0.02 * width + t * max(0, 0.96 * width - pw)), (height - ph) // 2
            canvas = bg.copy()
            canvas.paste(small, (x, y))
            frame = rgb_to_frame(np.asarray(canvas), "yuv420p", "bt601", False)
            frame.pts, frame.time_base = i, Fraction(1, fps)
            out.mux(stream.encode(frame))
            placed.append((x, y, pw / img.width))
        out.mux(stream.encode(None))
    return placed
