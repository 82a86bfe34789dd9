"""`zerocopy detect --publish` end to end: a live loopback camera (people walking across, paced at its real
rate) into a real Mosquitto, read back by a subscriber. Targets (issue 18): every pass is one object id from
`new` to `end` on `PREFIX/NAME/events`; `new` arrives ≤ 1.0 s (p95) after the object's first frame was
received; the availability topic says online, then offline; the report counts what was published."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from broker import MOSQUITTO, Broker
from conftest import wait_until
from livesource import LiveServer
from passes import write_passes_clip

pytestmark = [pytest.mark.timeout(120),
              pytest.mark.skipif(MOSQUITTO is None, reason="mosquitto is not installed "
                                 "(scripts/install-system-deps.sh installs it; .ci/run has it)")]

FPS = 15


class Received:
    """A subscriber that notes when each message arrived (time.time())."""

    def __init__(self, broker: Broker, topic: str = "#"):
        import paho.mqtt.client as mqtt

        self.messages: list[tuple[float, str, object, bool]] = []
        self._lock = threading.Lock()
        ready = threading.Event()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="zc-test-received")
        self.client.on_connect = lambda c, u, f, rc, p: c.subscribe(topic, qos=1)
        self.client.on_subscribe = lambda c, u, mid, rc, p: ready.set()
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", broker.port)
        self.client.loop_start()
        assert ready.wait(10), "the test subscriber could not subscribe"

    def _on_message(self, client, userdata, msg) -> None:
        text = msg.payload.decode()
        with self._lock:
            self.messages.append((time.time(), msg.topic, json.loads(text) if text.startswith("{") else text,
                                  bool(msg.retain)))

    def on(self, topic: str) -> list[tuple[float, object]]:
        with self._lock:
            return [(t, p) for t, tp, p, _ in self.messages if tp == topic]

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


@pytest.fixture(scope="module")
def walks_ts(tmp_path_factory):
    path = tmp_path_factory.mktemp("walks") / "walks.ts"
    return path, write_passes_clip(path, passes=3, walk_s=2.5, gap_s=1.5, fps=FPS, width=480, height=270, seed=5)


@pytest.mark.serial  # `new` within 1 s (p95) of the object's first frame is measured: load moves it
def test_events_of_a_live_camera_reach_the_broker_in_time(walks_ts, tmp_path):
    clip, passes = walks_ts
    report = tmp_path / "report.json"
    with Broker() as broker, LiveServer(clip, "http", lifetime=60) as camera:
        sub = Received(broker, "cams/#")
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "zerocopy", "detect", camera.url, "--path", "software",
                 "--publish", broker.url("cams"), "--name", "front", "--node", "box1", "--report", str(report),
                 "--quiet"], capture_output=True, text=True, timeout=90)
            assert proc.returncode == 0, proc.stderr
            wait_until(lambda: any(p == "offline" for _, p in sub.on("cams/available/box1")), timeout=10,
                       what="offline on the availability topic")
            events = sub.on("cams/front/events")
            availability = [p for _, p in sub.on("cams/available/box1")]
        finally:
            sub.close()
    assert availability[0] == "online" and availability[-1] == "offline"
    by_id: dict[str, list[tuple[float, dict]]] = {}
    for t, e in events:
        by_id.setdefault(e["id"], []).append((t, e))
    assert len(by_id) == len(passes), [e["type"] for _, e in events]
    delays = []
    for p, (_, seen) in zip(passes, sorted(by_id.items(), key=lambda kv: kv[1][0][1]["start_time"]), strict=True):
        kinds = [e["type"] for _, e in seen]
        assert kinds[0] == "new" and kinds[-1] == "end" and kinds.count("new") == kinds.count("end") == 1
        received, new = seen[0]
        assert {"type", "id", "label", "score", "box", "start_time", "before", "after"} <= set(new)
        assert new["camera"] == "front" and new["node"] == "box1" and new["label"] == "face"
        # the Unix time the pass's first frame came out of the decoder: the object's first sighting, moved
        # back by the media time between them
        first_frame = new["start_time"] - (new["first_pts"] - p.first / FPS)
        delays.append(received - first_frame)
    assert float(np.percentile(delays, 95)) <= 1.0, delays  # measured: 0.2–0.3 s
    r = json.loads(report.read_text())
    assert r["publish"]["published"] >= len(events) and r["publish"]["dropped"] == 0
    assert r["tracking"]["objects"] == len(passes)


def test_a_broker_that_is_not_there_is_said_and_fails_the_run(tmp_path, clips):
    """No broker on the port: the run is not held up, and the summary says what was lost and why; with nothing
    delivered at all the exit code is 1 (a script must not take the events for sent)."""
    from broker import free_port

    from zerocopy.samples import ClipSpec

    clip, _ = clips("publish-nobroker.mp4", ClipSpec(frames=20))
    url = f"mqtt://127.0.0.1:{free_port()}/x"
    proc = subprocess.run([sys.executable, "-m", "zerocopy", "detect", str(clip), "--path", "software",
                           "--publish", url, "--min-hits", "2"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    # the object's `new` and `end`, and the retained counts of faces in view (1, then 0): none delivered
    assert re.search(rf"published 0 message\(s\) to {re.escape(url)}, ([4-9]|\d\d) dropped", last), proc.stderr
    assert "Connection refused" in last, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_peer_that_never_answers_mqtt_is_said_and_fails_the_run(clips):
    """Issue 26, item 9: a port that takes the TCP connection and never answers CONNECT (not a broker; or a TLS
    port): the summary says why the events were dropped, not only how many."""
    import socket

    from zerocopy.samples import ClipSpec

    clip, _ = clips("publish-nobroker.mp4", ClipSpec(frames=20))
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"mqtt://127.0.0.1:{silent.getsockname()[1]}/x"
        proc = subprocess.run([sys.executable, "-m", "zerocopy", "detect", str(clip), "--path", "software",
                               "--publish", url, "--min-hits", "2"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert re.search(rf"published 0 message\(s\) to {re.escape(url)}, ([4-9]|\d\d) dropped \(last error: no MQTT "
                     r"answer: 127\.0\.0\.1:", last), proc.stderr
    assert "not an MQTT broker, or a TLS port (use mqtts://)?)" in last and "Traceback" not in proc.stderr


@pytest.mark.serial  # the live run's latency through the outage (p95 < 1 s) is measured: load moves it
def test_a_ten_second_broker_outage_mid_run(tmp_path):
    """The issue's target at the level of a run: the broker is away for 10 s while a live camera is being
    detected. The run never waits for it (every frame, latency as without it), reconnects, the events of the
    outage and after it arrive (a persistent subscriber, as a real consumer keeps), and every event is counted
    once in the report."""
    from broker import Subscriber

    clip = tmp_path / "walks.ts"
    passes = write_passes_clip(clip, passes=5, walk_s=2.5, gap_s=2.0, fps=FPS, width=480, height=270, seed=7)
    report = tmp_path / "report.json"
    broker = Broker(persistent=True)
    try:
        broker.start()
        Subscriber(broker, "cams/#", session="zc-test-run-outage").close()  # the session keeps what comes meanwhile
        with LiveServer(clip, "http", lifetime=90) as camera:
            with Subscriber(broker, "cams/available/#") as watch:  # the run's `online`: it has connected
                proc = subprocess.Popen(
                    [sys.executable, "-m", "zerocopy", "detect", camera.url, "--path", "software", "--publish",
                     broker.url("cams"), "--name", "door", "--report", str(report), "--quiet"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                wait_until(lambda: "online" in watch.on(""), 60, "the run to connect to the broker")
            time.sleep(1.0)  # a second of the run with the broker there (the camera's pace, not a wait)
            broker.stop()
            time.sleep(10.0)  # the outage
            broker.start()
            _, err = proc.communicate(timeout=90)
        assert proc.returncode == 0, err
        r = json.loads(report.read_text())
        assert r["frames"] == r["inputs"][0]["frames"] > 0 and r["latency"]["p95_ms"] < 1000, r["latency"]
        pub = r["publish"]
        assert pub["reconnects"] >= 1 and pub["errors"] >= 1 and pub["dropped"] == 0 and pub["queued"] == 0, pub
        with Subscriber(broker, "cams/#", session="zc-test-run-outage") as sub:
            def pairs() -> set[tuple[str, str]]:  # QoS 1 is at least once: a resend after the outage may repeat one
                return {(e["id"], e["type"]) for e in sub.on("door/events")}

            wait_until(lambda: len(pairs()) >= 2 * len(passes), 30, "every event")
            got = pairs()
            counts = sub.on("door/face")  # the retained count of faces in view, as it changed
    finally:
        broker.close()
    ids = {i for i, _ in got}
    assert len(ids) == len(passes) and len(got) + len(counts) >= pub["published"] >= len(got), sorted(got)
    assert counts and int(counts[-1]) == 0
    assert got == {(i, kind) for i in ids for kind in ("new", "end")}  # each object from `new` to `end`
