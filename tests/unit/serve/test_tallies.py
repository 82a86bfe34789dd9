"""zerocopy.serve.tallies: a camera's `/api/cameras` analytics and its `/metrics` families, from the records its
stages made (nothing counted a second time), a new record's figures included without serve knowing it."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from prometheus_client import CollectorRegistry, generate_latest
from samplerecords import HIST, records

from zerocopy.serve.status import CameraStatus
from zerocopy.serve.tallies import Tallies, analytics_metrics
from zerocopy.stages.figures import Figures
from zerocopy.stages.records import RecordBase


@dataclasses.dataclass(frozen=True, kw_only=True)
class Stayed(RecordBase):
    """A record serve was never told of."""

    type: ClassVar[str] = "stayed"
    camera: str
    seconds: float

    def to_record(self) -> dict:
        return {"type": self.type, "camera": self.camera, "seconds": self.seconds}

    def to_mqtt(self, before: object = None) -> float:
        return self.seconds

    def measure(self, figures: Figures) -> None:
        figures.observe(HIST, ("porch",), self.seconds)


def status(name: str, figures: Figures) -> CameraStatus:
    return CameraStatus(name=name, source="s", model="m", path=None, state="running", fps=0.0, inference_fps=0.0,
                        latency_p50_ms=None, latency_p95_ms=None, frames=0, inferences=0, reconnects=0,
                        dropped_frames=0, events=0, events_dropped=0, last_frame_time=None, error=None, figures=figures)


def metrics_text(statuses: list[CameraStatus]) -> str:
    class Collector:
        def collect(self):
            return analytics_metrics(statuses)

    registry = CollectorRegistry()
    registry.register(Collector())
    return generate_latest(registry).decode()


def test_the_analytics_come_from_the_records_and_only_events_count_as_events():
    tallies = Tallies()
    assert tallies.events(records()) == 2  # the object's end and the crossing; a count, a snapshot, motion are not
    assert tallies.to_json() == {
        "objects": {}, "zones": {"porch": {"person": 2}}, "lines": {"gate": {"in": {"person": 1}, "out": {}}},
        "motion": {"measured": True, "active": True, "all_motion": False, "inferences_skipped": 4, "whole_scene": 0},
        "regions": {"frames": 10, "inferences": 4, "covered": 0.125}}
    assert Tallies().to_json()["motion"]["measured"] is False
    assert Tallies().to_json()["regions"] == {"frames": 0, "inferences": 0, "covered": 0.0}


def test_metrics_hold_every_cameras_figures_a_new_records_histogram_too():
    tallies = Tallies()
    tallies.events(records() + [Stayed(camera="door", seconds=s) for s in (0.5, 5.0)])
    text = metrics_text([status("door", tallies.figures.copy()), status("yard", Figures())])
    assert 'zerocopy_zone_objects{camera="door",label="person",zone="porch"} 2.0' in text
    assert 'zerocopy_line_crossings_total{camera="door",direction="in",label="person",line="gate"} 1.0' in text
    assert 'zerocopy_motion_active{camera="door"} 1.0' in text
    assert 'zerocopy_inferences_skipped_total{camera="door"} 4.0' in text
    assert 'zerocopy_camera_region_frames_total{camera="door"} 10.0' in text  # regions around motion (issue 39)
    assert 'zerocopy_camera_regions_total{camera="door"} 4.0' in text
    assert 'zerocopy_camera_region_cover_ratio{camera="door"} 0.125' in text
    assert 'zerocopy_test_seconds_bucket{camera="door",le="1.0",zone="porch"} 1.0' in text
    assert 'zerocopy_test_seconds_bucket{camera="door",le="+Inf",zone="porch"} 2.0' in text
    assert 'zerocopy_test_seconds_sum{camera="door",zone="porch"} 5.5' in text
    assert "# TYPE zerocopy_objects gauge" in text  # a family every camera may have is there before any value
    assert "# TYPE zerocopy_camera_regions_total counter" in text
    assert 'camera="yard"' not in text


def test_a_status_shows_its_analytics_at_the_top_not_its_figures():
    tallies = Tallies()
    tallies.events(records())
    shown = status("door", tallies.figures.copy())
    shown = dataclasses.replace(shown, analytics=tallies.to_json())
    out = shown.to_json()
    assert "figures" not in out and "analytics" not in out and out["zones"] == {"porch": {"person": 2}}

