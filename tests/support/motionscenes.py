"""Scenes for the motion tests, made straight at the motion picture's size (`zerocopy.motion.detector.luma_size`)
from real photos: a still background with per-frame sensor noise, a person (a real face photo cut out) walking
across it, a clock overlay that changes every second (drawn large: a small one is below a cell's share), a
camera's IR switch (the picture turns dim and grey)."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from zerocopy.motion.detector import luma_size
from zerocopy.samples import Person, Sprite, load_photo

SOURCE = (1920, 1080)  # the frame size the scenes stand for (masks are placed in its pixels)


def gray(rgb: np.ndarray) -> np.ndarray:
    return rgb[..., 0] * 0.299 + rgb[..., 1] * 0.587 + rgb[..., 2] * 0.114


class Scene:
    """Frame `i` of a fixed camera at `fps`: the background photo, sensor noise of `noise` (std, 0–255), a person
    walking across between `walk` seconds (start, end) if given, a clock at the top left if `clock`, and from
    `ir_at` seconds on the IR picture (dim, grey)."""

    def __init__(self, fps: float = 30.0, noise: float = 3.0, walk: tuple[float, float] | None = None,
                 clock: bool = False, ir_at: float | None = None, background: str = "coffee", seed: int = 0):
        self.w, self.h = luma_size(*SOURCE)
        self.fps, self.noise, self.walk, self.clock, self.ir_at = fps, noise, walk, clock, ir_at
        photos = {n: Image.fromarray(load_photo(n)) for n in (background, "astronaut")}
        self.rgb = np.asarray(photos[background].resize((self.w, self.h), Image.BILINEAR), np.float32)
        self.still = gray(self.rgb)  # the background's luma, for every frame no one walks in
        self.sprite = Sprite.make(Person(photo="astronaut", face_height=0.3, x=-0.15, y=0.5, drift=1.3),
                                  self.w, self.h, photos)
        self.rng = np.random.default_rng(seed)
        self.font = ImageFont.load_default(size=16)  # about 110 pixels high at 1080p: a big camera timestamp

    def picture(self, i: int) -> tuple[np.ndarray, np.ndarray | None]:
        """Frame `i`'s luma (uint8) and the walker's face box in frame fractions (None when no one walks)."""
        t = i / self.fps
        box, y = None, self.still
        if self.walk is not None and self.walk[0] <= t <= self.walk[1]:
            canvas = self.rgb.copy()
            face = self.sprite.paste(canvas, (t - self.walk[0]) / (self.walk[1] - self.walk[0]))
            box = face / np.array([self.w, self.h, self.w, self.h], np.float32)
            y = gray(canvas)
        if self.ir_at is not None and t >= self.ir_at:
            y = 0.35 * y + 20
        if self.clock:
            img = Image.fromarray(np.clip(y, 0, 255).astype(np.uint8))
            ImageDraw.Draw(img).text((2, 0), f"12:00:{int(t) % 60:02d}", fill=255, font=self.font)
            y = np.asarray(img, np.float32)
        y = y + self.rng.normal(0.0, self.noise, y.shape)
        return np.clip(y + 0.5, 0, 255).astype(np.uint8), box
