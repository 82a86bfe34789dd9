"""What the annotated picture shows besides the boxes: an input's zones (outlined, named), its lines (with an
arrow on the side an `in` crossing goes to, and the word "in"), and, with `draw_motion`, the boxes where motion
was seen (`PreparedFrame.motion`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from zerocopy.analytics.geometry import place
from zerocopy.analytics.specs import LineSpec, ZoneSpec

ZONE_COLOUR = (255, 160, 0)
LINE_COLOUR = (0, 220, 255)
MOTION_COLOUR = (255, 0, 200)


@dataclass(frozen=True, kw_only=True)
class Overlay:
    """One input's zones and lines (their specs, as `RunConfig.zones`/`lines` hold them), and whether motion is
    drawn."""

    zones: Sequence[ZoneSpec] = ()
    lines: Sequence[LineSpec] = ()
    motion: bool = False

    @classmethod
    def of(cls, config: Any, settings: Any = None) -> Overlay | None:
        """The overlay of a run's `config` (an input's own `settings` first, where it has them); None when
        there is nothing to draw."""
        zones = getattr(settings, "zones", None)
        lines = getattr(settings, "lines", None)
        made = cls(zones=tuple(config.zones if zones is None else zones),
                   lines=tuple(config.lines if lines is None else lines), motion=bool(config.draw_motion))
        return made if made.zones or made.lines or made.motion else None

    def draw(self, img: Image.Image, motion: Any = None) -> None:
        """On `img` (changed in place): the zones, the lines, and motion's boxes (`motion.boxes`, fractions)."""
        draw = ImageDraw.Draw(img)
        width = max(2, img.width // 400)
        for spec in self.zones:
            xy = [tuple(p) for p in place(spec.points, img.width, img.height).xy]
            draw.polygon(xy, outline=ZONE_COLOUR, width=width)
            draw.text((xy[0][0] + 4, xy[0][1] + 2), spec.name, fill=ZONE_COLOUR)
        for spec in self.lines:
            a, b = place(spec.points, img.width, img.height).xy
            draw.line([tuple(a), tuple(b)], fill=LINE_COLOUR, width=width)
            mid, d = (a + b) / 2, b - a
            left = np.array([d[1], -d[0]]) / max(float(np.hypot(*d)), 1e-6)  # the left-hand side, image y down
            tip = mid + left * max(12.0, img.height / 30)
            draw.line([tuple(mid), tuple(tip)], fill=LINE_COLOUR, width=width)
            draw.text((tip[0] + 3, tip[1] - 6), f"{spec.name} in", fill=LINE_COLOUR)
        if self.motion and motion is not None:
            for x1, y1, x2, y2 in np.asarray(getattr(motion, "boxes", ()), np.float64).reshape(-1, 4):
                draw.rectangle([x1 * img.width, y1 * img.height, x2 * img.width, y2 * img.height],
                               outline=MOTION_COLOUR, width=1)
