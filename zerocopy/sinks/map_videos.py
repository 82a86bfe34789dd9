"""What `zerocopy process` writes from an image-to-image model's maps (`PreparedFrame.output`): the video
with the map blended over it, the map alone as a grayscale video, or one `.npy` per frame.

The videos go through `VideoSink` (its per-input names, fragmented MP4, audio and temporaries); the
`.npy` files are each written under a temporary name and renamed into place, into a folder that was new
or empty, so no run overwrites a file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path

import av
import numpy as np

from zerocopy.detections import Detections
from zerocopy.errors import ZeroCopyError
from zerocopy.frames import PreparedFrame
from zerocopy.sinks import NullSink
from zerocopy.sinks.draw import anonymise_map
from zerocopy.sinks.files import Staged, output_error
from zerocopy.sinks.video import VideoSink

TINT = np.array([255.0, 40.0, 40.0], np.float32)  # the blend's colour where the map is 1
OPACITY = 0.6  # how much of it covers the picture there


def blend(rgb: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The picture (H×W×3 uint8) tinted in proportion to the map (H×W, 0–1)."""
    alpha = (values.astype(np.float32) * OPACITY)[..., None]
    return (rgb.astype(np.float32) * (1.0 - alpha) + TINT * alpha + 0.5).astype(np.uint8)


def grayscale(values: np.ndarray) -> np.ndarray:
    """A map (0–1) as 8-bit gray: 0 black, 1 white."""
    return (np.clip(values, 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)


class MapVideoSink(VideoSink):
    """`blend`: the decoded frames with the map tinted over them and the boxes drawn (a box model's);
    `mask`: the map alone, white where it is 1; `anonymise`: the frames with what the map covers (a person
    mask's shapes) pixelated, blurred or filled (`style`, `sinks/draw.py`). Needs `PreparedFrame.picture`
    for `blend` and `anonymise` (the run keeps the pictures: `keep_images`). The rest is `VideoSink`'s: the
    per-input names, the temporaries, closing with the run's other outputs."""

    def __init__(self, target: str, names: Sequence[str], inputs: int = 1, mode: str = "blend",
                 style: str = "pixelate", option: str = "--output"):
        if mode not in ("blend", "mask", "anonymise"):
            raise ValueError(f"mode must be blend, mask or anonymise, not {mode!r}")
        super().__init__(target, names, inputs, option=option)
        self.mode, self.style = mode, style

    def write(self, frame: PreparedFrame, detections: Detections, input: int = 0) -> None:
        if frame.output is None:
            return
        if self.mode == "mask":
            picture = av.VideoFrame.from_ndarray(grayscale(frame.output), format="gray")
            detections = Detections.empty()
        elif frame.picture is not None and self.mode == "anonymise":
            picture = av.VideoFrame.from_image(anonymise_map(frame.picture.to_image(), frame.output, self.style))
        elif frame.picture is not None:
            picture = av.VideoFrame.from_ndarray(blend(frame.picture.to_ndarray(format="rgb24"), frame.output),
                                                 format="rgb24")
        else:
            return
        super().write(dataclasses.replace(frame, picture=picture), detections, input)


def check_npy_folder(folder: str) -> None:
    """Refuse, before any work, a `--npy` folder that cannot be made or already holds files."""
    path = Path(folder)
    if path.exists() and not path.is_dir():
        raise ZeroCopyError(f"cannot write --npy {folder}: it is a file, not a folder")
    if path.is_dir() and any(path.iterdir()):
        raise ZeroCopyError(f"cannot write --npy {folder}: it holds files already (name a new or empty folder: "
                            "a run overwrites nothing)")
    parent = path.parent
    if not path.exists() and not parent.is_dir():
        raise ZeroCopyError(f"cannot write --npy {folder}: no such directory {parent}")
    if not os.access(path if path.exists() else parent, os.W_OK):
        raise ZeroCopyError(f"cannot write --npy {folder}: permission denied")


def npy_name(index: int, input: int, inputs: int) -> str:
    """`000012.npy` for frame 12; with several inputs, `2-000012.npy` for the second input's."""
    return f"{index:06d}.npy" if inputs == 1 else f"{input + 1}-{index:06d}.npy"


class NpySink(NullSink):
    """One float32 height×width `.npy` per frame (`np.load` reads it) in `folder`, made if it is missing
    and removed again if the run wrote nothing into it."""

    def __init__(self, folder: str, inputs: int = 1):
        self.folder, self.inputs = Path(folder), inputs
        self.made = not self.folder.exists()
        try:
            self.folder.mkdir(exist_ok=True)
        except OSError as e:
            raise output_error("--npy", folder, e) from None
        self.written = 0

    def begin(self, source: str, rate: float, input: int = 0) -> None:
        pass

    def write(self, frame: PreparedFrame, detections: Detections, input: int = 0) -> None:
        if frame.output is None:
            return
        staged = Staged(self.folder / npy_name(frame.index, input, self.inputs))
        try:
            with staged.open_binary() as f:  # made new: never written through a planted link
                np.save(f, frame.output)
            staged.finish(keep=True)
        except BaseException as e:
            staged.discard()
            if isinstance(e, OSError):  # a full disk, an I/O error: the run stops
                raise output_error("--npy", self.folder, e) from None
            raise
        self.written += 1

    def end(self, input: int = 0) -> None:
        pass

    def close(self) -> None:
        if self.made and not self.written:
            with contextlib.suppress(OSError):  # something else was put there meanwhile: leave it
                self.folder.rmdir()
