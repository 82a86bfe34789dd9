"""Footage encoded as a camera encodes it (issue 40): H.264 with a keyframe every 2 s exactly, no B-frames, sensor
noise on every frame; people (real face photos) walk across a still scene at given times. Variants: constant bit rate
(x264's `nal-hrd=cbr`, the encoder's filler padding every packet), and a scene whose brightness jumps as when a
camera's infrared switches on (grey and brighter from then on)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from PIL import Image

from zerocopy.samples import Person, Sprite, load_photo, rgb_to_frame


@dataclass(frozen=True)
class Walk:
    """One person walking across, left to right or back: from `start_s` for `walk_s` seconds."""

    start_s: float
    walk_s: float = 3.0
    face_height: float = 0.25
    leftwards: bool = False


def camera_options(fps: int, cbr_bitrate: int | None = None, preset: str = "veryfast") -> dict[str, str]:
    """x264's options for a camera's stream: a keyframe every 2 s exactly, no B-frames; at a constant bit rate of
    `cbr_bitrate` bits a second (filler included), else at constant quality."""
    options = {"preset": preset, "g": str(2 * fps), "keyint_min": str(2 * fps), "bf": "0", "sc_threshold": "0"}
    if cbr_bitrate is None:
        return {**options, "crf": "23"}
    rate = str(cbr_bitrate)
    return {**options, "b": rate, "minrate": rate, "maxrate": rate, "bufsize": str(cbr_bitrate // 2),
            "x264-params": "nal-hrd=cbr:force-cfr=1"}


def write_camera_clip(path: str | Path, seconds: float, walks: tuple[Walk, ...] = (), fps: int = 15,
                      width: int = 640, height: int = 360, noise: float = 2.5, cbr: bool = False,
                      infrared_at: float | None = None, seed: int = 0) -> None:
    """The clip: the coffee background, `walks` across it, Gaussian noise of std `noise` grey levels on each frame;
    `cbr` at a tenth of a bit per pixel a frame; from `infrared_at` seconds on (if set) the picture grey and 30 %
    brighter."""
    rng = np.random.default_rng(seed)
    photos = {n: Image.fromarray(load_photo(n)) for n in ("astronaut", "grace_hopper", "coffee")}
    background = np.asarray(photos["coffee"].resize((width, height), Image.BILINEAR), np.float32)
    infrared = np.clip(background.mean(axis=2, keepdims=True).repeat(3, 2) * 1.3, 0, 255)
    sprites = [Sprite.make(Person(photo=("astronaut", "grace_hopper")[n % 2], face_height=w.face_height,
                                  x=1.15 if w.leftwards else -0.15, y=0.5, drift=-1.3 if w.leftwards else 1.3,
                                  flip=w.leftwards), width, height, photos) for n, w in enumerate(walks)]
    bitrate = width * height * fps // 10 if cbr else None
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = camera_options(fps, bitrate)
        if bitrate is not None:
            stream.codec_context.bit_rate = bitrate
        for i in range(round(seconds * fps)):
            t = i / fps
            canvas = (infrared if infrared_at is not None and t >= infrared_at else background).copy()
            for walk, sprite in zip(walks, sprites, strict=True):
                if walk.start_s <= t < walk.start_s + walk.walk_s:
                    sprite.paste(canvas, (t - walk.start_s) / walk.walk_s)
            canvas += rng.normal(0.0, noise, (height, width, 1)).astype(np.float32)
            frame = rgb_to_frame(np.clip(canvas + 0.5, 0, 255).astype(np.uint8), "yuv420p", "bt601", False)
            frame.pts, frame.time_base = i, Fraction(1, fps)
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
