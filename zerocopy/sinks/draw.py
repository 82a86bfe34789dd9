"""What the annotated video shows on a frame: boxes with their label and score, what second models said
of each box (attributes in the label, keypoints as dots), and regions made unrecognisable
(`anonymise`: privacy-safe recordings).

`anonymise` (boxes) and `anonymise_map` (a mask's shapes) work on any RGB picture, for API users who write
their own video; `anonymised_picture` is what a run with `anonymise` does to each decoded frame it keeps, before
any output sees it (pipeline/core.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import av
import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from zerocopy.config import STYLES
from zerocopy.detections import Detections

COLOURS = [(255, 64, 64), (64, 200, 64), (64, 128, 255), (255, 200, 0), (200, 64, 255)]
ANONYMISE_GROW = 1.2  # the box grown about its centre first: a face box leaves hair, ears and chin out
PIXELS_ACROSS = 5  # pixelate: the region becomes about this many blocks across (unrecognisable)


def _grown(box: np.ndarray, width: int, height: int) -> tuple[int, int, int, int]:
    x1, y1, x2, y2 = (float(v) for v in box)
    cx, cy, w, h = (x1 + x2) / 2, (y1 + y2) / 2, (x2 - x1) * ANONYMISE_GROW, (y2 - y1) * ANONYMISE_GROW
    return (max(0, int(cx - w / 2)), max(0, int(cy - h / 2)), min(width, int(np.ceil(cx + w / 2))),
            min(height, int(np.ceil(cy + h / 2))))


def anonymise(img: Image.Image, detections: Detections, labels: Sequence[int] | None = None,
              style: str = "pixelate") -> Image.Image:
    """`img` (changed in place, and returned) with the boxes of `labels` (None: every box) pixelated
    (`PIXELS_ACROSS` blocks across), blurred (a Gaussian of a quarter of the box) or filled black."""
    if style not in STYLES:
        raise ValueError(f"anonymise style must be one of {', '.join(STYLES)}, not {style!r}")
    for box, label in zip(detections.xyxy, detections.labels, strict=True):
        if labels is not None and int(label) not in labels:
            continue
        x1, y1, x2, y2 = _grown(box, img.width, img.height)
        if x2 - x1 < 2 or y2 - y1 < 2:
            continue
        region = img.crop((x1, y1, x2, y2))
        if style == "pixelate":
            block = max(2, max(x2 - x1, y2 - y1) // PIXELS_ACROSS)
            small = region.resize((max(1, (x2 - x1) // block), max(1, (y2 - y1) // block)), Image.BOX)
            region = small.resize(region.size, Image.NEAREST)
        elif style == "blur":
            region = region.filter(ImageFilter.GaussianBlur(max(2, max(x2 - x1, y2 - y1) / 4)))
        else:
            region = Image.new(img.mode, region.size)
        img.paste(region, (x1, y1))
    return img


@dataclass(frozen=True)
class Hidden:
    """What `anonymise` hides on one frame: its `boxes` and the `style`; every picture made of the frame hides the
    same (`PreparedFrame.hidden`)."""

    boxes: Detections
    style: str

    def picture(self, picture: av.VideoFrame) -> av.VideoFrame:
        return anonymised_picture(picture, self.boxes, self.style)

    def image(self, img: Image.Image) -> Image.Image:
        """`img` (an RGB picture of the whole frame) hidden, in place."""
        return anonymise(img, self.boxes, None, self.style)


def anonymised_picture(picture: av.VideoFrame, detections: Detections, style: str = "pixelate") -> av.VideoFrame:
    """A decoded frame (`av.VideoFrame`) with every box of `detections` hidden (`anonymise`), as a new RGB frame
    with the same timestamp; the frame itself when there is no box."""
    if not len(detections):
        return picture
    hidden = av.VideoFrame.from_image(anonymise(picture.to_image(), detections, None, style))
    hidden.pts = picture.pts
    if picture.time_base is not None:  # (a frame made from pixels has none)
        hidden.time_base = picture.time_base
    return hidden


MAP_COVERS = 0.3  # anonymise_map hides pixels from this map value up (a mask's soft edge included)


def anonymise_map(img: Image.Image, values: np.ndarray, style: str = "pixelate") -> Image.Image:
    """`img` with the pixels where a map (H×W, 0–1: a person mask) reaches `MAP_COVERS` replaced by the
    picture pixelated (blocks of a 30th of the height), blurred or black: the shapes, not their boxes."""
    if style not in STYLES:
        raise ValueError(f"anonymise style must be one of {', '.join(STYLES)}, not {style!r}")
    covered = np.asarray(values) >= MAP_COVERS
    if not covered.any():
        return img
    block = max(4, img.height // 30)
    if style == "pixelate":
        small = img.resize((max(1, img.width // block), max(1, img.height // block)), Image.BOX)
        hidden = small.resize(img.size, Image.NEAREST)
    elif style == "blur":
        hidden = img.filter(ImageFilter.GaussianBlur(block))
    else:
        hidden = Image.new(img.mode, img.size)
    mask = Image.fromarray(covered.astype(np.uint8) * 255).filter(ImageFilter.MaxFilter(5))  # a little wider
    img.paste(hidden, (0, 0), mask)
    return img


def label_text(detections: Detections, i: int, names: Sequence[str]) -> str:
    """"face 0.93" ("#7 face 0.93" with tracking), then what second models said: "face 0.93 · Left 0.98"."""
    label = int(detections.labels[i])
    name = names[label] if 0 <= label < len(names) else str(label)
    tracked = detections.tracker_id is not None and detections.tracker_id[i] >= 0
    parts = [f"#{int(detections.tracker_id[i])} {name} {detections.scores[i]:.2f}" if tracked  # type: ignore[index]
             else f"{name} {detections.scores[i]:.2f}"]
    if detections.attributes:
        parts += [f"{a.name} {a.score:.2f}" for a in detections.attributes[i]]
    return " · ".join(parts)


def draw_detections(img: Image.Image, detections: Detections, names: Sequence[str], font) -> None:
    draw = ImageDraw.Draw(img)
    width = max(2, img.width // 400)
    for i, box in enumerate(detections.xyxy):
        colour = COLOURS[int(detections.labels[i]) % len(COLOURS)]
        draw.rectangle([float(v) for v in box], outline=colour, width=width)
        if detections.keypoints and detections.keypoints[i] is not None:
            r = max(1, width // 2)
            for x, y in detections.keypoints[i]:
                draw.ellipse([x - r, y - r, x + r, y + r], fill=colour)
        text = label_text(detections, i, names)
        tb = draw.textbbox((0, 0), text, font=font)
        x, y = float(box[0]), max(0.0, float(box[1]) - (tb[3] - tb[1]) - 4)
        draw.rectangle(draw.textbbox((x, y), text, font=font), fill=colour)
        draw.text((x, y), text, fill=(0, 0, 0), font=font)
