"""The stages after inference of one pipeline, in their order: what a run's settings ask for, each made for the
path (its region input) that is being tried."""

from __future__ import annotations

import pkgutil
from collections.abc import Sequence

import openvino as ov

from zerocopy.analytics.counts import InView
from zerocopy.analytics.lines import Lines
from zerocopy.analytics.zones import Zones
from zerocopy.config import RunConfig
from zerocopy.infer.model import ModelSpec
from zerocopy.postprocess import LabelChoice
from zerocopy.roi.setup import ResolvedTask, make_stage, make_tiler
from zerocopy.snapshots.stage import Snapshots
from zerocopy.stages.base import Stage
from zerocopy.stages.filters import ObjectFilters
from zerocopy.stages.labels import Anonymise, DetectedClasses, ShownClasses
from zerocopy.stages.motion import MotionStage
from zerocopy.track.stage import InputTracks


def after_inference(core: ov.Core, detector: ModelSpec, config: RunConfig, roi_input_kind: str,
                    memory_type: str | None, tasks: Sequence[ResolvedTask], labels: LabelChoice) -> list[Stage]:
    """Tiles (`tiles`) or regions around motion (`regions`), an input's own classes, region models (`classify`),
    anonymising (`anonymise`), each label's box filters (`filters`), the classes reported, tracking (`track`) and
    what follows tracked objects: the counts in view, zones and lines (an input without zones or lines of its own or
    the run's costs them nothing). The order matters (region models run on the boxes kept, pictures are hidden before
    any output sees them, and before a filter drops a box, what is reported is tracked, zones and lines see the
    tracks' ids), snapshots of them, and what the motion gate saw (`motion`: its `busy` makes the gate infer while a
    tracked object moves)."""
    stages: list[Stage] = []
    tiler = make_tiler(core, detector, config, roi_input_kind, memory_type, labels.detected())
    if tiler is not None:
        stages.append(tiler)
    stages.append(DetectedClasses(labels))
    rois = make_stage(core, list(tasks), config, roi_input_kind, memory_type)
    if rois is not None:
        stages.append(rois)
    if labels.hidden:
        stages.append(Anonymise(labels, config.anonymise_style))
    names = detector.labels or None
    stages.append(ObjectFilters(config.filters, names))  # (after anonymise: a box a filter drops is hidden still)
    stages.append(ShownClasses(labels))
    declared = declared_stages(config, names)
    if config.track or config.zones or config.lines or config.snapshots or declared:  # (they follow tracked objects)
        tracks = InputTracks(config, names)
        stages += [tracks, Zones(config.zones, names), Lines(config.lines, names, tracks.sighted), *declared, InView()]
    if config.snapshots:
        stages.append(Snapshots(names, config.snapshots, config.snapshot_interval))
    # (always: an input may have --motion of its own; the stage reads each frame's motion, None without it)
    stages.append(MotionStage(max_lost=config.max_lost, off_delay=config.motion_off_delay))
    return stages


def declared_stages(config: RunConfig, names: Sequence[str] | None) -> list[Stage]:
    """The stages switched on by settings declared with `stage="module:Class"` (`config.setting`), in the
    declarations' order, each made with the run's config and the model's labels: they see the tracked objects'
    events after the zones and lines have added to them."""
    return [pkgutil.resolve_name(target)(config, names) for target in config.switched_stages()]
