"""zerocopy.sinks.publish.MqttSink: where each record goes (the publisher is the test's own recorder of calls:
what reaches a real broker is tests/e2e/test_zones_lines.py's and test_publish.py's)."""

from zerocopy.analytics.records import LineCrossing, Occupancy
from zerocopy.sinks.publish import MqttSink
from zerocopy.track import ObjectEvent


class Calls:
    node = "box"

    def __init__(self):
        self.calls = []

    def event(self, camera, payload):
        self.calls.append(("event", camera, payload))

    def send(self, suffix, payload, retain=False):
        self.calls.append(("send", suffix, payload, retain))


def event(kind: str) -> ObjectEvent:
    return ObjectEvent(type=kind, id="1.0-abcdef", tracker_id=1, node="box", camera="door", source="door.mp4",
                       label="Person", score=0.9, top_score=0.9, box=(1, 2, 3, 4), start_time=1.0,
                       end_time=2.0 if kind == "end" else None, frame_time=1.5, first_pts=0.0, last_pts=1.0, frames=3)


def test_counts_are_retained_on_their_topic_crossings_go_to_their_line_and_clips_are_promised():
    pub = Calls()
    sink = MqttSink(pub, ["person"], ["door"], clips=[True])
    crossing = LineCrossing(id="1.0-abcdef", tracker_id=1, node="box", camera="door", source="door.mp4",
                            line="gate", direction="in", label="Person", frame_time=1.5, pts=1.0, box=(1, 2, 3, 4))
    sink.on_events([event("new"), Occupancy(camera="door", zone="porch", label="Person", count=2, frame_time=1.5),
                    crossing, event("end")])
    new, count, cross, cross_line, end = pub.calls
    assert new[0] == "event" and new[2]["after"]["has_clip"] is True and new[2]["has_clip"] is True
    assert count == ("send", "door/porch/person", 2, True)
    assert cross[0] == "event" and cross[2]["type"] == "cross" and cross[2]["label"] == "person"
    assert cross_line[:2] == ("send", "door/lines/gate") and cross_line[3] is False
    assert end[2]["before"]["has_clip"] is True and end[2]["after"]["active"] is False


def test_without_recording_no_clip_is_promised():
    pub = Calls()
    MqttSink(pub, ["person"], ["door"]).on_events([event("new")])
    assert pub.calls[0][2]["after"]["has_clip"] is False


def test_an_object_that_is_no_record_is_an_error_not_a_line_crossing():
    """Issue 37, item 3: a kind of event that does not speak the records' protocol (`stages.records`) used to go out
    on the events topic as if it were a crossing."""
    import dataclasses

    import pytest

    @dataclasses.dataclass(frozen=True)
    class Dwell:
        type = "dwell"
        camera: str = "door"

        def to_mqtt(self, before=None):
            return {"type": self.type}

    pub = Calls()
    with pytest.raises(TypeError, match="a Dwell is not a record"):
        MqttSink(pub, ["person"], ["door"]).on_events([Dwell()])
    assert pub.calls == []


def test_a_new_kind_of_record_goes_where_its_protocol_says_without_the_sink_knowing_it():
    """Issue 37, item 3: a stage's own record (a state on its own retained topic, an event on the events topic) needs
    no change to the sink."""
    import dataclasses
    from typing import ClassVar

    from zerocopy.stages.records import Record, RecordBase

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Level(RecordBase):
        type: ClassVar[str] = "level"
        retained: ClassVar[bool] = True
        camera: str
        value: int

        @property
        def topic(self):
            return f"{self.camera}/level"

        def to_record(self):
            return {"type": self.type, "camera": self.camera, "value": self.value}

        def to_mqtt(self, before=None):
            return self.value

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Knock(Level):
        type: ClassVar[str] = "knock"
        logged: ClassVar[bool] = True
        retained: ClassVar[bool] = False

        @property
        def topic(self):
            return None

    pub = Calls()
    assert isinstance(Level(camera="door", value=3), Record)
    MqttSink(pub, ["person"], ["door"]).on_events([Level(camera="door", value=3), Knock(camera="door", value=1)])
    assert pub.calls == [("send", "door/level", 3, True), ("event", "door", 1)]
