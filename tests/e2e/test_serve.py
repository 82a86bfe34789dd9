"""`zerocopy serve CONFIG.toml` as a real process: loopback live cameras on the `face` model, a real
mosquitto, the HTTP endpoints while it runs, a camera whose source drops and comes back while the other
goes on, SIGTERM, a bad config, a password that never shows, and two boxes publishing into one broker."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest
from broker import MOSQUITTO, Broker, Subscriber
from cameraclips import Walk, write_camera_clip
from conftest import wait_until
from livesource import LiveServer, make_ts_clip
from PIL import Image
from prometheus_client.parser import text_string_to_metric_families

pytestmark = [pytest.mark.timeout(240),
              pytest.mark.skipif(MOSQUITTO is None, reason="mosquitto is not installed (install-system-deps.sh)")]

SECRET = "cam-pw-7f3a9"  # the camera password, given through the environment only
# serve aims at 2 s from SIGTERM/Ctrl-C to exit (measured 0.2-0.5 s here); 6 s leaves room for a loaded machine
# while a stop that waited for a reconnection back-off (up to 8 s) or a run that never ended would exceed it
STOP_BOUND_S = 6.0


@pytest.fixture(scope="module")
def clip(tmp_path_factory, face_model_path) -> Path:
    """A 4 s clip of a real face photo (served in a loop); the face model pulled before any process needs it."""
    return make_ts_clip(tmp_path_factory.mktemp("serve") / "face.ts", seconds=4.0, fps=25, width=320, height=180)


def live(clip: Path) -> LiveServer:
    return LiveServer(clip, "http", lifetime=600, loops=1000)


class Serve:
    """`zerocopy serve` on a config written from `text`: its stderr collected, its HTTP address read from it."""

    def __init__(self, tmp_path: Path, text: str, env: dict[str, str] | None = None, name: str = "serve.toml"):
        self.config = tmp_path / name
        self.config.write_text(text)
        self.err: list[str] = []
        self.proc = subprocess.Popen([sys.executable, "-m", "zerocopy", "serve", str(self.config)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, "STATE_DIRECTORY": str(tmp_path / "state"),  # its events
                                          **(env or {})})
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.out = ""
        self.address = ""

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.err.append(line.rstrip("\n"))

    def started(self, timeout: float = 60.0) -> Serve:
        def found() -> bool:
            assert self.proc.poll() is None, f"serve exited with {self.proc.returncode}: {self.err}"
            m = next((re.search(r"status on http://(\S+)/api/cameras", line) for line in self.err
                      if "status on http://" in line), None)
            self.address = m.group(1) if m else ""
            return bool(self.address)
        wait_until(found, timeout, "serve's status address")
        return self

    def until(self, condition: Callable[[], object], timeout: float, what: str) -> None:
        """`wait_until`, whose failure also shows the last lines serve logged (what it was doing, or not)."""
        try:
            wait_until(condition, timeout, what)
        except AssertionError as e:
            raise AssertionError(f"{e}; serve's log ends: {self.err[-30:]}") from None

    def get(self, path: str) -> tuple[int, str, bytes]:
        try:
            with urllib.request.urlopen(f"http://{self.address}{path}", timeout=10) as r:
                return r.status, r.headers["Content-Type"], r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers["Content-Type"], e.read()

    def cameras(self) -> dict[str, dict]:
        return {c["name"]: c for c in json.loads(self.get("/api/cameras")[2])}

    def metrics(self) -> dict[tuple, float]:
        samples = {}
        for family in text_string_to_metric_families(self.get("/metrics")[2].decode()):
            for s in family.samples:
                samples[(s.name, s.labels.get("camera"))] = s.value
        return samples

    def terminate(self) -> float:
        """SIGTERM; the seconds from the signal to the process's exit."""
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(30)  # stdout stays nearly empty: serve writes to stderr, which the reader thread drains
        elapsed = time.monotonic() - t0
        assert self.proc.stdout is not None
        self.out = self.proc.stdout.read()
        self._reader.join(5)
        return elapsed

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def config(broker: Broker, node: str, cameras: dict[str, str], prefix: str = "zc") -> str:
    text = f'node = "{node}"\n[publish]\nurl = "{broker.url(prefix)}"\n[http]\nlisten = "127.0.0.1:0"\n' \
           '[defaults]\nmodel = "face"\ndetect_fps = 5\n'
    for name, url in cameras.items():
        text += f'[cameras.{name}]\nurl = "{url}"\n'
    return text


def with_password(url: str) -> str:
    """The URL with a user and a `${CAM_PW}` password (the loopback server ignores them)."""
    return url.replace("http://", "http://viewer:${CAM_PW}@")


# what begins each line serve writes, unless the journal reads it: the time, ISO 8601 with its offset
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d ")


def unstamped(lines: list[str]) -> list[str]:
    """`lines` without the time that begins each."""
    return [STAMP.sub("", line, count=1) for line in lines]


def news(sub: Subscriber, topic: str) -> list[dict]:
    return [p for p in sub.on(topic) if isinstance(p, dict) and p.get("type") == "new"]


def test_serve_runs_cameras_reconnects_one_reports_status_and_stops_on_sigterm(tmp_path, clip):
    with Broker() as broker, live(clip) as front, live(clip) as back, Subscriber(broker, "zc/#") as sub:
        serve = Serve(tmp_path, config(broker, "box-a", {"front": with_password(front.url), "back": back.url}),
                      env={"CAM_PW": SECRET})
        try:
            serve.started()
            started = ("serving 2 camera(s) in 1 group(s) (a model is compiled once, and once more for its regions "
                       "around motion) as node box-a")
            assert any(started in line for line in serve.err)
            assert f"zerocopy: HTTP on {serve.address}: loopback only, no token" in unstamped(serve.err)  # who may ask
            # events of both cameras, the box online
            wait_until(lambda: news(sub, "zc/front/events") and news(sub, "zc/back/events"), 90,
                       "a `new` event from each camera")
            assert sub.on("zc/available/box-a")[0] == "online"
            event = news(sub, "zc/front/events")[0]
            assert (event["node"], event["camera"], event["label"]) == ("box-a", "front", "face")
            assert {"id", "score", "box", "start_time", "before", "after"} <= set(event)
            assert 500 <= len(json.dumps(event, separators=(",", ":"))) <= 2000  # docs/scale-out.md: ~1.1 KB

            # the status while it runs
            cams = serve.cameras()
            assert set(cams) == {"front", "back"}
            assert all(c["state"] == "running" and c["frames"] > 0 and c["model"] == "face" for c in cams.values())
            assert cams["front"]["source"].startswith("http://viewer:***@127.0.0.1:")
            assert cams["front"]["path"] in ("software", "copy", "zero-copy")
            status, _, body = serve.get("/health")
            assert status == 200 and json.loads(body)["status"] == "ok"
            status, ctype, jpeg = serve.get("/api/cameras/front/latest.jpg")
            assert status == 200 and ctype == "image/jpeg" and Image.open(io.BytesIO(jpeg)).size == (320, 180)
            metrics = serve.metrics()
            assert metrics[("zerocopy_camera_frames_total", "front")] > 0
            assert metrics[("zerocopy_camera_inference_fps", "back")] >= 0
            assert metrics[("zerocopy_mqtt_connected", None)] == 1
            assert metrics[("process_resident_memory_bytes", None)] > 0

            # front's source drops: it reconnects on its own while back goes on
            front.kill()
            wait_until(lambda: serve.cameras()["front"]["state"] == "reconnecting", 30, "front to be reconnecting")
            back_frames = serve.cameras()["back"]["frames"]
            wait_until(lambda: serve.cameras()["back"]["frames"] > back_frames + 25, 30, "back to go on meanwhile")
            front.restart()
            wait_until(lambda: serve.metrics().get(("zerocopy_camera_reconnects_total", "front"), 0) >= 1, 60,
                       "front's reconnection in /metrics")
            frames = serve.cameras()["front"]["frames"]
            wait_until(lambda: serve.cameras()["front"]["frames"] > frames + 25, 30, "front's frames again")
            cams = serve.cameras()
            assert cams["front"]["state"] == "running" and cams["front"]["reconnects"] >= 1
            assert cams["back"]["reconnects"] == 0

            bodies = [serve.get(p)[2] for p in ("/api/cameras", "/metrics", "/health", "/api/cameras/front")]
            elapsed = serve.terminate()
        finally:
            serve.kill()
        assert serve.proc.returncode == 143, serve.err
        assert elapsed < STOP_BOUND_S, f"serve took {elapsed:.1f} s to stop"  # see STOP_BOUND_S
        wait_until(lambda: sub.on("zc/available/box-a")[-1:] == ["offline"], 10, "`offline` published")
        assert not any("Traceback" in line for line in serve.err), serve.err
        # the log says what /metrics shows: the drop and the return, the broker's connection
        said = [line for line in serve.err if "camera front:" in line]
        assert any(line.endswith("front: reconnecting") for line in said), serve.err
        assert any(line.endswith("front: running") for line in said[1:]), serve.err
        assert any("broker mqtt://" in line and line.endswith("connected") for line in serve.err), serve.err
        # every open object was ended before the exit
        for camera in ("front", "back"):
            events = [p for p in sub.on(f"zc/{camera}/events") if isinstance(p, dict)]
            ids_new = {p["id"] for p in events if p["type"] == "new"}
            ids_end = {p["id"] for p in events if p["type"] == "end"}
            assert ids_new and ids_new == ids_end, camera
        # the camera password was never shown: not in the output, the HTTP answers nor the broker's messages
        seen = "\n".join(serve.err) + serve.out + b"".join(bodies).decode() + json.dumps(sub.messages)
        assert SECRET not in seen


@dataclass
class TwoCameras:
    """What serve showed of a running loopback camera and of one whose port refuses connections, once the first had
    published a `new` event and the second's open error showed."""

    cams: dict[str, dict]  # /api/cameras
    events: list[dict]  # the running camera's published events
    seen: str  # the log, the output, the bodies of /api/*, /metrics and /health, every published message
    url: str  # the running camera's loopback URL, as served
    refused: int  # the other camera's port


def two_cameras(tmp_path: Path, clip: Path, names: tuple[str, str], urls: Callable[[str, int], tuple[str, str]],
                env: dict[str, str] | None = None) -> TwoCameras:
    """serve on two cameras named `names`: `urls(live URL, refused port)` gives their URLs, the first running on a
    loopback live camera, the second on a port bound and never listening (every connection refused)."""
    running, failing = names
    with socket.socket() as held, Broker() as broker, live(clip) as cam, Subscriber(broker, "zc/#") as sub:
        held.bind(("127.0.0.1", 0))  # bound, never listening: the second camera's connections are refused
        refused = held.getsockname()[1]
        serve = Serve(tmp_path, config(broker, f"box-{running}", dict(zip(names, urls(cam.url, refused), strict=True))),
                      env=env).started()
        try:
            wait_until(lambda: news(sub, f"zc/{running}/events"), 90, f"a `new` event from {running}")
            wait_until(lambda: serve.cameras()[failing]["error"], 60, f"{failing}'s open error")
            cams = serve.cameras()
            bodies = [serve.get(p)[2] for p in ("/api/cameras", f"/api/cameras/{running}", f"/api/cameras/{failing}",
                                                "/metrics", "/health")]
            elapsed = serve.terminate()
        finally:
            serve.kill()
    assert serve.proc.returncode == 143 and elapsed < STOP_BOUND_S, serve.err
    assert cams[failing]["error"].startswith("cannot open yet: "), cams
    assert any(f"camera {failing}: cannot open yet: " in line for line in serve.err), serve.err
    return TwoCameras(cams, [p for p in sub.on(f"zc/{running}/events") if isinstance(p, dict)],
                      "\n".join(serve.err) + serve.out + b"".join(bodies).decode() + json.dumps(sub.messages), cam.url,
                      refused)


def test_secrets_filled_into_a_path_or_a_query_never_show(tmp_path, clip):
    """Issue 26, item 5: `${…}` values filled into a camera URL's path or query (not only user:password) are
    masked in `/api/*`, `/metrics`, `/health`, every published event's `source` and the log: a running camera's
    and one that cannot be opened (whose errors quote its URL)."""
    secrets = {"CAM_PATH": "p4th-s3cret-7c1e9", "CAM_CHANNEL": "ch4n-s3cret-5b2d0", "CAM_TOKEN": "t0ken-s3cret-8e6f3"}
    shown = two_cameras(tmp_path, clip, ("front", "gate"), lambda url, refused: (
        url.replace("/live.ts", "/${CAM_PATH}/live.ts?channel=${CAM_CHANNEL}"),  # the server ignores both
        f"rtsp://127.0.0.1:{refused}/${{CAM_PATH}}/stream?token=${{CAM_TOKEN}}"), env=secrets)
    shown_front = shown.url.replace("/live.ts", "/***/live.ts?channel=***")
    assert shown.cams["front"]["source"] == shown_front, shown.cams
    assert shown.cams["gate"]["source"] == f"rtsp://127.0.0.1:{shown.refused}/***/stream?token=***", shown.cams
    assert shown.events and {e["source"] for e in shown.events} == {shown_front}
    assert [value for value in secrets.values() if value in shown.seen] == []


def test_ctrl_c_while_the_only_camera_is_reconnecting_stops_at_once(tmp_path, clip):
    """The stop does not wait for the reconnection back-off of a camera whose source is down."""
    with Broker() as broker, live(clip) as cam, Subscriber(broker, "zc/#") as sub:
        serve = Serve(tmp_path, config(broker, "box-c", {"only": cam.url})).started()
        try:
            wait_until(lambda: serve.cameras()["only"]["frames"] > 0, 60, "the camera's first frames")
            cam.kill()
            wait_until(lambda: serve.cameras()["only"]["state"] == "reconnecting", 30, "the camera reconnecting")
            t0 = time.monotonic()
            serve.proc.send_signal(signal.SIGINT)
            serve.proc.wait(30)
            elapsed = time.monotonic() - t0
        finally:
            serve.kill()
        assert serve.proc.returncode == 130 and elapsed < STOP_BOUND_S, (elapsed, serve.err)  # see STOP_BOUND_S
        wait_until(lambda: sub.on("zc/available/box-c")[-1:] == ["offline"], 10, "`offline` published")


def test_a_bad_config_exits_2_with_one_line_per_problem_and_no_secret(tmp_path):
    serve = Serve(tmp_path, """
[http]
listen = "localhost:http"
[cameras.front]
url = "rtsp://admin:${CAM_PW}@front.lan/1"
detect_fps = -5
model = "${CAM_PW}"
[cameras.back]
url = "rtsp://back.lan/${MISSING_VAR}"
""", env={"CAM_PW": SECRET})
    try:
        serve.proc.wait(60)
        serve._reader.join(5)
    finally:
        serve.kill()
    assert serve.proc.returncode == 2
    prefix = f"zerocopy: {serve.config}: "
    assert all(STAMP.match(line) and line.startswith(prefix, STAMP.match(line).end()) for line in serve.err), serve.err
    assert [line[len(prefix):].split(":")[0] for line in unstamped(serve.err)] == [
        "[cameras.back] url", "[http] listen", "[cameras.front] detect_fps", "[cameras.front] model"]
    assert "MISSING_VAR is not set" in serve.err[0]
    assert SECRET not in "\n".join(serve.err)


def test_two_boxes_publish_into_one_broker_with_unique_node_camera_id_triples(tmp_path, clip):
    """Scale-out (docs/scale-out.md): each box its own config and node name, the broker shared; a
    subscriber sees both boxes' events, and (node, camera, id) names each object once."""
    with Broker() as broker, live(clip) as a, live(clip) as b, Subscriber(broker, "zc/#") as sub:
        boxes = [Serve(tmp_path, config(broker, "box-1", {"door": a.url, "yard": b.url}), name="box1.toml"),
                 Serve(tmp_path, config(broker, "box-2", {"door": b.url, "gate": a.url}), name="box2.toml")]
        try:
            for box in boxes:
                box.started()

            def both_boxes() -> bool:
                nodes = {(p["node"], p["camera"]) for p in news(sub, "/events")}
                return {("box-1", "door"), ("box-1", "yard"), ("box-2", "door"), ("box-2", "gate")} <= nodes
            wait_until(both_boxes, 120, "`new` events of every camera of both boxes")
            for box in boxes:
                assert box.terminate() < STOP_BOUND_S and box.proc.returncode == 143, box.err
        finally:
            for box in boxes:
                box.kill()
        wait_until(lambda: sub.on("zc/available/box-1")[-1:] == sub.on("zc/available/box-2")[-1:] == ["offline"],
                   10, "both boxes `offline`")
    events = [(t, p) for t, p, _ in sub.messages if t.endswith("/events") and isinstance(p, dict)]
    for topic, p in events:  # each box's cameras on their own topics: PREFIX/CAMERA/events
        assert topic == f"zc/{p['camera']}/events"
    new = [(p["node"], p["camera"], p["id"]) for _, p in events if p["type"] == "new"]
    assert len(new) == len(set(new)) and len({i for _, _, i in new}) == len(new)  # and ids unique across boxes
    # `door` is a camera of both boxes: only the node tells their objects apart, and it does
    doors = {(n, i) for n, c, i in new if c == "door"}
    assert {n for n, _ in doors} == {"box-1", "box-2"}


@pytest.fixture
def files(tmp_path):
    """A loopback HTTP server of `tmp_path/www` (the standard library's: a file is sent whole, with its length)."""
    from functools import partial
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    www = tmp_path / "www"
    www.mkdir()
    quiet = type("Quiet", (SimpleHTTPRequestHandler,), {"log_message": lambda self, *a: None})
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(quiet, directory=str(www)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield www, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_cameras_that_cannot_be_opened_say_why_and_are_retried(tmp_path, files):
    """A refused port (with a password in its URL) and a 404: each camera's `error` holds why (redacted), the log
    says it once per reason, they stay `starting` and are retried; /health is 503 (no camera has opened)."""
    _, base = files
    # bound and never listening for the whole test: connections are refused, and no server (the broker) can take
    # the port meanwhile, as one did once a closed socket's port was handed out again
    with socket.socket() as held, Broker() as broker:
        held.bind(("127.0.0.1", 0))
        refused = held.getsockname()[1]
        serve = Serve(tmp_path, config(broker, "box-d", {"front": f"rtsp://admin:${{CAM_PW}}@127.0.0.1:{refused}/live",
                                                         "back": f"{base}/nothere.mkv"}), env={"CAM_PW": SECRET})
        try:
            serve.started()
            wait_until(lambda: all(c["error"] for c in serve.cameras().values()), 60, "both cameras' open errors")
            time.sleep(3)  # a few more attempts (0.5 s, 1 s, 2 s back-off)
            cams = serve.cameras()
            status, _, body = serve.get("/health")
            elapsed = serve.terminate()
        finally:
            serve.kill()
    assert serve.proc.returncode == 143 and elapsed < STOP_BOUND_S, serve.err
    assert {c["state"] for c in cams.values()} == {"starting"}
    assert cams["front"]["error"].startswith("cannot open yet: ") and "refused" in cams["front"]["error"].lower()
    assert cams["back"]["error"].startswith("cannot open yet: ") and "404" in cams["back"]["error"]
    assert status == 503 and json.loads(body)["status"] == "unhealthy", body
    for name in ("front", "back"):
        said = [line for line in serve.err if f"camera {name}: cannot open yet: " in line]
        assert said and all(line.endswith("; retrying") for line in said), serve.err
        assert len(said) == len(set(said)), serve.err  # once per reason, not once per attempt
    assert SECRET not in "\n".join(serve.err) + json.dumps(cams)


def test_a_network_file_that_ends_is_reconnected_and_counted_not_stopped(tmp_path, files, clip):
    """A camera whose stream has an end (an MKV of known length over HTTP): at its end serve opens it again;
    that is a reconnection (`reconnecting`, counted), never `stopped`. Beside it, `yard` is a quiet camera-like
    stream (a keyframe every 2 s, noise) where someone walks by: its decode gate leaves frames undecoded, and its
    regions around motion are counted (issues 39 and 40: /metrics)."""
    import av

    www, base = files
    with av.open(str(clip)) as src, av.open(str(www / "cam.mkv"), "w") as out:  # the 4 s clip, with a duration
        stream = out.add_stream_from_template(src.streams.video[0])
        for packet in src.demux(src.streams.video[0]):
            if packet.dts is not None:
                packet.stream = stream
                out.mux(packet)
    write_camera_clip(www / "yard.mkv", 15.0, (Walk(11.0),), seed=5)  # quiet until 11 s: the gate calibrates first
    with Broker() as broker:
        serve = Serve(tmp_path, config(broker, "box-e", {"front": f"{base}/cam.mkv",
                                                         "yard": f"{base}/yard.mkv"})).started()
        try:
            seen: set[str] = set()

            def reopened() -> bool:
                front = serve.cameras()["front"]
                seen.add(front["state"])
                return front["reconnects"] >= 2
            wait_until(reopened, 90, "two reopenings of the ended stream, counted")
            serve.until(lambda: serve.cameras()["yard"]["reconnects"] >= 1, 90, "yard's stream read to its end")
            metrics = serve.metrics()
            elapsed = serve.terminate()
        finally:
            serve.kill()
    assert serve.proc.returncode == 143 and elapsed < STOP_BOUND_S, serve.err
    assert "stopped" not in seen and "failed" not in seen, seen
    assert metrics[("zerocopy_camera_reconnects_total", "front")] >= 2
    # the detector and its copy for the regions around motion, each once: reopened without compiling again
    assert metrics[("zerocopy_model_compiles_total", None)] == 2
    read, decoded = (metrics[(f"zerocopy_camera_decode_gate_{n}_total", "yard")] for n in ("frames", "decoded_frames"))
    assert 0 < decoded < read and metrics[("zerocopy_camera_decode_gate_off", "yard")] == 0.0, metrics
    assert metrics[("zerocopy_camera_decode_gate_catch_ups_total", "yard")] >= 1
    assert metrics[("zerocopy_camera_regions_total", "yard")] > 0  # squares around the walker
    assert 0 < metrics[("zerocopy_camera_region_cover_ratio", "yard")] < 1
    assert metrics[("zerocopy_camera_decode_gate_frames_total", "front")] > 0  # (calibrating, its 4 s each time)
    said = [line for line in serve.err if "camera front:" in line]
    assert any(line.endswith("front: reconnecting") for line in said), serve.err
    assert not any("stopped" in line for line in said), serve.err


def test_eight_viewers_at_once_get_pictures_and_serve_lives_on(tmp_path, clip):
    """8 requests of latest.jpg at once, round after round (two at a time once killed serve with SIGSEGV: PyAV's
    `to_image()` on one frame from several threads): each gets a whole JPEG, serve keeps running."""
    viewers, rounds = 8, 25
    with Broker() as broker, live(clip) as front:
        serve = Serve(tmp_path, config(broker, "box-v", {"front": front.url})).started()
        try:
            wait_until(lambda: serve.get("/api/cameras/front/latest.jpg")[0] == 200, 90, "the camera's first picture")
            failures: list[str] = []

            def view() -> None:
                for _ in range(rounds):
                    status, ctype, body = serve.get("/api/cameras/front/latest.jpg")
                    if status != 200 or ctype != "image/jpeg":
                        failures.append(f"{status} {ctype}")
                        continue
                    Image.open(io.BytesIO(body)).verify()  # a whole JPEG

            threads = [threading.Thread(target=view) for _ in range(viewers)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
            assert serve.proc.poll() is None, f"serve died ({serve.proc.returncode}): {serve.err[-5:]}"
            assert not failures, failures[:5]
            assert serve.cameras()["front"]["state"] == "running"
            elapsed = serve.terminate()
        finally:
            serve.kill()
    assert serve.proc.returncode == 143 and elapsed < STOP_BOUND_S, serve.err


@pytest.mark.serial  # its pace (about 25 a second, at most 30) is measured: load beside it bursts it
def test_a_file_with_loop_is_a_camera_for_trying_serve(tmp_path, clip):
    """`[cameras.desk] url = "clip" loop = true`: said at start, paced as live, opened again at its end (no broker)."""
    text = f'[http]\nlisten = "127.0.0.1:0"\n[cameras.desk]\nurl = "{clip.name}"\nloop = true\nmodel = "face"\n'
    (tmp_path / clip.name).write_bytes(clip.read_bytes())  # relative to the config's folder
    serve = Serve(tmp_path, text).started()
    try:
        wait_until(lambda: serve.cameras()["desk"]["reconnects"] >= 1, 90, "the file played again from its start")
        desk = serve.cameras()["desk"]
        elapsed = serve.terminate()
    finally:
        serve.kill()
    assert serve.proc.returncode == 143 and elapsed < STOP_BOUND_S, serve.err
    assert any("camera desk: the file" in line and "played in a loop and paced as live" in line for line in serve.err)
    assert desk["state"] in ("running", "reconnecting") and desk["fps"] <= 30, desk  # paced: about 25, not hundreds


def test_secrets_in_foscam_and_xmeye_urls_never_show(tmp_path, clip):
    """Issue 36: a URL's secrets are masked by their shape, not by a list of key names: Foscam's `?loginuse=…&
    loginpas=…` and XMEye's `/user=…_password=…_channel=1` never show in `/api/*`, the log, the published events'
    `source` nor the store, while `channel` stays readable; the real URL is what gets opened."""
    secret = "Fq9-loginpas-31d7"
    shown = two_cameras(tmp_path, clip, ("foscam", "xmeye"), lambda url, refused: (
        f"{url}?loginuse=admin&loginpas={secret}&channel=1",  # the loopback server ignores the query
        f"rtsp://127.0.0.1:{refused}/user=admin_password={secret}_channel=1_stream=0.sdp"))
    assert shown.cams["foscam"]["source"] == f"{shown.url}?loginuse=***&loginpas=***&channel=1", shown.cams
    assert shown.cams["xmeye"]["source"] == \
        f"rtsp://127.0.0.1:{shown.refused}/user=***_password=***_channel=1_stream=0.sdp", shown.cams
    assert shown.events and {e["source"] for e in shown.events} == {shown.cams["foscam"]["source"]}
    stored = b"".join(p.read_bytes() for p in (tmp_path / "state").rglob("*") if p.is_file())
    assert stored and secret not in shown.seen and secret.encode() not in stored  # (the events kept in the store)


def test_labels_that_are_no_topic_level_are_slugged_into_their_topics(tmp_path, clip):
    """Issue 36: labels come from a model's labels file; `front/door` and `snap#` went into topics as they were (serve
    exited at start on the wildcard). Each is made one topic level (`publish.topics.topic_label`): serve runs, and
    the counts, the snapshots and Home Assistant's configs all use `front_door` and `snap`."""
    (tmp_path / "door.txt").write_text("front/door\n")
    (tmp_path / "snap.txt").write_text("snap#\n")
    (tmp_path / clip.name).write_bytes(clip.read_bytes())  # each camera a looped file (relative to the config)
    with Broker() as broker, Subscriber(broker, "#") as sub:
        text = config(broker, "box-l", {"door": clip.name, "snap": clip.name}).replace(
            "[cameras.door]\n", '[cameras.door]\nlabels = "door.txt"\nloop = true\nmotion = false\n').replace(
            "[cameras.snap]\n", '[cameras.snap]\nlabels = "snap.txt"\nloop = true\nmotion = false\n') + \
            "[homeassistant]\n"  # (a still photo: with the motion gate, a 4 s loop could end before 3 inferences)
        serve = Serve(tmp_path, text).started()
        try:
            serve.until(lambda: 1 in sub.on("zc/door/front_door") and 1 in sub.on("zc/snap/snap"), 90,
                        "a face counted on each slugged count topic")
            serve.until(lambda: sub.on("zc/door/front_door/snapshot"), 90, "door's snapshot on its slugged topic")
            running = {name: c["state"] for name, c in serve.cameras().items()}
            elapsed = serve.terminate()
        finally:
            serve.kill()
    assert serve.proc.returncode == 143 and elapsed < STOP_BOUND_S, serve.err
    assert running == {"door": "running", "snap": "running"}, (running, serve.err)
    configs = [p for t, p, _ in sub.messages if t.startswith("homeassistant/") and isinstance(p, dict)]
    read = {c.get("state_topic") for c in configs} | {c.get("image_topic") for c in configs}
    assert {"zc/door/front_door", "zc/snap/snap", "zc/door/front_door/snapshot", "zc/snap/snap/snapshot"} <= read
    events = [p for p in sub.on("zc/door/events") if isinstance(p, dict)]
    assert events and not [t for t, _, _ in sub.messages if "front/door" in t or "door/front/" in t]


def looped_config(tmp_path: Path, clip: Path) -> str:
    """A config of one camera, `desk`: `clip` played in a loop (copied beside the config), no broker."""
    (tmp_path / clip.name).write_bytes(clip.read_bytes())
    return f'[http]\nlisten = "127.0.0.1:0"\n[cameras.desk]\nurl = "{clip.name}"\nloop = true\nmodel = "face"\n'


def test_every_log_line_has_its_time_and_a_looped_file_says_its_restart_once(tmp_path, face_model_path):
    """Issue 36: serve's log is read later: each line begins with the time (ISO 8601 with its offset), and a looped
    file camera played again and again says so once (it said `reconnecting` and `running` at every loop)."""
    short = make_ts_clip(tmp_path / "short.ts", seconds=1.0, fps=25, width=320, height=180)
    serve = Serve(tmp_path, looped_config(tmp_path, short)).started()
    try:
        wait_until(lambda: serve.cameras()["desk"]["reconnects"] >= 3, 90, "the file played three more times")
        elapsed = serve.terminate()
    finally:
        serve.kill()
    assert serve.proc.returncode == 143 and elapsed < STOP_BOUND_S, serve.err
    desk = [line for line in unstamped(serve.err) if line.startswith("zerocopy: camera desk: ")]
    assert [line for line in desk if "played again" in line or "reconnecting" in line or line.endswith(": running")] \
        == ["zerocopy: camera desk: the file ended: it is played again from its start at each end (said once; each "
            "time counts as a reconnection in /api/cameras and /metrics)"], desk
    assert serve.err and [line for line in serve.err if not STAMP.match(line)] == []
    stamps = [datetime.fromisoformat(line.split(" ")[0]) for line in serve.err]
    assert all(s.utcoffset() is not None for s in stamps) and stamps == sorted(stamps)


def test_under_the_journal_no_line_has_a_time_of_its_own(tmp_path, face_model_path, clip):
    """systemd's journal stamps each line itself: serve, whose stderr is the stream `$JOURNAL_STREAM` names (device and
    inode, as systemd sets it), writes none."""
    config = tmp_path / "serve.toml"
    config.write_text(looped_config(tmp_path, clip))
    with open(tmp_path / "journal", "w") as journal:
        st = os.fstat(journal.fileno())
        proc = subprocess.Popen([sys.executable, "-m", "zerocopy", "serve", str(config)], stdout=subprocess.DEVNULL,
                                stderr=journal, env={**os.environ, "JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}",
                                                     "STATE_DIRECTORY": str(tmp_path / "state")})
    try:
        wait_until(lambda: "camera desk: running" in (tmp_path / "journal").read_text(), 60, "the camera running")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 143
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    lines = (tmp_path / "journal").read_text().splitlines()
    assert lines and all(line.startswith("zerocopy: ") for line in lines), lines


def test_a_second_serve_that_cannot_listen_never_marks_the_running_node_offline(tmp_path, clip):
    """A second `serve` of the same config whose HTTP port is taken exits saying so, before it touches the broker: it
    used to connect, say `online`, then leave `offline` retained on the running node's availability topic (Home
    Assistant then showed every entity of the box unavailable)."""
    (tmp_path / clip.name).write_bytes(clip.read_bytes())
    with Broker() as broker, Subscriber(broker, "zc/available/#") as sub:
        text = config(broker, "box-p", {"desk": clip.name}).replace("[cameras.desk]\n", "[cameras.desk]\nloop = true\n")
        first = Serve(tmp_path, text).started()
        try:
            wait_until(lambda: "online" in sub.on("zc/available/box-p"), 30, "the first serve online")
            second = tmp_path / "second.toml"
            second.write_text(text.replace('listen = "127.0.0.1:0"', f'listen = "{first.address}"'))
            proc = subprocess.run([sys.executable, "-m", "zerocopy", "serve", str(second)], capture_output=True,
                                  text=True, timeout=60, env={**os.environ, "STATE_DIRECTORY": str(tmp_path / "s2")})
            assert proc.returncode == 1 and "cannot listen on" in proc.stderr, proc.stderr
            assert first.proc.poll() is None
            seen = list(sub.on("zc/available/box-p"))
        finally:
            first.terminate()
            first.kill()
    assert seen == ["online"], seen
