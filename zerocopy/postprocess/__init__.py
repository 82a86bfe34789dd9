"""Postprocessing: a model's raw outputs → `Detections`, chosen from the catalogue or the output shapes."""

from __future__ import annotations

from typing import Any

from zerocopy.errors import ModelError
from zerocopy.postprocess.anchor_ssd import KNOWN_LAYOUTS, AnchorSSD
from zerocopy.postprocess.base import Postprocessor
from zerocopy.postprocess.detection_output import DetectionOutput
from zerocopy.postprocess.yolo import Yolo

POSTPROCESSORS = ("anchor-ssd", "detection-output", "yolo")


def guess_postprocess(output_shapes: dict[str, tuple[int, ...]]) -> str:
    """Pick a decoder from the output shapes alone, or explain why none fits."""
    shapes = list(output_shapes.values())
    if len(shapes) == 1 and len(shapes[0]) == 4 and shapes[0][-1] == 7:
        return "detection-output"
    if len(shapes) == 1 and len(shapes[0]) == 3 and 4 < shapes[0][1] < shapes[0][2]:
        return "yolo"
    if len(shapes) == 2 and all(len(s) == 3 for s in shapes) and sorted(s[2] for s in shapes)[0] == 1:
        return "anchor-ssd"
    raise ModelError(
        f"cannot tell how to decode outputs {shapes}; pass --decoder ({', '.join(POSTPROCESSORS)})"
    )


def make_postprocessor(kind: str, input_w: int, input_h: int, output_shapes: dict[str, tuple[int, ...]],
                       options: dict[str, Any] | None, threshold: float) -> Postprocessor:
    names = list(output_shapes)
    options = dict(options or {})
    if kind == "anchor-ssd":
        if "strides" not in options:
            anchors = max(s[1] for s in output_shapes.values())
            layout = KNOWN_LAYOUTS.get((input_w, anchors))
            if layout is None or input_w != input_h:
                raise ModelError(f"no known anchor layout for a {input_w}x{input_h} input with {anchors} "
                                 "anchors; use a catalogue model")
            options.update(layout)
        return AnchorSSD(input_w, input_h, names, threshold, **options)
    if kind == "detection-output":
        return DetectionOutput(input_w, input_h, names, threshold)
    if kind == "yolo":
        return Yolo(input_w, input_h, names, threshold, **options)
    raise ModelError(f"unknown postprocessing {kind!r}; choose from {', '.join(POSTPROCESSORS)}")


__all__ = ["POSTPROCESSORS", "Postprocessor", "guess_postprocess", "make_postprocessor"]
