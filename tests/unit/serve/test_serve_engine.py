"""zerocopy.serve.engine and .cameras without a model: a run's events (from a stand-in detector, through the one
sink driver) update each camera once per event; the path shows from a run's first frame; `/health` and the
state read the state alone; a scrape reads the publisher's counters once, whatever the number of cameras."""

import json
from typing import Any

import pytest
from conftest import wait_until

from zerocopy.decode.damage import DamageReport, LiveReport
from zerocopy.detections import Detections
from zerocopy.frames import Geometry, PreparedFrame
from zerocopy.pipeline import FrameDone, InputBegin, InputEnd, InputOutcome
from zerocopy.serve.config import parse_config
from zerocopy.serve.engine import Engine
from zerocopy.serve.routes import metrics_registry
from zerocopy.track import ObjectEvent

W, H = 64, 36


def frame(index: int) -> PreparedFrame:
    return PreparedFrame(index=index, pts=index / 25, width=W, height=H, geometry=Geometry.fit(W, H, W, H, "stretch"),
                         inputs={})


def done(index: int, input: int = 0, events: tuple = ()) -> FrameDone:
    return FrameDone(source=f"cam{input}", frame=frame(index), detections=Detections.empty(), input=input,
                     events=events)


def begin(input: int = 0) -> InputBegin:
    return InputBegin(f"cam{input}", 25.0, None, input)


def obj(kind: str) -> ObjectEvent:
    """A tracked object's event, as tracking makes it."""
    return ObjectEvent(type=kind, id="1.0-abcdef", tracker_id=1, node="box", camera="front", source="cam0",
                       label="person", score=0.9, top_score=0.9, box=(1, 2, 3, 4), start_time=1.0, end_time=None,
                       frame_time=1.5, first_pts=0.0, last_pts=1.0, frames=3)


def end(input: int = 0, error: str | None = None, began: bool = True, events: tuple = ()) -> InputEnd:
    return InputEnd(source=f"cam{input}", outcome=InputOutcome(source=f"cam{input}", error=error), began=began,
                    input=input, events=events)


class FakeDetector:
    """What `Group._run` uses of a `Detector`: `events()` (its path set before the first event), `names`,
    `damage_now()`."""

    names = ("face",)

    def __init__(self, path: str, events: list[Any] = ()):
        self.path: str | None = None
        self._path, self._events = path, list(events)
        self.damage: dict[int, DamageReport] = {}

    def events(self, urls, **kwargs):
        def run():
            self.path = self._path
            yield from self._events
        return run()

    def damage_now(self, input: int) -> DamageReport | None:
        return self.damage.get(input)


class FakePublisher:
    def __init__(self):
        self.calls = 0

    def stats(self) -> dict[str, Any]:
        self.calls += 1
        kinds = {"events": {"published": 5, "queued": 0, "dropped": 3},
                 "detections": {"published": 0, "queued": 0, "dropped": 0}}
        return {"target": "mqtt://broker.lan", "connected": True, "queued": 0, "reconnects": 0, "errors": 0,
                "dropped": 3, **kinds}


@pytest.fixture
def config(tmp_path):
    return parse_config({"cameras": {name: {"url": f"rtsp://{name}.lan/1", "model": "face"}
                                     for name in ("front", "back", "side")}}, env={}, base=tmp_path)


def test_a_run_counts_each_cameras_frames_and_events_and_says_how_it_ended(config):
    engine = Engine(config.cameras, None, say=lambda msg: None)
    group, = engine.groups
    det = FakeDetector("copy", [
        begin(0), begin(1), done(0, 0, (obj("new"), obj("update"))), done(0, 1), done(1, 0), done(1, 1, (obj("new"),)),
        end(0, events=(obj("end"),)), end(1, error="cam1: gone"), end(2, error="cam2: cannot open", began=False,
                                                                      events=(obj("end"),))])
    group._run(det, None, pictures=False)
    front, back, side = engine.cameras()
    # front's stream ended on its own: the run is over, so serve opens it again (docs/serve.md)
    assert (front.state, front.frames, front.events, front.path, front.error) == ("reconnecting", 2, 3, "copy", None)
    assert (back.state, back.frames, back.events, back.path, back.error) == ("failed", 2, 1, "copy", "cam1: gone")
    assert (side.state, side.frames, side.events, side.path) == ("failed", 0, 0, None)  # as no sink hears them


def test_the_path_shows_from_a_runs_first_frame_and_follows_a_restart_onto_another_path(config):
    engine = Engine(config.cameras, None, say=lambda msg: None)
    group = engine.groups[0]
    camera = group.cameras[0]
    for path in ("zero-copy", "software"):  # a run, then the one started again after a failure
        det = FakeDetector(path)
        det.path = path
        before = camera.path
        group._observe(det, begin(0))
        assert camera.current().state == "running" and camera.path == before
        group._observe(det, done(0))
        assert camera.path == path
        group._observe(det, end(0, error="cam0: dropped"))
        assert camera.current() == ("front", "failed", path, "cam0: dropped")


def test_health_flips_with_the_cameras_states(config):
    engine = Engine(config.cameras, None, say=lambda msg: None)
    cameras = engine.groups[0].cameras
    assert engine.healthy() == (True, "ok")  # starting
    for camera in cameras:
        camera.ended(InputOutcome(source=camera.source, error="gone"))
    assert engine.healthy() == (False, "every camera failed")
    cameras[1].frame(frame(0), Detections.empty())
    assert engine.healthy() == (True, "ok")
    assert Engine([], None, say=lambda msg: None).healthy() == (False, "no camera is enabled")


def test_the_state_alone_says_what_the_full_status_says_reconnecting_included(config):
    engine = Engine(config.cameras, None, say=lambda msg: None)
    det = FakeDetector("copy")
    det.path = "copy"
    for input in (0, 1):  # front and back open; side is still starting
        engine.groups[0]._observe(det, begin(input))
    det.damage[0] = DamageReport(live_report=LiveReport(reconnecting="the source dropped"))
    det.damage[1] = DamageReport(live_report=LiveReport())
    states = {s.name: s.state for s in engine.camera_states()}
    assert states == {"front": "reconnecting", "back": "running", "side": "starting"}
    assert states == {s.name: s.state for s in engine.cameras()}


def test_a_scrape_reads_the_publishers_counters_once_whatever_the_number_of_cameras(config):
    from prometheus_client import generate_latest

    publisher = FakePublisher()
    engine = Engine(config.cameras, publisher, say=lambda msg: None)
    text = generate_latest(metrics_registry(engine)).decode()
    assert publisher.calls == 1
    assert 'zerocopy_mqtt_dropped_total{kind="events"} 3.0' in text
    assert all(s.events_dropped == 3 for s in engine.cameras())
    assert publisher.calls == 2  # one more for the three cameras' statuses
    engine.healthy()
    engine.camera_states()
    assert publisher.calls == 2  # the state alone reads no counter


def test_without_a_publisher_no_event_is_dropped(config):
    engine = Engine(config.cameras, None, say=lambda msg: None)
    assert [s.events_dropped for s in engine.cameras()] == [0, 0, 0]


def test_the_state_log_says_running_at_the_first_frame_with_its_path(config):
    from zerocopy.cli.serve import StateLog

    engine = Engine(config.cameras, None, say=lambda msg: None)
    said: list[str] = []
    log = StateLog(engine, None, said.append)
    det = FakeDetector("copy")
    det.path = "copy"
    log.check()
    engine.groups[0]._observe(det, begin(0))
    log.check()  # opened, no frame yet: nothing said (its path is not known)
    assert said == []
    engine.groups[0]._observe(det, done(0))
    log.check()
    engine.groups[0]._observe(det, end(0, error="cam0: dropped"))
    log.check()
    assert said == ["camera front: running (copy path)", "camera front: failed: cam0: dropped"]


def interrupted(input: int = 0) -> InputEnd:
    return InputEnd(source=f"cam{input}", outcome=InputOutcome(source=f"cam{input}", interrupted=True), began=True,
                    input=input)


def test_a_stream_that_ends_and_is_opened_again_is_a_reconnection_not_a_stop(config):
    """An input that ends on its own (a network file's end) is opened again by serve when its run is over: the
    camera is "reconnecting" meanwhile, and each opening after the first counts as a reconnection."""
    engine = Engine(config.cameras[:1], None, say=lambda msg: None)
    group = engine.groups[0]
    for run in range(3):
        group._run(FakeDetector("software", [begin(0), done(run), end(0)]), None, pictures=False)
        front, = engine.cameras()
        assert (front.state, front.reconnects, front.error) == ("reconnecting", run, None)
    group._run(FakeDetector("software", [begin(0), done(3), interrupted(0)]), None, pictures=False)
    assert [(s.state, s.reconnects) for s in engine.cameras()] == [("stopped", 3)]  # serve's own stop


def test_a_stream_that_ends_while_its_group_goes_on_is_reconnecting_on_its_own(config):
    """In a group, an input that ended is opened again by itself (`pipeline.Reopen`): it is reconnecting at once,
    while the other camera runs on; a failed opening is failed, with its error, until it opens again."""
    engine = Engine(config.cameras[:2], None, say=lambda msg: None)
    group = engine.groups[0]
    det = FakeDetector("software")
    for event in (begin(0), begin(1), done(0, 0), done(0, 1), end(0)):
        group._observe(det, event)
    assert [(s.state, s.error) for s in engine.camera_states()] == [("reconnecting", None), ("running", None)]
    group._observe(det, end(1, error="cam1: gone"))
    assert [(s.state, s.error) for s in engine.camera_states()] == [("reconnecting", None), ("failed", "cam1: gone")]
    group._observe(det, begin(0))
    assert [s.state for s in engine.camera_states()] == ["running", "failed"]


def test_a_camera_that_cannot_be_opened_says_why_in_its_status_the_log_and_health(config):
    """Retried openings (`retry_open`) are shown: the camera's `error` (the last reason, redacted), one log line per
    reason, and /health unhealthy once no camera has ever opened."""
    from zerocopy.cli.serve import StateLog

    engine = Engine(config.cameras[:2], None, say=lambda msg: None)
    said: list[str] = []
    log = StateLog(engine, None, said.append)
    front, back = engine.groups[0].cameras
    front.cannot_open("connection refused")
    log.check()
    assert engine.camera_states()[0] == ("front", "starting", None, "cannot open yet: connection refused")
    assert engine.healthy() == (True, "ok")  # back is still starting, with no error yet
    back.cannot_open("server returned 404 Not Found")
    front.cannot_open("connection refused")  # the same reason again: not said again
    log.check()
    log.check()
    assert engine.healthy() == (False, "no camera is running: each failed or cannot be opened yet")
    assert said == ["camera front: cannot open yet: connection refused; retrying",
                    "camera back: cannot open yet: server returned 404 Not Found; retrying"]
    det = FakeDetector("copy")
    det.path = "copy"
    for event in (begin(0), done(0)):
        engine.groups[0]._observe(det, event)
    assert engine.camera_states()[0] == ("front", "running", "copy", None)
    assert engine.healthy() == (True, "ok")
    front.cannot_open("no answer")  # another group's opening of the same source: not this open input's
    assert engine.camera_states()[0].error is None
    engine.groups[0]._observe(det, end(0, error="cam0: gone"))
    front.cannot_open("connection refused")  # opened before: it is reconnecting
    log.check()
    assert engine.camera_states()[0] == ("front", "reconnecting", "copy", "cannot open yet: connection refused")
    assert said[-2:] == ["camera front: reconnecting", "camera front: cannot open yet: connection refused; retrying"]


def test_a_real_opening_retried_at_start_reaches_the_cameras_status_without_its_password(tmp_path):
    """A real decoder (retry_open) on a refused loopback port and on a 404 from a loopback HTTP server: each failed
    opening reaches the camera through `live.watch_open_failures`, matched by its real URL, shown redacted."""
    import contextlib
    import socket
    import threading
    from functools import partial
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    from zerocopy.decode.live import LivePolicy, OpenAbandoned, watch_open_failures
    from zerocopy.decode.pyav import PyAVDecoder

    with socket.socket() as s:  # a loopback port nobody listens on: connection refused
        s.bind(("127.0.0.1", 0))
        refused = s.getsockname()[1]
    quiet = type("Quiet", (SimpleHTTPRequestHandler,), {"log_message": lambda self, *a: None})
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(quiet, directory=str(tmp_path)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    urls = {"front": f"http://admin:s3cret-pw@127.0.0.1:{refused}/live",
            "back": f"http://127.0.0.1:{server.server_address[1]}/nothere.mkv"}
    config = parse_config({"cameras": {name: {"url": url, "model": "face"} for name, url in urls.items()}},
                          env={}, base=tmp_path)
    engine = Engine(config.cameras, None, say=lambda msg: None)
    unwatch = watch_open_failures(engine._open_failed)  # as `Engine.start` does
    stop = threading.Event()
    policy = LivePolicy(reconnect=True, retry_open=True, open_timeout=2.0, read_timeout=2.0)

    def opening(url: str) -> None:
        with contextlib.suppress(OpenAbandoned):  # stopped while retrying, as serve's stop does
            PyAVDecoder(url, policy=policy, stop=stop).close()

    threads = [threading.Thread(target=opening, args=(url,)) for url in urls.values()]
    try:
        for t in threads:
            t.start()
        wait_until(lambda: all(s.error for s in engine.camera_states()), 20, "both cameras' open errors")
    finally:
        stop.set()
        unwatch()
        for t in threads:
            t.join(10)
        server.shutdown()
        server.server_close()
    front, back = engine.camera_states()
    assert front.state == back.state == "starting"
    assert front.error.startswith("cannot open yet: ") and "refused" in front.error.lower(), front.error
    assert back.error.startswith("cannot open yet: ") and "404" in back.error, back.error
    assert "s3cret-pw" not in json.dumps([s.to_json() for s in engine.cameras()])


def test_the_engine_of_a_config_opens_its_publisher_and_closes_it_when_it_stops():
    """Issue 37, item 5: the publisher (and the Home Assistant announce) are the engine's, which closes them."""
    config = parse_config({"publish": {"url": "mqtt://127.0.0.1:9/zc"}, "homeassistant": {},
                           "cameras": {"front": {"url": "rtsp://front.lan/1", "model": "face"}}}, env={}, base=".")
    engine = Engine.of(config, say=lambda msg: None)
    assert engine.publisher is None  # not before `connect` (serve connects once its port is its own)
    assert engine.connect() is engine.publisher and engine.publisher.node == config.node
    assert "entities under homeassistant/" in engine.announce(config.homeassistant)
    assert engine.stop(timeout=1.0)
    assert engine.publisher._closed
    bare = Engine.of(parse_config({"cameras": {"front": {"url": "rtsp://front.lan/1", "model": "face"}}}, env={},
                                  base="."), say=lambda msg: None)
    assert bare.publisher is None and bare.announce(None) is None
    bare.stop(timeout=1.0)
