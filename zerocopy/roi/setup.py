"""From a run's `classify` setting to the region models of one pipeline: resolved once per `Detector`
(pulled, checked against the detector's labels), wrapped per path (NV12 host planes, NV12 surfaces, BGR)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import openvino as ov

from zerocopy.config import RunConfig
from zerocopy.errors import ConfigError
from zerocopy.infer.model import ModelSpec, WrappedModel, resolve_spec
from zerocopy.postprocess import label_indices
from zerocopy.postprocess.maps import MAP_KINDS
from zerocopy.postprocess.regions import ROI_DECODERS
from zerocopy.roi.regions import Regions
from zerocopy.roi.stage import RegionModel, RoiStage
from zerocopy.roi.tasks import RoiTask
from zerocopy.roi.tiles import Tiler


@dataclass(frozen=True)
class ResolvedTask:
    task: RoiTask
    spec: ModelSpec
    on_labels: tuple[int, ...] | None  # the detector's label indices whose boxes it runs on (None: all)

    @property
    def kind(self) -> str:
        """How its outputs are decoded (`postprocess.regions.ROI_DECODERS`)."""
        return self.spec.postprocess or "classifier"


def resolve_tasks(config: RunConfig, detector: ModelSpec, core: ov.Core,
                  log: Callable[[str], None] | None = None) -> list[ResolvedTask]:
    """Each `classify` item's model pulled and read, and its labels found among the detector's."""
    out = []
    for task in config.tasks:
        spec = resolve_spec(task.model, core=core, log=log, task="classify")
        on_labels = None
        if task.labels:
            try:
                on_labels = label_indices(task.labels, detector.labels)
            except ConfigError as e:
                raise ConfigError("classify", f"--classify {task.text}: {e}") from None
        out.append(ResolvedTask(task, spec, on_labels))
    _one_keypoint_model_per_label(out, detector)
    return out


def _one_keypoint_model_per_label(tasks: list[ResolvedTask], detector: ModelSpec) -> None:
    """A box holds one set of keypoints: two landmark models on the same label are refused, not one's lost."""
    def runs_on(t: ResolvedTask) -> set[int]:
        return set(range(max(1, len(detector.labels)))) if t.on_labels is None else set(t.on_labels)

    marking = [t for t in tasks if t.kind in ROI_DECODERS and ROI_DECODERS[t.kind].keypoints]
    for i, a in enumerate(marking):
        for b in marking[i + 1:]:
            if shared := runs_on(a) & runs_on(b):
                names = ", ".join(detector.labels[k] for k in sorted(shared) if k < len(detector.labels)) or "every"
                raise ConfigError("classify", f"--classify {a.task.text} and --classify {b.task.text} both give "
                                  f"keypoints for {names} boxes, and a box holds one set: give each its own labels "
                                  "(MODEL:LABEL,...)")


def make_stage(core: ov.Core, tasks: list[ResolvedTask], config: RunConfig, input_kind: str,
               memory_type: str | None) -> RoiStage | None:
    """The region stage for one pipeline (None without `classify`): each model wrapped for the path."""
    if not tasks:
        return None
    models = []
    for t in tasks:
        wrapped = WrappedModel(core, t.spec, input_kind, 1, memory_type)  # type: ignore[arg-type]
        entry = t.spec.entry
        models.append(RegionModel(wrapped, t.kind, t.on_labels, config.max_rois,
                                  entry.crop_expand if entry else 1.0, entry.crop_square if entry else False))
    return RoiStage(models, config.min_presence)


def make_tiler(core: ov.Core, detector: ModelSpec, config: RunConfig, input_kind: str, memory_type: str | None,
               only_labels: tuple[int, ...] | None) -> Tiler | Regions | None:
    """The detector again on tiles (`tiles` rows), else on regions around motion (`regions`; it does something only
    on the inputs that measure motion, which may be an input's own setting); None for neither, or a model of whole
    frames. Wrapped for the path's region input, with the run's threshold and classes."""
    if not (config.tiles or config.regions) or detector.postprocess in MAP_KINDS:
        return None
    wrapped = WrappedModel(core, detector, input_kind, 1, memory_type,  # type: ignore[arg-type]
                           threshold=config.threshold, only_labels=only_labels)
    return Tiler(wrapped, config.tiles) if config.tiles else Regions(wrapped)
