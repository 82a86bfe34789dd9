"""`Processor`: an image-to-image model run over videos the way `Detector` runs a detector — the same
paths and fallback, runs, stop, report and parallel inputs — with each result's `output` the model's
map over the frame.

    import zerocopy

    with zerocopy.Processor(model="person-mask") as proc:
        for r in proc.run("clip.mp4"):
            print(r.index, (r.output > 0.5).mean())

A model of the whole frame (`text-map`, or a file with one single-channel map output) is the run's
model. A model of boxes (`person-mask`) runs as a region model on the boxes a detector finds (`detector=`,
by default the one its catalogue entry names): the detector is the run's model, the region stage crops
and runs the mask model on every path the stage runs on, and composes the patches into the frame.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zerocopy.api import Detector
from zerocopy.config import RunConfig
from zerocopy.errors import ConfigError
from zerocopy.infer.model import ModelSpec
from zerocopy.plan import RunPlan, plan_processing


class Processor(Detector):
    """An image-to-image model on the best path this machine allows (auto: zero-copy, copy, software).

    `model` is an image-to-image catalogue model (`text-map`, `person-mask`) or a model file with one
    single-channel map output (fed RGB in [0, 1], letterboxed). `detector` names the detector whose
    boxes a box model (`person-mask`) runs on (default: its catalogue entry's, `objects`; `person`
    works too); `threshold`, `classes` and the other detector settings then apply to it. Everything
    else is `Detector`'s: `settings` are `RunConfig`'s, `run()` yields `FrameResult`s in order, with
    `output` the model's map over the frame (float32 height×width in [0, 1], zero where a box model
    found no box) and `detections` the boxes it ran on (none for a model of the whole frame).
    """

    def __init__(self, model: str | None = None, *, detector: str | None = None, config: RunConfig | None = None,
                 **options: Any):
        if model is None and "model" not in options and config is None:
            raise ConfigError("model", "a Processor needs an image-to-image model: text-map, person-mask "
                              "(`zerocopy models list`) or a model file")
        if detector is not None and (not isinstance(detector, str) or not detector):
            raise ConfigError("detector", f"detector must be a detector's catalogue name or file, not {detector!r}")
        self._detector = detector
        self.image_model: ModelSpec | None = None  # the image-to-image model (the run's model or its region model)
        super().__init__(model, config=config, **options)

    def _plan(self, asked: RunConfig, log: Callable[[str], None] | None) -> RunPlan:
        plan = plan_processing(asked, self._core, self._detector, log)
        self.image_model = plan.image_model
        return plan

    @property
    def detector(self) -> str | None:
        """The detector whose boxes a box model runs on (None for a model of the whole frame)."""
        return None if self.image_model is self.spec else self.spec.name

    def report(self) -> dict:
        """`Detector.report()`, with `process`: the image-to-image model and the detector it ran on."""
        report = super().report()
        assert self.image_model is not None
        report["process"] = {"model": self.image_model.name, "file": str(self.image_model.path),
                             "detector": self.detector}
        return report

    def __enter__(self) -> Processor:
        return self
