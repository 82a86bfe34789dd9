"""What one camera's stages say, kept from its records for `/api/cameras` and `/metrics`: each record adds to the
camera's figures what its protocol says (`stages.records.Record.measure`: the objects in view and in each zone, the
crossings of each line by direction and label, the motion gate's state and what it saved, what the regions around
motion added, and whatever a new analytic measures), and the events among them are counted. Nothing here counts a
stage's work a second time. Bounded: one value per family and label, zone and line the camera has."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from zerocopy.analytics.records import CROSSINGS, IN_VIEW, IN_ZONE
from zerocopy.roi.region_state import REGION_COVER, REGION_FRAMES, REGIONS
from zerocopy.stages.figures import Family, Figures, Histogram
from zerocopy.stages.motion import ACTIVE, ALL_MOTION, SKIPPED, WHOLE_SCENE

# the families /metrics always has (empty until a camera measures one): those of the stages every camera may run
ALWAYS = (IN_VIEW, IN_ZONE, CROSSINGS, ACTIVE, ALL_MOTION, SKIPPED, WHOLE_SCENE, REGION_FRAMES, REGIONS, REGION_COVER)


class Tallies:
    """Not thread-safe: the camera updates and reads it under its own lock."""

    def __init__(self) -> None:
        self.figures = Figures()

    def events(self, records: Iterable[Any]) -> int:
        """Takes a frame's records (every stage's: `stages.records`); returns how many are events (published on the
        camera's events topic: the objects' `new`, `update`, `loiter`, `end`, and crossings)."""
        events = 0
        for record in records:
            record.measure(self.figures)
            events += record.logged
        return events

    def to_json(self) -> dict[str, Any]:
        """`objects` (label → in view now), `zones` (zone → label → in it now), `lines` (line → in/out → label →
        crossings since the start), `motion` (whether measured, active now, all motion now, inferences skipped, whole
        scene episodes), `regions` (inferred frames squares were chosen on, inferences they added, the mean share of
        the frame they covered)."""
        f = self.figures
        zones: dict[str, dict[str, int]] = {}
        for (zone, label), n in f.get(IN_ZONE).items():
            zones.setdefault(zone, {})[label] = int(n)  # type: ignore[arg-type]
        lines: dict[str, dict[str, dict[str, int]]] = {}
        for (line, direction, label), n in sorted(f.get(CROSSINGS).items()):
            lines.setdefault(line, {"in": {}, "out": {}})[direction][label] = int(n)  # type: ignore[arg-type]
        motion = {family.name: f.get(family).get(()) for family in (ACTIVE, ALL_MOTION, SKIPPED, WHOLE_SCENE)}
        regions = [float(f.get(family).get((), 0.0)) for family in (REGION_FRAMES, REGIONS, REGION_COVER)]  # type: ignore[arg-type]
        return {"objects": {label: int(n) for (label,), n in f.get(IN_VIEW).items()},  # type: ignore[arg-type]
                "zones": zones, "lines": lines,
                "motion": {"measured": motion[ACTIVE.name] is not None, "active": bool(motion[ACTIVE.name]),
                           "all_motion": bool(motion[ALL_MOTION.name]),
                           "inferences_skipped": int(motion[SKIPPED.name] or 0),  # type: ignore[arg-type]
                           "whole_scene": int(motion[WHOLE_SCENE.name] or 0)},  # type: ignore[arg-type]
                "regions": {"frames": int(regions[0]), "inferences": int(regions[1]), "covered": round(regions[2], 4)}}


def analytics_metrics(statuses: Iterable[Any]) -> Iterator[Any]:
    """The Prometheus families of the cameras' figures (`CameraStatus.figures`), each with the label `camera`."""
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily  # (serve extra)

    made: dict[Family, Any] = {}

    def family(f: Family) -> Any:
        if f not in made:
            kind = {"gauge": GaugeMetricFamily, "counter": CounterMetricFamily, "histogram": HistogramMetricFamily}
            made[f] = kind[f.kind](f.name, f.help, labels=["camera", *f.labels])
        return made[f]

    for f in ALWAYS:
        family(f)
    for status in statuses:
        for f, values in status.figures:
            for labels, value in sorted(values.items()):
                if isinstance(value, Histogram):
                    family(f).add_metric([status.name, *labels], value.cumulative(), value.sum)
                else:
                    family(f).add_metric([status.name, *labels], value)
    yield from made.values()
