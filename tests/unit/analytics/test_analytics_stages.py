"""zerocopy.analytics: zones and lines as stages after the real tracker, fed scripted boxes (a walk across the
frame, a box jittering on a line, two objects at once), through the run's own `StageChain`."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from zerocopy.analytics.counts import InView
from zerocopy.analytics.lines import Lines
from zerocopy.analytics.records import LineCrossing, Occupancy
from zerocopy.analytics.specs import MaskSpec, ZoneSpec
from zerocopy.analytics.zones import Zones
from zerocopy.config import RunConfig
from zerocopy.detections import Detections
from zerocopy.errors import ConfigError
from zerocopy.frames import PreparedFrame
from zerocopy.input_settings import InputSettings, input_settings
from zerocopy.stages import InputInfo, StageChain
from zerocopy.track.stage import InputTracks

RATE = 5.0  # inferred frames per second
W, H = 640, 360
NAMES = ["person", "car"]


def chain(zones=(), lines=(), min_hits=2, **config) -> StageChain:
    """The stages as `stages.assemble` puts them after tracking."""
    c = RunConfig(track=True, min_hits=min_hits, max_lost=1.0, zones=zones, lines=lines, **config)
    tracks = InputTracks(c, NAMES)
    return StageChain([tracks, Zones(c.zones, NAMES), Lines(c.lines, NAMES, tracks.sighted), InView()])


def frame(i: int) -> PreparedFrame:
    return PreparedFrame(index=i, pts=i / RATE, width=W, height=H, geometry=None, inputs={})


def boxes(*centres: tuple[float, float], label: int = 0, size: float = 60.0) -> Detections:
    """Boxes `size` px square whose bottom-centre is at each (x, y)."""
    xyxy = np.array([[x - size / 2, y - size, x + size / 2, y] for x, y in centres], np.float32).reshape(-1, 4)
    n = len(xyxy)
    return Detections(xyxy, np.full(n, 0.9, np.float32), np.full(n, label, np.int32))


def run(stages: StageChain, script: list[Detections], settings: InputSettings | None = None) -> list:
    info = InputInfo(index=0, source="cam.mp4", camera="cam", rate=RATE, settings=settings or InputSettings())
    stages.begin(info)
    events: list = []
    for i, dets in enumerate(script):
        events += stages(frame(i), dets, 0, lambda s, e: e).events
    return events + list(stages.end(0))


def walk(x0: float, x1: float, frames: int, y: float = 250.0) -> list[Detections]:
    return [boxes((x0 + (x1 - x0) * i / (frames - 1), y)) for i in range(frames)]


def of(events: list, kind: type) -> list:
    return [e for e in events if isinstance(e, kind)]


def test_crossings_are_counted_each_way_once():
    stages = chain(lines=["gate:320,0,320,360"])  # looking down the frame: its right-hand side is the frame's left
    events = run(stages, walk(40, 600, 15) + [Detections.empty()] * 8 + walk(600, 40, 15))
    crossings = of(events, LineCrossing)
    assert [(c.line, c.direction, c.label) for c in crossings] == [("gate", "in", "person"), ("gate", "out", "person")]
    new = [e for e in events if getattr(e, "type", "") == "new"]
    assert [c.id for c in crossings] == [e.id for e in new]  # each crossing names its object's events
    assert stages.get("lines").summary() == {"crossings": {"cam": {"gate": {"in": {"person": 1},
                                                                               "out": {"person": 1}}}}}


def test_a_line_crossed_before_the_object_is_confirmed_counts_once_it_is():
    """Crossed at its 3rd sighting, confirmed at its 6th (`min_hits`): one crossing, said with the `new`, at the time
    it crossed."""
    events = run(chain(lines=["gate:100,0,100,360"], min_hits=6), walk(40, 600, 15))
    crossings, new = of(events, LineCrossing), [e for e in events if getattr(e, "type", "") == "new"]
    assert [(c.direction, c.id) for c in crossings] == [("in", new[0].id)]
    assert crossings[0].pts < new[0].last_pts and events.index(crossings[0]) > events.index(new[0])


def test_a_line_crossed_between_the_first_two_sightings_counts():
    """ByteTrack gives a track its id at its second sighting: the first box (no id yet) is where its path begins."""
    events = run(chain(lines=["gate:100,0,100,360"], min_hits=3), walk(70, 600, 15))
    crossings = of(events, LineCrossing)
    assert [c.direction for c in crossings] == ["in"] and crossings[0].pts == pytest.approx(1 / RATE)


def test_objects_never_confirmed_are_forgotten_when_a_looped_inputs_time_starts_again():
    stages = chain(lines=["gate:320,0,320,360"], min_hits=3)
    lines = stages.get("lines")
    stages.begin(InputInfo(index=0, source="loop.mp4", camera="cam", rate=RATE))
    for _ in range(40):  # a file played in a loop: each time, a box seen twice (a track, never confirmed)
        for i, dets in enumerate([boxes((100, 250))] * 2 + [Detections.empty()] * 10):
            f = PreparedFrame(index=i, pts=i / RATE, width=W, height=H, geometry=None, inputs={})
            stages(f, dets, 0, lambda st, e: e)
    assert len(lines._seen[0]) <= 1 and len(lines._sides[0]) <= 1


def test_a_crossing_of_an_object_never_confirmed_is_never_said():
    events = run(chain(lines=["gate:100,0,100,360"], min_hits=6), walk(40, 200, 4) + [Detections.empty()] * 10)
    assert of(events, LineCrossing) == [] and not [e for e in events if getattr(e, "type", "") == "new"]


def test_a_box_jittering_on_the_line_counts_once():
    rng = np.random.default_rng(0)
    there = walk(40, 320, 8)
    jitter = [boxes((320 + float(rng.uniform(-5, 5)), 250)) for _ in range(20)]  # within the band: 10 % of 60 px
    on = walk(320, 600, 8)
    crossings = of(run(chain(lines=["gate:320,0,320,360"]), there + jitter + on), LineCrossing)
    assert [c.direction for c in crossings] == ["in"]


def test_a_path_past_the_end_of_the_segment_is_no_crossing():
    crossings = of(run(chain(lines=["short:320,0,320,100"]), walk(40, 600, 15)), LineCrossing)
    assert crossings == []


def test_line_labels_count_only_those_labels():
    stages = chain(lines=["gate:320,0,320,360:labels=car"])
    assert of(run(stages, walk(40, 600, 15)), LineCrossing) == []


def test_zone_entry_waits_for_min_frames_and_leaving_is_an_update():
    stages = chain(zones=["right:330,0,640,0,640,360,330,360:min_frames=3"])
    events = [e for e in run(stages, walk(40, 600, 15)) if not isinstance(e, Occupancy)]
    kinds = [(e.type, e.current_zones, e.entered_zones) for e in events]
    assert kinds[0] == ("new", (), ())
    assert ("update", ("right",), ("right",)) in kinds
    entered = next(i for i, e in enumerate(events) if e.current_zones)
    # bottom-centres at 40 + 40 i px: inside from i = 8 (360 px), in the zone from its 3rd frame there (i = 10)
    assert events[entered].last_pts == pytest.approx(10 / RATE)
    assert events[-1].type == "end" and events[-1].entered_zones == ("right",)


def test_loiter_is_said_once_after_loiter_s_in_the_zone():
    stages = chain(zones=["door:0,0,200,0,200,360,0,360:min_frames=1:loiter_s=2"])
    events = run(stages, [boxes((100, 250))] * 25 + walk(100, 600, 6))
    loiters = [e for e in events if getattr(e, "type", "") == "loiter"]
    assert len(loiters) == 1 and loiters[0].zone == "door"
    # in the zone from its first frame with an id (frame 1: min_hits 2), 2 s later at 5 fps: frame 11
    assert loiters[0].last_pts == pytest.approx(2.2)
    leave = [e for e in events if getattr(e, "type", "") == "update" and not e.current_zones]
    assert leave and leave[0].entered_zones == ("door",)


def test_occupancy_counts_objects_in_view_and_in_zones():
    stages = chain(zones=["left:0,0,320,0,320,360,0,360:min_frames=1"])
    two = [boxes((100, 250), (500, 250))] * 4
    one = [boxes((100, 250))] * 8  # the right one unseen for longer than max_lost (1 s): ended
    counts = [(o.zone, o.label, o.count) for o in of(run(stages, two + one), Occupancy)]
    assert counts[:2] == [(None, "person", 2), ("left", "person", 1)]
    assert (None, "person", 1) in counts  # the one on the right ended
    assert counts[-2:] == [(None, "person", 0), ("left", "person", 0)] or \
        sorted(counts[-2:], key=str) == sorted([(None, "person", 0), ("left", "person", 0)], key=str)
    assert [o.topic for o in of(run(chain(zones=["left:0,0,320,0,320,360,0,360"]), two), Occupancy)][0] == \
        "cam/person"


def missed(script: list[Detections], every: int) -> list[Detections]:
    """`script` with the detector missing the object in every `every`-th frame (from the 4th)."""
    return [Detections.empty() if i >= 3 and i % every == 0 else d for i, d in enumerate(script)]


@pytest.mark.parametrize("every", [2, 3])
def test_a_count_holds_still_through_frames_where_the_detector_missed(every):
    """One pass of one object, missed in every other (or third) frame: its count rises once and falls once."""
    counts = [(o.zone, o.count) for o in of(run(chain(), missed(walk(40, 600, 30), every)), Occupancy)]
    assert counts == [(None, 1), (None, 0)]


def test_a_zones_count_never_exceeds_its_cameras():
    stages = chain(zones=["left:0,0,320,0,320,360,0,360:min_frames=1"])
    script = missed(walk(40, 600, 30), 2) + missed([boxes((100, 250), (500, 250))] * 12, 3)
    seen: dict = {}
    for o in of(run(stages, script), Occupancy):
        seen[o.zone] = o.count
        assert seen.get("left", 0) <= seen.get(None, 0), (o, seen)
    assert seen == {None: 0, "left": 0}


def test_an_inputs_own_zones_replace_the_runs():
    stages = chain(zones=["left:0,0,320,0,320,360,0,360:min_frames=1"])
    own = input_settings({"zones": ["right:320,0,640,0,640,360,320,360:min_frames=1"]})
    events = run(stages, [boxes((500, 250))] * 4, own)
    assert {z for e in events for z in getattr(e, "entered_zones", ())} == {"right"}


def test_shapes_outside_the_frame_are_clipped_and_said_once(caplog):
    stages = chain(lines=["gate:320,0,320,9000"])
    with caplog.at_level(logging.WARNING, logger="zerocopy"):
        crossings = of(run(stages, walk(40, 600, 15)), LineCrossing)
    said = [r.getMessage() for r in caplog.records if "outside" in r.getMessage()]
    assert said == ["cam: line gate reaches outside its 640x360 frame: clipped to it"]
    assert len(crossings) == 1


@pytest.mark.parametrize("setting, value, says", [
    ("zones", "z:0,0,1,1", "at least 3 points"),
    ("zones", "z:0,0,10,10,10,0,0,10", "crosses itself"),
    ("zones", "z:0,0,1,0,2,0", "no area"),
    ("zones", "my zone:0,0,1,0,1,1", "letters, digits"),
    ("zones", "z:0,0,1,0,1,1:inertia=3", "is not one of"),
    ("lines", "l:5,5,5,5", "zero length"),
    ("lines", "l:1,2,3", "x,y pairs"),
    ("motion_mask", "0,0,1,0", "at least 3 points"),
    ("zones", "lines:0,0,1,0,1,1", "topic of its own"),
    ("zones", {"z": {"points": "0,0,1,0,1,1", "min_frames": "abc"}}, "min_frames is an integer"),
    ("zones", {"z": {"points": "0,0,1,0,1,1", "min_frames": 2.5}}, "min_frames is an integer"),
])
def test_bad_shapes_are_one_clear_error(setting, value, says):
    with pytest.raises(ConfigError, match=says):
        RunConfig(**{setting: value})


def test_a_zone_and_a_line_may_not_share_a_name():
    with pytest.raises(ConfigError, match="both named 'a'"):
        RunConfig(zones=["a:0,0,1,0,1,1"], lines=["a:0,0,1,1"])


def test_an_unknown_label_is_named():
    with pytest.raises(ConfigError, match="no label 'bus'"):
        Zones(RunConfig(zones=["z:0,0,1,0,1,1:labels=bus"]).zones, NAMES)


def test_the_api_takes_mappings():
    c = RunConfig(zones={"door": {"points": [[0, 0], [0.5, 0], [0.5, 1]], "labels": ["person"], "loiter_s": 5}},
                  lines={"gate": {"points": [0.5, 0, 0.5, 1]}})
    assert c.zones == (ZoneSpec(name="door", points=((0, 0), (0.5, 0), (0.5, 1)), labels=("person",), loiter_s=5),)
    assert c.to_dict()["zones"] == ("door:0,0,0.5,0,0.5,1:labels=person:loiter_s=5",)  # its one text form
    assert c.to_dict()["lines"] == ("gate:0.5,0,0.5,1",)


def test_a_motion_mask_may_be_pairs_as_zones_are():
    assert RunConfig(motion_mask=[[0, 0], [1, 0], [1, 1]]).motion_mask == (MaskSpec(((0, 0), (1, 0), (1, 1))),)
    assert RunConfig(motion_mask=[[[0, 0], [1, 0], [1, 1]], "0,0,0.5,0,0.5,1"]).to_dict()["motion_mask"] == \
        ("0,0,1,0,1,1", "0,0,0.5,0,0.5,1")
