"""Scripted footage for tracking: people (real face photos) walk across the frame one after the other,
with an empty scene between them, so each pass is one object that appears, moves and leaves."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from PIL import Image

from zerocopy.samples import Person, Sprite, load_photo, rgb_to_frame


@dataclass(frozen=True)
class Pass:
    """One walk across: the frames where at least half of the face is inside the picture."""

    first: int
    last: int
    face_height: float


def write_passes_clip(path: str | Path, passes: int = 6, walk_s: float = 3.0, gap_s: float = 2.5, fps: int = 15,
                      width: int = 640, height: int = 360, seed: int = 0) -> list[Pass]:
    """`passes` walks of `walk_s` seconds each (left to right or back, faces 18–30 % of the height, photos in
    turn), `gap_s` seconds of the empty background between them; H.264. Returns each pass's frames."""
    rng = np.random.default_rng(seed)
    photos = {n: Image.fromarray(load_photo(n)) for n in ("astronaut", "grace_hopper", "coffee")}
    background = np.asarray(photos["coffee"].resize((width, height), Image.BILINEAR), np.float32)
    walk, gap = round(walk_s * fps), round(gap_s * fps)
    out: list[Pass] = []
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"preset": "ultrafast"}
        index = 0

        def emit(rgb: np.ndarray) -> None:
            nonlocal index
            frame = rgb_to_frame(np.clip(rgb + 0.5, 0, 255).astype(np.uint8), "yuv420p", "bt601", False)
            frame.pts, frame.time_base = index, Fraction(1, fps)
            container.mux(stream.encode(frame))
            index += 1

        for n in range(passes):
            for _ in range(gap):
                emit(background.copy())
            size = float(rng.uniform(0.18, 0.3))
            leftwards = n % 2 == 1
            person = Person(photo=("astronaut", "grace_hopper")[n % 2], face_height=size,
                            x=1.15 if leftwards else -0.15, y=float(rng.uniform(0.4, 0.6)),
                            drift=-1.3 if leftwards else 1.3, flip=leftwards)
            sprite = Sprite.make(person, width, height, photos)
            seen: list[int] = []
            for i in range(walk):
                canvas = background.copy()
                box = sprite.paste(canvas, i / (walk - 1))
                inside = (min(box[2], width) - max(box[0], 0)) / (box[2] - box[0])
                if inside >= 0.5:
                    seen.append(index)
                emit(canvas)
            out.append(Pass(seen[0], seen[-1], size))
        for _ in range(gap):
            emit(background.copy())
        container.mux(stream.encode(None))
    return out


def write_path_clip(path: str | Path, xs: list[float | None], fps: int = 15, width: int = 640, height: int = 360,
                    face_height: float = 0.25, y: float = 0.5, seed: int = 0, noise: float = 0.0) -> list[np.ndarray]:
    """One person whose face centre is at `xs[i]` (a share of the width; None: out of the picture) in frame i,
    over the coffee background, with Gaussian sensor noise of `noise` grey levels; H.264. Returns each frame's
    true face box (empty where there is none)."""
    rng = np.random.default_rng(seed)
    photos = {n: Image.fromarray(load_photo(n)) for n in ("astronaut", "coffee")}
    background = np.asarray(photos["coffee"].resize((width, height), Image.BILINEAR), np.float32)
    sprite = Sprite.make(Person(photo="astronaut", face_height=face_height, x=0.0, y=y, drift=1.0), width, height,
                         photos)
    truth: list[np.ndarray] = []
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"preset": "ultrafast"}
        for index, x in enumerate(xs):
            canvas = background.copy()
            box = np.asarray(sprite.paste(canvas, x), np.float32) if x is not None else np.zeros((0,), np.float32)
            truth.append(box.reshape(-1, 4))
            if noise:
                canvas += rng.normal(0.0, noise, canvas.shape).astype(np.float32)
            frame = rgb_to_frame(np.clip(canvas + 0.5, 0, 255).astype(np.uint8), "yuv420p", "bt601", False)
            frame.pts, frame.time_base = index, Fraction(1, fps)
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    return truth
