"""serve's event routes without a server: `Range` headers read as RFC 9110 says, `file_answer` on real files (200,
206, 416, 404), `/api/events`' filters (a bad one a 400 naming it) through `route` over an engine that owns a real
store, and a run's object events reaching that store through the group's sinks."""

import json

import pytest
from objectevents import T0, object_event

from zerocopy.detections import Detections
from zerocopy.frames import Geometry, PreparedFrame
from zerocopy.pipeline import FrameDone, InputBegin, InputEnd, InputOutcome
from zerocopy.serve.answers import FilePart, Request
from zerocopy.serve.config import parse_config
from zerocopy.serve.engine import Engine
from zerocopy.serve.event_routes import event_filters
from zerocopy.serve.files import Span, Unsatisfiable, file_answer, requested_span
from zerocopy.serve.routes import route
from zerocopy.store.storage import Storage


@pytest.mark.parametrize(("header", "span"), [
    (None, None), ("", None), ("bytes=0-99", Span(0, 99)), ("bytes=100-", Span(100, 999)),
    ("bytes=-100", Span(900, 999)), ("bytes=-5000", Span(0, 999)), ("bytes=990-5000", Span(990, 999)),
    ("BYTES = 5 - 9", Span(5, 9)), ("bytes=999-999", Span(999, 999)),
    ("items=0-9", None), ("bytes=0-9,20-29", None), ("bytes=9-0", None), ("bytes=-", None), ("bytes=a-b", None),
    ("bytes=٣-٥", None),  # digits of another script are no number here
])
def test_a_range_header_is_read_or_ignored(header, span):
    assert requested_span(header, 1000) == span


@pytest.mark.parametrize(("header", "size"), [("bytes=1000-", 1000), ("bytes=5000-6000", 1000), ("bytes=-0", 1000),
                                               ("bytes=0-", 0), ("bytes=-10", 0)])
def test_a_range_past_the_end_is_unsatisfiable(header, size):
    with pytest.raises(Unsatisfiable):
        requested_span(header, size)


def body(part: FilePart) -> bytes:
    """The part read as the server reads it: a chunk at a time (small ones here), on from where the last ended."""
    got = b""
    try:
        while len(got) < len(part):
            got += part.read(len(got), 7)
    finally:
        part.close()
    return got


def test_file_answers(tmp_path):
    path = tmp_path / "clip.mp4"
    data = bytes(range(256)) * 4
    path.write_bytes(data)
    whole = file_answer(path, "video/mp4")
    assert (whole.status, whole.content_type, dict(whole.headers)) == (200, "video/mp4", {b"accept-ranges": b"bytes"})
    assert body(whole.body) == data
    part = file_answer(path, "video/mp4", "bytes=10-19")
    assert part.status == 206 and dict(part.headers)[b"content-range"] == b"bytes 10-19/1024"
    assert body(part.body) == data[10:20]
    path.unlink()  # a file removed after its answer was made is still sent whole
    tail = file_answer(tmp_path / "x", "video/mp4")
    assert tail.status == 404 and json.loads(tail.body) == {"error": "the file x is gone"}
    path.write_bytes(data)
    past = file_answer(path, "video/mp4", "bytes=2000-")
    assert past.status == 416 and dict(past.headers)[b"content-range"] == b"bytes */1024"
    assert file_answer(tmp_path, "video/mp4").status == 404  # a folder is no file


def test_a_file_cut_short_after_its_answer_was_made_says_so(tmp_path):
    path = tmp_path / "clip.mp4"
    path.write_bytes(b"x" * 100)
    answer = file_answer(path, "video/mp4")
    path.write_bytes(b"x" * 10)
    with pytest.raises(OSError, match="ended 90 byte"):
        body(answer.body)


def test_the_filters_of_api_events():
    assert event_filters({"camera": ["front"], "zone": ["door"], "after": ["1795000000.5"], "limit": ["20"]}) == {
        "camera": "front", "zone": "door", "after": 1795000000.5, "limit": 20}
    for query, error in [({"limit": ["0"]}, "limit must be a whole number from 1 to 500, not '0'"),
                         ({"limit": ["501"]}, "limit must be a whole number from 1 to 500, not '501'"),
                         ({"limit": ["2.5"]}, "limit must be a whole number from 1 to 500, not '2.5'"),
                         ({"after": ["yesterday"]}, "after must be a Unix time in seconds (e.g. 1795543378.5), not "
                                                    "'yesterday'"),
                         ({"before": ["inf"]}, "before must be a Unix time in seconds (e.g. 1795543378.5), not 'inf'"),
                         ({"cam": ["front"]}, "unknown filter 'cam'; /api/events takes camera, label, zone, after, "
                                              "before, limit, cursor"),
                         ({"label": ["car", "person"]}, "label is given 2 times; give it once"),
                         ({"zone": [""]}, "zone is empty; leave it out to have every zone")]:
        with pytest.raises(ValueError) as e:
            event_filters(query)
        assert str(e.value) == error


@pytest.fixture
def engine(tmp_path):
    config = parse_config({"cameras": {"front": {"url": "rtsp://front.lan/1", "model": "face"}},
                           "storage": {"path": str(tmp_path / "store")}}, env={}, base=tmp_path)
    engine = Engine(config.cameras, None, say=lambda msg: None, storage=config.storage)
    yield engine
    engine.stop(timeout=2.0)


def ask(engine, path: str, query: str = "", headers: dict | None = None):
    answer = route(engine, None, path, request=Request.of({"query_string": query.encode(), "headers": [
        (k.encode(), v.encode()) for k, v in (headers or {}).items()]}))
    return answer.status, (json.loads(answer.body) if answer.content_type == "application/json" else answer.body)


def test_api_events_over_the_engines_store(engine, tmp_path):
    engine.storage.record([object_event("new", "a", T0, zones=("door",)), object_event("new", "b", T0 + 5)])
    snapshot = tmp_path / "store" / "a.jpg"  # (a file of the storage folder: one outside it is refused)
    snapshot.write_bytes(b"\xff\xd8 a jpeg")
    engine.storage.attach("a", snapshot=snapshot)
    assert engine.storage.flush()
    status, found = ask(engine, "/api/events")
    assert status == 200 and [e["id"] for e in found["events"]] == ["b", "a"] and found["total"] == 2
    assert ask(engine, "/api/events/", "zone=door&camera=front")[1]["events"][0]["id"] == "a"
    assert ask(engine, "/api/events", "limit=x") == (400, {"error": "limit must be a whole number from 1 to 500, "
                                                                    "not 'x'"})
    status, one = ask(engine, "/api/events/a")
    assert status == 200 and one["has_snapshot"] and not one["has_clip"] and one["zones"] == ["door"]
    answer = route(engine, None, "/api/events/a/snapshot.jpg")
    assert (answer.status, answer.content_type, body(answer.body)) == (200, "image/jpeg", b"\xff\xd8 a jpeg")
    assert ask(engine, "/api/events/b/clip.mp4") == (404, {"error": "event 'b' has no clip"})
    assert ask(engine, "/api/events/nope") == (404, {"error": "no event 'nope' (unknown, or removed by retention)"})
    assert ask(engine, "/api/events/a/other.txt")[0] == 404 and ask(engine, "/api/events/a/b/c")[0] == 404


def test_without_a_store_api_events_is_a_404(tmp_path):
    config = parse_config({"cameras": {"front": {"url": "rtsp://front.lan/1", "model": "face"}}}, env={},
                          base=tmp_path)
    engine = Engine(config.cameras, None, say=lambda msg: None)
    assert ask(engine, "/api/events") == (404, {"error": "events are not kept here (no event store)"})


class Detector:
    """What `Group._run` uses of a `Detector`, with a run's events given."""

    names = ("face",)
    path = "software"

    def __init__(self, events):
        self._events = events

    def events(self, urls, **kwargs):
        yield from self._events

    def damage_now(self, input):
        return None


def test_a_runs_object_events_reach_the_store_and_stop_writes_the_last(engine):
    frame = PreparedFrame(index=0, pts=0.0, width=64, height=36, geometry=Geometry.fit(64, 36, 64, 36, "stretch"),
                          inputs={})
    group, = engine.groups
    group._run(Detector([
        InputBegin("rtsp://front.lan/1", 25.0, None, 0),
        FrameDone(source="rtsp://front.lan/1", frame=frame, detections=Detections.empty(), input=0,
                  events=(object_event("new", "a"),)),
        InputEnd(source="rtsp://front.lan/1", outcome=InputOutcome(source="rtsp://front.lan/1"), began=True, input=0,
                 events=(object_event("end", "a", end=T0 + 9),))]), None, pictures=False)
    storage = engine.storage
    assert engine.stop(timeout=2.0)
    assert storage.store.totals() == (0, 0)  # closed
    reopened = Storage(storage.folder, max_bytes=10**9, max_days=1e6, say=print)
    row, = reopened.store.query()
    assert (row.id, row.end_time) == ("a", T0 + 9)
    reopened.close()
