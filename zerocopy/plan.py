"""A run's plan, made once before any video is opened: the model (pulled and read), the settings resolved for
it, which labels are reported, hidden and detected, and the region models (pulled and checked). `Detector`,
`Processor`, the bench and serve all start from one (`plan_detection`, `plan_processing`); each path tried
then gets its own share of it (`RunPlan.for_path`: the settings for that path and device, the model wrapped
for the path's input, and the stages after inference)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import openvino as ov

from zerocopy.config import RunConfig
from zerocopy.errors import ConfigError
from zerocopy.infer.model import ModelSpec, WrappedModel, resolve_spec
from zerocopy.paths.base import Front
from zerocopy.postprocess import LabelChoice, label_indices
from zerocopy.postprocess.maps import MAP_KINDS
from zerocopy.roi.setup import ResolvedTask, resolve_tasks
from zerocopy.roi.tasks import RoiTask
from zerocopy.stages.assemble import after_inference
from zerocopy.stages.base import Stage

Log = Callable[[str], None]

# Settings that only mean something for the boxes of a detector: a model of the whole frame refuses them.
BOX_SETTINGS = ("labels", "postprocess", "classes", "anonymise", "classify", "threshold", "min_presence", "tiles")


@dataclass(frozen=True, kw_only=True)
class PathPlan:
    """One path's share of a run: the settings resolved for its device and inputs, the model wrapped for its
    input, and the stages after inference made for its region input."""

    config: RunConfig
    model: WrappedModel
    stages: list[Stage]


@dataclass(frozen=True, kw_only=True)
class RunPlan:
    """What a run is, decided before any video: `spec` the run's model, `config` the settings resolved for it
    (the device still `auto` where asked so), `labels` the labels rule, `regions` the region models, and, for
    an image-to-image run, `image_model` (the run's model, or the region model that makes the map)."""

    spec: ModelSpec
    config: RunConfig
    labels: LabelChoice
    regions: tuple[ResolvedTask, ...] = ()
    image_model: ModelSpec | None = None

    def for_path(self, core: ov.Core, front: Front, device: str, inputs: int) -> PathPlan:
        """This plan on `front`'s path, inferring on `device`, `inputs` decoded at once."""
        config = self.config.replace(path=front.name).resolve(device=device, inputs=inputs)
        model = WrappedModel(core, self.spec, front.input_kind, config.batch, front.memory_type,
                             threshold=config.threshold, only_labels=self.labels.detected())
        stages = after_inference(core, self.spec, config, front.roi_input_kind, front.memory_type, self.regions,
                                 self.labels)
        return PathPlan(config=config, model=model, stages=stages)


def plan_detection(asked: RunConfig, core: ov.Core, log: Log | None = None) -> RunPlan:
    """A detector's run: the model pulled and read, the settings resolved for it, `classes` and `anonymise` as its
    label indices (a name it lacks is a `ConfigError`, here), the `classify` region models pulled and checked."""
    spec = resolve_spec(asked.model, asked.labels, asked.postprocess, asked.resize, core=core, log=log)
    config = asked.resolve(spec=spec)
    if config.tiles and spec.postprocess in MAP_KINDS:
        raise ConfigError("tiles", f"{spec.name} maps whole frames: tiles apply to detectors")
    labels = LabelChoice(label_indices(config.classes, spec.labels) if config.classes else None,
                         label_indices(config.anonymise, spec.labels, "anonymise") if config.anonymise else ())
    return RunPlan(spec=spec, config=config, labels=labels, regions=tuple(resolve_tasks(config, spec, core, log)))


def plan_processing(asked: RunConfig, core: ov.Core, detector: str | None = None, log: Log | None = None) -> RunPlan:
    """An image-to-image model's run. A model of the whole frame (`text-map`) is the run's model, and refuses the
    settings of boxes (`BOX_SETTINGS`). A model of boxes (`person-mask`) is a region model on the boxes of
    `detector` (default: its catalogue entry's), which is the run's model: the boxes it runs on are detected
    whatever `classes` reports (a privacy mask must not depend on it) and, without `classes`, are the ones
    reported."""
    made = resolve_spec(asked.model, core=core, log=log, task="process")
    entry = made.entry
    if entry is None or not entry.detector:
        _whole_frame_only(asked, made, detector)
        made.resize = asked.resize or made.resize
        return RunPlan(spec=made, config=asked.replace(resize=made.resize), labels=LabelChoice(), image_model=made)
    spec = resolve_spec(detector or entry.detector, asked.labels, asked.postprocess, asked.resize, core=core,
                        log=log, setting="detector")
    config = asked.resolve(spec=spec)
    on = _box_labels(made, entry.box_labels, spec)
    labels = LabelChoice(label_indices(config.classes, spec.labels) if config.classes else on,
                         label_indices(config.anonymise, spec.labels, "anonymise") if config.anonymise else (),
                         needed=on)
    regions = (*resolve_tasks(config, spec, core, log), ResolvedTask(RoiTask(made.name, entry.box_labels), made, on))
    return RunPlan(spec=spec, config=config, labels=labels, regions=regions, image_model=made)


def _whole_frame_only(asked: RunConfig, made: ModelSpec, detector: str | None) -> None:
    given, default = asked.to_dict(), RunConfig().to_dict()
    unused = [name for name in BOX_SETTINGS if given[name] != default[name]]
    if unused or detector is not None:
        what = unused[0] if unused else "detector"
        raise ConfigError(what, f"{made.name} maps whole frames: {what} applies to models run on a detector's "
                          "boxes (person-mask)")


def _box_labels(made: ModelSpec, box_labels: Sequence[str], detector: ModelSpec) -> tuple[int, ...]:
    try:
        return label_indices(box_labels, detector.labels)
    except ConfigError:
        raise ConfigError("detector", f"{made.name} runs on {', '.join(box_labels)} boxes: the {detector.name} "
                          f"detector finds none (its classes: {', '.join(detector.labels) or 'unnamed'})") from None
