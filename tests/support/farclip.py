"""A garden seen from further away (issue 39): a 1080p clip where a person (the whole `astronaut` photo) at 13 % of
the frame height and a cat (`chelsea`) at 9 % walk in from either side across an object-free background, with sensor
noise and a keyframe every 2 s; the first seconds are the empty scene, as a camera that has been running shows it."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from PIL import Image

from zerocopy.samples import CODEC_OPTIONS, load_photo, rgb_to_frame


@dataclass(frozen=True)
class Walker:
    """One photo walking across: its height as a share of the frame's, its row (the top, a share of the height),
    when it enters (seconds) and its speed (a share of the frame width a second; negative: right to left)."""

    photo: str
    label: str
    share: float
    top: float
    enters_s: float
    speed: float


WALKERS = (Walker("astronaut", "person", 0.13, 0.42, 2.0, 0.09), Walker("chelsea", "cat", 0.09, 0.7, 2.5, -0.06))


def write_far_clip(path: str | Path, seconds: float = 14.0, fps: int = 15, width: int = 1920, height: int = 1080,
                   background: str = "grass", noise: float = 2.0, walkers: tuple[Walker, ...] = WALKERS,
                   seed: int = 0) -> dict[str, list[tuple[int, int, float] | None]]:
    """The clip, H.264 with a keyframe every 2 s. Returns, per walker's label and per frame, where its photo was
    pasted, (x, y, scale) — a box `b` on the still photo is `b * scale + (x, y, x, y)` in the frame — when the whole
    photo is in the picture, else None."""
    rng = np.random.default_rng(seed)
    bg = np.asarray(Image.fromarray(load_photo(background)).resize((width, height), Image.BILINEAR), np.float32)
    smalls = []
    for w in walkers:
        img = Image.fromarray(load_photo(w.photo))
        scale = w.share * height / img.height
        smalls.append((np.asarray(img.resize((max(2, round(img.width * scale)), max(2, round(img.height * scale))),
                                             Image.LANCZOS), np.float32), scale))
    placed: dict[str, list[tuple[int, int, float] | None]] = {w.label: [] for w in walkers}

    def picture(t: float) -> np.ndarray:
        """The scene at `t` seconds, each walker's place noted, with the sensor's noise."""
        canvas = bg + rng.normal(0.0, noise, (height, width, 1)).astype(np.float32) if noise else bg.copy()
        for w, (small, scale) in zip(walkers, smalls, strict=True):
            ph, pw = small.shape[:2]
            walked = (t - w.enters_s) * abs(w.speed) * width
            x, y = round(-pw + walked) if w.speed > 0 else round(width - walked), round(w.top * height)
            a0, a1 = max(0, -x), min(pw, width - x)
            if t >= w.enters_s and a0 < a1:
                canvas[y:y + ph, x + a0:x + a1] = small[:, a0:a1]
            placed[w.label].append((x, y, scale) if t >= w.enters_s and x >= 0 and x + pw <= width else None)
        return np.clip(canvas + 0.5, 0, 255).astype(np.uint8)

    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {**dict(CODEC_OPTIONS["libx264"]), "g": str(2 * fps), "keyint_min": str(2 * fps)}
        for i in range(round(seconds * fps)):
            frame = rgb_to_frame(picture(i / fps), "yuv420p", "bt601", False)
            frame.pts, frame.time_base = i, Fraction(1, fps)
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    return placed
