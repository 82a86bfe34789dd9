"""zerocopy.analytics.dwell (`--dwell`): how long each tracked object stayed in each zone, after the real tracker and
zones, through the run's own `StageChain`: in its `end` event, as a record for MQTT and `/metrics`, summed over
visits; switched on by its setting's declaration alone."""

from __future__ import annotations

import numpy as np
import pytest

from zerocopy.analytics.counts import InView
from zerocopy.analytics.dwell import DWELL, Dwell, Dwelled
from zerocopy.analytics.lines import Lines
from zerocopy.analytics.zones import Zones
from zerocopy.config import RunConfig
from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame
from zerocopy.stages import InputInfo, StageChain
from zerocopy.stages.assemble import declared_stages
from zerocopy.stages.figures import Figures
from zerocopy.stages.records import Record
from zerocopy.track import ObjectEvent
from zerocopy.track.stage import InputTracks

RATE = 5.0
NAMES = ["person", "car"]
DOOR = "door:0,0,200,0,200,360,0,360:min_frames=1"


def chain(zones: list[str]) -> StageChain:
    """The stages as `stages.assemble` puts them, the declared ones (this one) after the zones and lines."""
    c = RunConfig(track=True, min_hits=2, max_lost=1.0, zones=zones, dwell=True)
    tracks = InputTracks(c, NAMES)
    return StageChain([tracks, Zones(c.zones, NAMES), Lines(c.lines, NAMES, tracks.sighted),
                       *declared_stages(c, NAMES), InView()])


def at(x: float, y: float = 250.0) -> Detections:
    """A person 60 px square whose bottom-centre is at (x, y)."""
    return Detections(np.array([[x - 30, y - 60, x + 30, y]], np.float32), np.full(1, 0.9, np.float32),
                      np.zeros(1, np.int32))


def run(script: list[Detections], zones: list[str]) -> list:
    stages = chain(zones)
    stages.begin(InputInfo(index=0, source="cam.mp4", camera="cam", rate=RATE))
    events: list = []
    for i, dets in enumerate(script):
        frame = PreparedFrame(index=i, pts=i / RATE, width=640, height=360, geometry=None, inputs={})
        events += stages(frame, dets, 0, lambda s, e: e).events
    return events + list(stages.end(0))


def objects(events: list) -> list[ObjectEvent]:
    return [e for e in events if isinstance(e, ObjectEvent)]


def test_it_is_switched_on_by_its_declaration():
    assert [type(s) for s in declared_stages(RunConfig(dwell=True), NAMES)] == [Dwell]
    assert declared_stages(RunConfig(), NAMES) == []


def test_an_end_says_how_long_its_object_stayed_from_entering_to_leaving():
    events = run([at(100)] * 20 + [at(x) for x in range(150, 650, 50)], [DOOR])
    objs = objects(events)
    entered = next(e for e in objs if "door" in e.current_zones)
    left = next(e for e in objs if e.type == "update" and not e.current_zones)
    end = objs[-1]
    assert end.type == "end" and end.extra["dwell"] == {"door": pytest.approx(left.last_pts - entered.last_pts)}
    assert end.to_record()["dwell"] == end.extra["dwell"] and end.to_mqtt()["after"]["dwell"] == end.extra["dwell"]
    said = [e for e in events if isinstance(e, Dwelled)]
    assert [(d.zone, d.label, d.id) for d in said] == [("door", "person", end.id)]
    assert said[0].seconds == pytest.approx(end.extra["dwell"]["door"]) and isinstance(said[0], Record)
    assert said[0].topic == "cam/door/person/dwell" and said[0].retained and not said[0].logged


def test_visits_add_up_and_one_still_inside_at_its_end_counts_to_its_last_sighting():
    out, back = [at(x) for x in range(130, 400, 30)], [at(x) for x in range(370, 100, -30)]
    script = [at(100)] * 10 + out + [at(400)] * 3 + back + [at(100)] * 10  # in, out, in again until the input ends
    objs = objects(run(script, [DOOR]))
    changes = [(e.last_pts, "door" in e.current_zones) for e in objs if e.type in ("new", "update")]
    spans = [(t, inside) for (t, inside), (_, before) in zip(changes, [(0, False), *changes], strict=False)
             if inside != before]
    first = spans[1][0] - spans[0][0]
    second = objs[-1].last_pts - spans[2][0]
    assert objs[-1].type == "end" and objs[-1].extra["dwell"]["door"] == pytest.approx(first + second)
    assert first > 1.0 and second > 1.0


def test_an_object_that_entered_no_zone_ends_with_an_empty_dwell_and_no_record():
    events = run([at(400)] * 6, [DOOR])
    assert objects(events)[-1].extra == {"dwell": {}} and not [e for e in events if isinstance(e, Dwelled)]


def test_an_input_without_zones_is_said_once_as_it_measures_nothing(caplog):
    """The review of issue 37: `--dwell` on an input with no zone measured nothing, and said nothing."""
    from zerocopy.input_settings import input_settings

    caplog.set_level("WARNING", logger="zerocopy")
    stage = Dwell(RunConfig(dwell=True), NAMES)
    stage.begin(InputInfo(index=0, source="a.mp4", camera="yard", rate=RATE))
    stage.begin(InputInfo(index=1, source="b.mp4", camera="door", rate=RATE,
                          settings=input_settings({"zones": [DOOR]})))  # its own zones
    Dwell(RunConfig(dwell=True, zones=[DOOR]), NAMES).begin(InputInfo(index=0, source="c.mp4", camera="gate",
                                                                      rate=RATE))  # the run's
    said = [r.getMessage() for r in caplog.records if "dwell" in r.getMessage()]
    assert len(said) == 1 and said[0].startswith("yard: dwell measures how long objects stay in zones")


def test_the_record_measures_a_histogram_per_zone_and_label():
    figures = Figures()
    for seconds in (2.0, 40.0):
        Dwelled(id="x", camera="cam", zone="door", label="person", seconds=seconds, frame_time=0.0).measure(figures)
    h = figures.get(DWELL)[("door", "person")]
    assert h.count == 2 and h.sum == 42.0 and dict(h.cumulative())["5.0"] == 1


@pytest.mark.slow
def test_a_cli_run_says_each_objects_dwell_in_its_end_event(tmp_path):
    """Through `zerocopy detect` and the real face model: a person walks in, stands 4 s in the middle zone, walks
    out; the end event says about 4 s (the zone is entered after min_frames at --detect-fps 5)."""
    from conftest import detect_quiet, read_jsonl
    from passes import write_path_clip

    fps = 15
    xs = [None] * fps + list(np.linspace(0.1, 0.5, 2 * fps)) + [0.5] * 4 * fps + list(np.linspace(0.5, 0.9, 2 * fps))
    clip, events = tmp_path / "stay.mp4", tmp_path / "events.jsonl"
    write_path_clip(clip, xs + [None] * 2 * fps, fps=fps, noise=2.0)
    assert detect_quiet(clip, "--path", "software", "--detect-fps", "5", "--zone", "middle:0.4,0,0.6,0,0.6,1,0.4,1",
                        "--dwell", "--events", events) == 0
    ends = [e for e in read_jsonl(events) if e["type"] == "end"]
    assert len(ends) == 1 and set(ends[0]["dwell"]) == {"middle"}
    assert 4.0 <= ends[0]["dwell"]["middle"] <= 6.0  # 4 s standing, and the walk's share inside the zone
