"""The baseline the classic OpenVINO demo uses: OpenCV decodes to full-size BGR, then `cv2.resize`.

`cv2.VideoCapture.read()` is `grab()` (decode) then `retrieve()` (the full-size YUV→BGR conversion).
They are called apart so that the conversion is timed as the baseline's preprocessing, as it is.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from zerocopy.decode.base import GUESSED_RATE, Decoded
from zerocopy.decode.damage import DamageReport
from zerocopy.errors import InputError, PathUnavailable
from zerocopy.refusals import Code, Reason


def import_cv2():
    try:
        import cv2
    except ImportError:
        raise PathUnavailable(
            {"baseline": Reason(Code.NO_OPENCV, "OpenCV is not installed (pip install 'zerocopy[baseline]')")}
        ) from None
    return cv2


class GrabbedFrame:
    """A frame OpenCV has decoded but not converted; `bgr()` converts it at full size. Valid until
    the next frame is grabbed."""

    __slots__ = ("_cap",)

    def __init__(self, cap):
        self._cap = cap

    def bgr(self) -> np.ndarray:
        ok, bgr = self._cap.retrieve()
        if not ok:
            raise InputError("OpenCV could not convert a decoded frame to BGR")
        return bgr


class OpenCVDecoder:
    """Iterates `(GrabbedFrame, decode_ms, pts_seconds)` with `cv2.VideoCapture`, each a `Decoded`.

    Files only, read on the consumer's thread as fast as they decode (`Paced` holds them to their
    timestamps): not live, not realtime, nothing decoded ahead."""

    live = False
    realtime = False
    frames_ready = 0

    def __init__(self, path: str | Path):
        self.cv2 = cv2 = import_cv2()
        p = Path(path)
        if not p.exists():
            raise InputError(f"{path}: no such file")
        if p.is_file() and p.stat().st_size == 0:
            raise InputError(f"{path}: empty file")
        self.cap = cv2.VideoCapture(str(path), cv2.CAP_FFMPEG)
        if not self.cap.isOpened():
            raise InputError(f"{path}: OpenCV cannot open it as a video")
        self.damage = DamageReport()
        n = int(self.cap.get(cv2.CAP_PROP_FRAME_COUNT))
        self.expected_frames = n if n > 0 else None
        self.rate = float(self.cap.get(cv2.CAP_PROP_FPS)) or GUESSED_RATE
        self._stopping = threading.Event()

    def frames(self) -> Iterator[Decoded]:
        frame = GrabbedFrame(self.cap)
        while not self._stopping.is_set():
            t0 = time.perf_counter()
            ok = self.cap.grab()
            ms = (time.perf_counter() - t0) * 1e3
            if not ok:
                return
            yield Decoded(frame, ms, self.cap.get(self.cv2.CAP_PROP_POS_MSEC) / 1e3, None)

    def interrupt(self) -> None:
        """Stop reading, from any thread: the iteration ends before the next frame."""
        self._stopping.set()

    def close(self) -> None:
        self.cap.release()
