"""Postprocessing: a model's raw outputs → `Detections`, chosen from the catalogue or the output shapes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zerocopy.detections import Detections
from zerocopy.errors import ConfigError, ModelError
from zerocopy.postprocess.anchor_ssd import KNOWN_LAYOUTS, AnchorSSD
from zerocopy.postprocess.base import Postprocessor
from zerocopy.postprocess.detection_output import DetectionOutput
from zerocopy.postprocess.ssd_multiclass import SSDMulticlass
from zerocopy.postprocess.text_db import TextDB
from zerocopy.postprocess.yolo import Yolo

POSTPROCESSORS = ("anchor-ssd", "detection-output", "yolo", "ssd-multiclass", "text-db")


UNNAMED = "???"  # a label map's name for a class that is none (the background of `objects`' SSD)


def label_indices(classes: Sequence[str], labels: Sequence[str], setting: str = "classes") -> tuple[int, ...]:
    """The indices of `classes` (names, matched case-insensitively) among a model's `labels`; a name
    the model does not have is a `ConfigError` (naming `setting`) listing the labels it has."""
    if not labels:
        raise ConfigError(setting, f"{setting} needs a model with labels (a catalogue model, or --labels FILE)")
    folded = [name.casefold() for name in labels]
    out = []
    for name in classes:
        if name.casefold() not in folded:
            named = ", ".join(n for n in labels if n != UNNAMED)
            raise ConfigError(setting, f"the model has no class {name!r}; its classes: {named}")
        out.append(folded.index(name.casefold()))
    return tuple(out)


@dataclass(frozen=True)
class LabelChoice:
    """Which labels a run reports, hides and detects, as label indices: the one rule for every path and output.

    `shown` are reported (the results, JSON Lines, events, the report: the `classes`; None: every label).
    `hidden` (`anonymise`) are hidden in every picture the run keeps, and `needed` are cropped by a region model
    (person-mask's Person boxes): both are detected whatever `shown` says, and reported only if `shown` has them
    too. A privacy setting never depends on what is reported."""

    shown: tuple[int, ...] | None = None
    hidden: tuple[int, ...] = ()
    needed: tuple[int, ...] = ()

    def detected(self, shown: tuple[int, ...] | None = None) -> tuple[int, ...] | None:
        """The labels postprocessing keeps for `shown` (default: the run's; an input's own `classes` narrow it):
        those and the hidden and needed ones; None (every label) when every label is shown."""
        shown = self.shown if shown is None else shown
        return None if shown is None else tuple(sorted({*shown, *self.hidden, *self.needed}))


class LabelFilter(Postprocessor):
    """Another postprocessor's detections, only those of some labels (`classes`)."""

    def __init__(self, inner: Postprocessor, only: Sequence[int]):
        super().__init__(inner.input_w, inner.input_h, inner.output_names, inner.threshold)
        self.inner, self.only = inner, np.asarray(sorted(set(only)), np.int32)
        self.kind, self.nms_iou = inner.kind, inner.nms_iou

    def split(self, outputs: dict[str, np.ndarray], n: int) -> list[dict[str, np.ndarray]]:
        return self.inner.split(outputs, n)

    def __call__(self, outputs: dict[str, np.ndarray], geometry) -> Detections:
        d = self.inner(outputs, geometry)
        mask = np.isin(d.labels, self.only)
        return d if mask.all() else Detections(d.xyxy[mask], d.scores[mask], d.labels[mask])


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
                       options: dict[str, Any] | None, threshold: float,
                       only_labels: Sequence[int] | None = None) -> Postprocessor:
    """The decoder `kind` for these outputs; with `only_labels`, only detections of those labels."""
    made = _make(kind, input_w, input_h, output_shapes, options, threshold)
    return made if only_labels is None else LabelFilter(made, only_labels)


def _make(kind: str, input_w: int, input_h: int, output_shapes: dict[str, tuple[int, ...]],
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
    if kind == "ssd-multiclass":
        return SSDMulticlass(input_w, input_h, names, threshold, **options)
    if kind == "text-db":
        return TextDB(input_w, input_h, names, threshold, **options)
    raise ModelError(f"unknown postprocessing {kind!r}; choose from {', '.join(POSTPROCESSORS)}")


__all__ = ["POSTPROCESSORS", "LabelChoice", "Postprocessor", "guess_postprocess", "label_indices",
           "make_postprocessor"]
