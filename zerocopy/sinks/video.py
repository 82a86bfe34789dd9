"""Annotated H.264 MP4: the decoded frames with boxes, labels and scores drawn on them."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import av
from PIL import ImageDraw, ImageFont

from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame

_COLOURS = [(255, 64, 64), (64, 200, 64), (64, 128, 255), (255, 200, 0), (200, 64, 255)]


def output_name(target: str, index: int, count: int) -> str:
    """With several inputs, `out.mp4` becomes `out-1.mp4`, `out-2.mp4`, …"""
    if count == 1:
        return target
    p = Path(target)
    return str(p.with_name(f"{p.stem}-{index + 1}{p.suffix or '.mp4'}"))


class VideoSink:
    """Re-encodes each input to its own MP4. Frames whose size changes are scaled to the first size."""

    def __init__(self, target: str, names: Sequence[str], inputs: int = 1):
        self.target, self.names, self.inputs = target, list(names), inputs
        self._count = 0
        self._out: av.container.OutputContainer | None = None
        self._stream = None
        self._n = 0

    def begin(self, source: str, rate: float) -> None:
        self._path = output_name(self.target, self._count, self.inputs)
        self._count += 1
        self._rate = Fraction(rate).limit_denominator(1001) if rate > 0 else Fraction(25)
        self._out, self._stream, self._n = None, None, 0

    def _open(self, width: int, height: int) -> None:
        self._out = av.open(self._path, "w", options={"movflags": "faststart"})
        s = self._out.add_stream("libx264", rate=self._rate)
        s.width, s.height, s.pix_fmt = width - width % 2, height - height % 2, "yuv420p"
        s.options = {"preset": "veryfast", "crf": "23"}
        self._stream = s
        try:  # a readable size on any frame; Pillow without FreeType has only the small bitmap font
            self._font = ImageFont.load_default(size=max(12, height // 36))
        except (TypeError, OSError):
            self._font = ImageFont.load_default()

    def write(self, frame: PreparedFrame, detections: Detections) -> None:
        if frame.picture is None:
            return
        if self._out is None:
            self._open(frame.width, frame.height)
        img = frame.picture.to_image()
        draw = ImageDraw.Draw(img)
        for box, score, label in zip(detections.xyxy, detections.scores, detections.labels, strict=True):
            colour = _COLOURS[int(label) % len(_COLOURS)]
            width = max(2, img.width // 400)
            draw.rectangle([float(v) for v in box], outline=colour, width=width)
            name = self.names[label] if 0 <= label < len(self.names) else str(int(label))
            text = f"{name} {score:.2f}"
            tb = draw.textbbox((0, 0), text, font=self._font)
            x, y = float(box[0]), max(0.0, float(box[1]) - (tb[3] - tb[1]) - 4)
            draw.rectangle(draw.textbbox((x, y), text, font=self._font), fill=colour)
            draw.text((x, y), text, fill=(0, 0, 0), font=self._font)
        s = self._stream
        out = av.VideoFrame.from_image(img).reformat(width=s.width, height=s.height, format="yuv420p")
        out.pts, out.time_base = self._n, 1 / self._rate
        self._n += 1
        self._out.mux(s.encode(out))

    def end(self) -> None:
        if self._out is not None:
            self._out.mux(self._stream.encode(None))
            self._out.close()
            self._out = None

    def close(self) -> None:
        self.end()
