"""Small types that travel with every frame: where the picture sits in the model input, and timings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

ResizeMode = Literal["letterbox", "stretch"]


def _even(v: float) -> int:
    return max(2, int(round(v / 2.0)) * 2)


@dataclass(frozen=True, kw_only=True)
class Geometry:
    """Where a source frame lands inside the model input, and the way back.

    Letterboxing keeps the aspect ratio and centres the picture on black bars (what MediaPipe's
    detectors were trained with); stretching fills the input (what Open Model Zoo demos do).
    Every offset and size is even so that the NV12 chroma plane stays aligned.
    """

    src_w: int
    src_h: int
    dst_w: int
    dst_h: int
    x0: int
    y0: int
    content_w: int
    content_h: int

    @classmethod
    def fit(cls, src_w: int, src_h: int, dst_w: int, dst_h: int, mode: ResizeMode) -> Geometry:
        if mode == "stretch":
            return cls(src_w=src_w, src_h=src_h, dst_w=dst_w, dst_h=dst_h, x0=0, y0=0, content_w=dst_w, content_h=dst_h)
        scale = min(dst_w / src_w, dst_h / src_h)
        cw = min(dst_w, _even(src_w * scale))
        ch = min(dst_h, _even(src_h * scale))
        x0 = ((dst_w - cw) // 2) & ~1
        y0 = ((dst_h - ch) // 2) & ~1
        return cls(src_w=src_w, src_h=src_h, dst_w=dst_w, dst_h=dst_h, x0=x0, y0=y0, content_w=cw, content_h=ch)

    @property
    def is_full(self) -> bool:
        return self.x0 == 0 and self.y0 == 0 and self.content_w == self.dst_w and self.content_h == self.dst_h

    def to_source(self, xyxy_norm: np.ndarray) -> np.ndarray:
        """Boxes normalised to the model input ([0, 1]) → source-frame pixels, clipped to the frame."""
        b = np.asarray(xyxy_norm, np.float32).reshape(-1, 4).copy()
        sx = self.src_w / self.content_w
        sy = self.src_h / self.content_h
        b[:, 0::2] = (b[:, 0::2] * self.dst_w - self.x0) * sx
        b[:, 1::2] = (b[:, 1::2] * self.dst_h - self.y0) * sy
        b[:, 0::2] = np.clip(b[:, 0::2], 0, self.src_w)
        b[:, 1::2] = np.clip(b[:, 1::2], 0, self.src_h)
        return b


@dataclass(kw_only=True)
class PreparedFrame:
    """A decoded frame made ready for inference: model inputs plus what is needed to report on it.

    `inputs` maps model input names to whatever the hand-off produced (host arrays or remote
    tensors). `keepalive` holds objects that must outlive the inference request (e.g. the VA
    surface's frame). `picture` is the decoded full-size frame, kept only when a sink draws on it.
    `source` is the decoded frame in the path's own memory (a software frame, the baseline's BGR
    picture, a VA surface's frame), kept only when region models crop from it (`--classify`).
    `arrived` is the `time.perf_counter()` at which the frame came out of the decoder (after realtime
    pacing), where its arrival→result latency starts; None if the decoder did not say. `output` is an
    image-to-image model's result over the frame (a float32 height×width map in [0, 1]), set with its
    detections for the sinks (`zerocopy process`); None otherwise. `inferred` is False for a frame that
    `--detect-fps` leaves out: decoded, never scaled nor inferred (`inputs` empty; `geometry` the last
    inferred frame's). `skipped_by` says why a frame was not inferred: "detect_fps" (not due) or "motion"
    (due, but the `--motion` gate found nothing happening); None for an inferred frame. `motion` is what the
    motion detector saw on the frame (a `motion.Motion`, on every frame, inferred or not), None without `--motion`.
    `hidden` is what `anonymise` hid on the frame (a `sinks.draw.Hidden`; None: nothing): `picture` is hidden
    already, and any picture made of the frame later (a snapshot from `source`) hides the same.
    """

    index: int
    pts: float | None
    width: int
    height: int
    geometry: Geometry
    inputs: dict[str, Any]
    decode_ms: float = 0.0
    preprocess_ms: float = 0.0
    picture: Any = None
    keepalive: Any = None
    arrived: float | None = None
    source: Any = None
    output: np.ndarray | None = None
    inferred: bool = True
    motion: Any = None
    skipped_by: str | None = None
    hidden: Any = None
