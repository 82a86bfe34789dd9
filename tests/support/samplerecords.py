"""One record of each kind the stages make (`stages.records`' table), as they make them, and a histogram family for
tests of figures."""

from __future__ import annotations

from zerocopy.analytics.records import LineCrossing, Occupancy
from zerocopy.roi.region_state import RegionState
from zerocopy.snapshots.stage import SnapshotSaved
from zerocopy.stages.figures import Family
from zerocopy.stages.motion import MotionState
from zerocopy.track import ObjectEvent

HIST = Family(kind="histogram", name="zerocopy_test_seconds", help="a test", labels=("zone",), buckets=(1.0, 10.0))


def records() -> list:
    obj = ObjectEvent(type="end", id="1.0-abcdef", tracker_id=1, node="box", camera="door", source="door.mp4",
                      label="person", score=0.9, top_score=0.9, box=(1, 2, 3, 4), start_time=1.0, end_time=2.0,
                      frame_time=1.5, first_pts=0.0, last_pts=1.0, frames=3)
    cross = LineCrossing(id="1.0-abcdef", tracker_id=1, node="box", camera="door", source="door.mp4", line="gate",
                         direction="in", label="person", frame_time=1.5, pts=1.0, box=(1, 2, 3, 4))
    count = Occupancy(camera="door", zone="porch", label="person", count=2, frame_time=1.5)
    shot = SnapshotSaved(id="1.0-abcdef", camera="door", label="person", snapshot="s.jpg", thumbnail="t.jpg",
                         jpeg=b"\xff\xd8", final=True)
    motion = MotionState(camera="door", active=True, all_motion=False, whole_scene=False, inferences_skipped=4,
                         whole_scene_episodes=0, frame_time=1.5, news=True, on=True)
    regions = RegionState(camera="door", frames=10, regions=4, covered=0.125)
    return [obj, cross, count, shot, motion, regions]
