"""zerocopy.serve.http over a real engine (not started: its cameras fed real frames and detections by hand):
/health, /metrics (Prometheus text, parsed), /api/cameras (JSON, sources redacted), latest.jpg, 404s; and the
server held against hostile clients (issue 26): idle sockets closed after the read timeout, the connection
cap's 503, 1,000 idle sockets while /health answers, the Host allow-list, `nosniff` and no banner, the token,
the broker in /health, and the server alone in a process under `ulimit -n 256` (scripts/measure_http_idle.py);
and (issue 36) a 100 KB head in one write or a 9 KB field refused with a 431, GETs of a file that announce a body
they never send, numbers of absurd length. In the slow tier: it listens on loopback ports."""

import base64
import http.client
import io
import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import av
import numpy as np
import pytest
from conftest import load_script, wait_until
from objectevents import object_event
from PIL import Image
from prometheus_client.parser import text_string_to_metric_families

from zerocopy.detections import Detections
from zerocopy.errors import ZeroCopyError
from zerocopy.frames import Geometry, PreparedFrame
from zerocopy.serve.config import parse_config
from zerocopy.serve.engine import Engine
from zerocopy.serve.http import StatusServer
from zerocopy.serve.http_config import HttpConfig
from zerocopy.serve.status import CameraStatus
from zerocopy.store.storage import Storage

W, H = 160, 90
SECRET = "pw-never-shown"


def frame(index: int, inferred: bool = True, latency_s: float = 0.02) -> PreparedFrame:
    rgb = np.zeros((H, W, 3), np.uint8)
    rgb[:, :, 1] = np.linspace(0, 255, W, dtype=np.uint8)  # a gradient: a picture, not a blank
    return PreparedFrame(index=index, pts=index / 25, width=W, height=H, geometry=Geometry.fit(W, H, W, H, "stretch"),
                         inputs={}, picture=av.VideoFrame.from_ndarray(rgb, format="rgb24"),
                         arrived=time.perf_counter() - latency_s, inferred=inferred)


def boxes() -> Detections:
    return Detections(np.array([[20, 10, 80, 70]], np.float32), np.array([0.9], np.float32), np.array([0], np.int32))


@pytest.fixture
def engine(tmp_path) -> Engine:
    config = parse_config({"cameras": {
        "front": {"url": f"rtsp://admin:{SECRET}@front.lan/stream1", "model": "face", "detect_fps": 5},
        "back": {"url": "http://127.0.0.1:9/live.ts?token=" + SECRET, "model": "face"},
    }}, env={}, base=tmp_path)
    engine = Engine(config.cameras, None, say=lambda msg: None)
    front = engine.groups[0].cameras[0]
    for i in range(12):
        front.frame(frame(i, inferred=i % 2 == 0), boxes() if i % 2 == 0 else Detections.empty())
    front.path = "software"
    return engine


@pytest.fixture
def server(engine):
    with StatusServer("127.0.0.1:0", engine) as server:
        yield server


def get(server: StatusServer, path: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(f"http://{server.address}{path}", timeout=10) as r:
            return r.status, r.headers["Content-Type"], r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers["Content-Type"], e.read()


def test_the_server_binds_a_free_port_on_the_loopback(server):
    host, port = server.address.rsplit(":", 1)
    assert host == "127.0.0.1" and int(port) > 0


def test_api_cameras_lists_every_camera_with_its_figures_and_no_secret(server):
    status, ctype, body = get(server, "/api/cameras")
    assert status == 200 and ctype == "application/json"
    assert SECRET not in body.decode()
    cams = {c["name"]: c for c in json.loads(body)}
    assert set(cams) == {"front", "back"}
    front, back = cams["front"], cams["back"]
    # every field, the analytics' own at the top (`objects`, `zones`, `lines`, `motion`, `regions`; the figures are
    # /metrics')
    assert set(front) == {f for f in CameraStatus.__dataclass_fields__} - {"analytics", "figures"} | \
        {"objects", "zones", "lines", "motion", "regions", "recording"}
    assert front["state"] == "running" and front["path"] == "software" and front["model"] == "face"
    assert front["frames"] == 12 and front["inferences"] == 6 and front["fps"] > 0
    assert 15 <= front["latency_p50_ms"] <= front["latency_p95_ms"]  # each arrived 20 ms before its result
    assert front["source"] == "rtsp://admin:***@front.lan/stream1"
    assert back["state"] == "starting" and back["frames"] == 0 and back["latency_p50_ms"] is None
    assert back["source"] == "http://127.0.0.1:9/live.ts?token=***"
    status, _, body = get(server, "/api/cameras/front")
    assert status == 200 and json.loads(body)["name"] == "front"


def test_metrics_parse_as_prometheus_text_with_each_camera_and_the_process(server):
    status, ctype, body = get(server, "/metrics")
    assert status == 200 and ctype.startswith("text/plain")
    text = body.decode()
    assert SECRET not in text
    samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    front = (("camera", "front"), ("path", "software"))
    back = (("camera", "back"), ("path", "none"))
    assert samples[("zerocopy_camera_frames_total", front)] == 12
    assert samples[("zerocopy_camera_inferences_total", front)] == 6
    assert samples[("zerocopy_camera_frames_total", back)] == 0
    assert samples[("zerocopy_camera_fps", front)] > 0
    assert samples[("zerocopy_camera_reconnects_total", front)] == 0
    assert samples[("zerocopy_camera_dropped_frames_total", front)] == 0
    assert samples[("zerocopy_camera_events_total", front)] == 0
    assert 0.015 <= samples[("zerocopy_camera_latency_seconds", (*front, ("quantile", "0.5")))] < 1
    assert ("zerocopy_camera_latency_seconds", (*back, ("quantile", "0.5"))) not in samples  # nothing inferred
    assert samples[("zerocopy_camera_state", (("camera", "front"), ("state", "running")))] == 1
    assert samples[("zerocopy_camera_state", (("camera", "back"), ("state", "starting")))] == 1
    assert samples[("zerocopy_camera_state", (("camera", "back"), ("state", "running")))] == 0
    assert samples[("process_resident_memory_bytes", ())] > 10e6
    assert ("process_cpu_seconds_total", ()) in samples


def test_metrics_follow_the_cameras_at_each_scrape(server, engine):
    front = engine.groups[0].cameras[0]
    front.frame(frame(12), boxes())
    text = get(server, "/metrics")[2].decode()
    assert 'zerocopy_camera_frames_total{camera="front",path="software"} 13.0' in text


def test_latest_jpg_is_the_last_frame_with_its_boxes(server):
    status, ctype, body = get(server, "/api/cameras/front/latest.jpg")
    assert status == 200 and ctype == "image/jpeg"
    img = Image.open(io.BytesIO(body))
    assert img.format == "JPEG" and img.size == (W, H)


def test_health_is_ok_while_a_camera_is_not_failed_and_503_with_the_reason_when_all_are(server, engine):
    status, ctype, body = get(server, "/health")
    assert (status, ctype, json.loads(body)) == (200, "application/json",
                                                  {"status": "ok", "reason": "ok", "broker": None})
    for group in engine.groups:
        for camera in group.cameras:
            camera.state = "failed"
    status, _, body = get(server, "/health")
    assert status == 503 and json.loads(body) == {"status": "unhealthy", "reason": "every camera failed",
                                                   "broker": None}


@pytest.mark.parametrize("path", ["/page/", "/index.html", "/api/cameras/nobody", "/api/cameras/nobody/latest.jpg",
                                  "/api/cameras/back/latest.jpg", "/api/cameras/front/other", "/metrics/x"])
def test_unknown_paths_and_cameras_without_a_frame_are_404_in_json(server, path):
    status, ctype, body = get(server, path)
    assert status == 404 and ctype == "application/json" and "error" in json.loads(body)


def test_head_requests_and_closing_free_the_port(engine):
    server = StatusServer("127.0.0.1:0", engine).start()
    address = server.address
    request = urllib.request.Request(f"http://{address}/health", method="HEAD")
    with urllib.request.urlopen(request, timeout=10) as r:
        assert r.status == 200 and r.read() == b""
    server.close()
    with StatusServer(address, engine):  # the same port again: it was released
        pass


def test_a_port_in_use_is_one_line_error(server, engine):
    with pytest.raises(ZeroCopyError) as e:
        StatusServer(server.address, engine).start()
    assert str(e.value).startswith(f"cannot listen on {server.address} for HTTP: ")
    assert "\n" not in str(e.value)


def test_without_a_latest_picture_latest_jpg_says_why(tmp_path):
    """`[http] latest = false` (a full-size download of every frame on the VA paths): no picture is kept,
    and latest.jpg's 404 says so."""
    config = parse_config({"http": {"latest": False}, "cameras": {"front": {"url": "rtsp://front.lan/1"}}},
                          env={}, base=tmp_path)
    assert config.http.latest is False
    engine = Engine(config.cameras, None, latest=config.http.latest, say=lambda msg: None)
    with StatusServer("127.0.0.1:0", engine) as server:
        status, _, body = get(server, "/api/cameras/front/latest.jpg")
    assert status == 404 and "[http] latest = false" in json.loads(body)["error"]


# --- the server against hostile clients (issue 26) ------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "t0ken-for-the-tests-0123456789"
# the deadline for a request's headers in these tests (serve's: 10 s); a server without one holds the socket for
# ever, so any bound works: 20 s leaves room for a loaded machine
READ_TIMEOUT_S = 0.5
CLOSED_BOUND_S = 20.0


def ask(address: str, path: str = "/health", host: str | None = None, headers: dict | None = None,
        method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    """One request with the Host header as given (None: the address; "": none at all); the status, the
    headers (lower-case names) and the body."""
    hostname, port = address.rsplit(":", 1)
    conn = http.client.HTTPConnection(hostname, int(port), timeout=20)
    try:
        conn.putrequest(method, path, skip_host=host is not None, skip_accept_encoding=True)
        if host:
            conn.putheader("Host", host)
        for key, value in (headers or {}).items():
            conn.putheader(key, value)
        conn.endheaders()
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def connect(address: str) -> socket.socket:
    hostname, port = address.rsplit(":", 1)
    return socket.create_connection((hostname, int(port)), timeout=CLOSED_BOUND_S)


def closed_by_server(sock: socket.socket) -> float:
    """Seconds until the server closes `sock` (it reads EOF or a reset)."""
    t0 = time.monotonic()
    try:
        while sock.recv(4096):
            pass
    except ConnectionResetError:
        pass
    return time.monotonic() - t0


class Stalling(load_script("measure_http_idle").Stub):
    """A StatusSource whose /api/cameras waits until `release` is set: requests that stay in the server."""

    def __init__(self):
        self.release = threading.Event()
        self.waiting = 0

    def cameras(self, publisher_stats=None):
        self.waiting += 1
        self.release.wait(60)
        self.waiting -= 1
        return []


def test_a_connection_that_sends_nothing_or_half_a_request_is_closed_after_the_read_timeout(engine):
    with StatusServer("127.0.0.1:0", engine, read_timeout=READ_TIMEOUT_S) as server:
        silent, slow = connect(server.address), connect(server.address)
        slow.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
        assert closed_by_server(silent) < CLOSED_BOUND_S
        assert closed_by_server(slow) < CLOSED_BOUND_S
        silent.close()
        slow.close()
        kept = connect(server.address)  # a keep-alive connection is closed after its idle time too
        kept.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert kept.recv(4096).startswith(b"HTTP/1.1 200 ")
        assert closed_by_server(kept) < CLOSED_BOUND_S
        kept.close()


def test_connections_past_the_cap_get_503_and_the_server_serves_again_after():
    source = Stalling()
    with StatusServer("127.0.0.1:0", source, max_connections=2) as server:
        assert server.cap == 2
        held = [threading.Thread(target=ask, args=(server.address, "/api/cameras"), daemon=True) for _ in range(2)]
        for t in held:
            t.start()
        wait_until(lambda: source.waiting == 2, 30, "two requests held in the server")
        status, headers, body = ask(server.address, "/health")
        assert status == 503 and headers["x-content-type-options"] == "nosniff"
        source.release.set()
        for t in held:
            t.join(30)
        wait_until(lambda: ask(server.address, "/health")[0] == 200, 30, "/health answered again")


class BigPictures(load_script("measure_http_idle").Stub):
    """A StatusSource whose every camera has a 300 KB latest.jpg."""

    def latest_jpeg(self, name):
        return b"\xff" * 300_000


def test_clients_that_never_read_their_answers_do_not_keep_health_out():
    """Connections that pipeline big answers and never read them (the write buffer full) are aborted past the cap or
    after the read timeout: /health answers again (before, it got 503 for as long as they stayed)."""
    with StatusServer("127.0.0.1:0", BigPictures(), max_connections=2, read_timeout=1.0) as server:
        host, port = server.address.rsplit(":", 1)
        readers = []
        for _ in range(6):  # past the cap and uvicorn's own limit (cap + 1)
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a full pipe after a few KB
            sock.connect((host, int(port)))
            sock.sendall(b"GET /api/cameras/a/latest.jpg HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 40)
            sock.recv(12)  # being answered (or refused past the cap); from here on, never read
            readers.append(sock)
        try:
            wait_until(lambda: ask(server.address, "/health")[0] == 200, 60, "/health answered with stalled readers")
        finally:
            for sock in readers:
                sock.close()


def test_a_thousand_idle_sockets_do_not_keep_health_out_and_are_all_released(engine):
    """The oldest waiting connection makes room for a new one past the cap; the rest go at the read timeout."""
    with StatusServer("127.0.0.1:0", engine, read_timeout=2.0) as server:
        fds_before = len(os.listdir("/proc/self/fd"))
        idle = [connect(server.address) for _ in range(1000)]
        t0 = time.monotonic()
        status, _, body = ask(server.address, "/health")
        # aimed at well under 1 s (measured 0.004 s, docs/serve.md); 10 s leaves room for a loaded machine, while
        # a server that kept /health behind the idle sockets would wait for their read timeouts
        assert status == 200 and json.loads(body)["status"] == "ok" and time.monotonic() - t0 < 10
        for sock in idle:  # every one closed by the server while this side still holds it
            sock.setblocking(False)
        pending = {sock.fileno(): sock for sock in idle}

        def released() -> bool:
            poll = select.poll()
            for fd in pending:
                poll.register(fd, select.POLLIN | select.POLLHUP)
            for fd, _ in poll.poll(100):
                pending.pop(fd)
            return not pending
        wait_until(released, 60, "the server to close the idle connections")
        for sock in idle:
            sock.close()
        wait_until(lambda: len(os.listdir("/proc/self/fd")) <= fds_before + 2, 30, "the fds back down")


def test_a_host_that_is_not_this_server_is_refused_and_the_allowed_ones_are_served(engine):
    with StatusServer("127.0.0.1:0", engine, HttpConfig(hosts=("box1.lan", "10.0.0.7"))) as server:
        port = server.address.rsplit(":", 1)[1]
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", f"[::1]:{port}", f"box1.lan:{port}",
                     "BOX1.LAN", "10.0.0.7"):
            assert ask(server.address, "/api/cameras", host=host)[0] == 200, host
        for host in (f"evil.example:{port}", "rebind.attacker.test", "127.0.0.1.nip.io", "box1.lan.evil.example"):
            status, headers, body = ask(server.address, "/api/cameras", host=host)
            assert status == 421 and "not served here" in json.loads(body)["error"], host
            assert SECRET not in body.decode()
        assert ask(server.address, "/health", host="")[0] == 400  # no Host header at all


def test_every_answer_says_nosniff_and_none_names_the_server(engine):
    with StatusServer("127.0.0.1:0", engine, max_connections=2) as server:
        answers = [ask(server.address, p) for p in ("/health", "/metrics", "/api/cameras", "/nowhere")]
        answers.append(ask(server.address, "/health", host="evil.example"))
        answers.append(ask(server.address, "/health", method="POST"))
        assert [a[0] for a in answers] == [200, 200, 200, 404, 421, 405]
        for status, headers, _ in answers:
            assert headers.get("x-content-type-options") == "nosniff", status
            assert "server" not in headers, (status, headers["server"])
        with connect(server.address) as raw:  # a malformed request: uvicorn's 400, with nosniff too
            raw.sendall(b"NOT HTTP AT ALL\r\n\r\n")
            head = raw.recv(4096).decode("latin-1").lower()
        assert head.startswith("http/1.1 400 ") and "x-content-type-options: nosniff" in head
        assert "\nserver:" not in head


def test_a_token_is_required_as_bearer_or_basic_auth_password(engine):
    with StatusServer("127.0.0.1:0", engine, HttpConfig(token=TOKEN)) as server:
        assert server.access.endswith("needs a token (bearer, or basic auth with the token as password)")
        status, headers, body = ask(server.address, "/api/cameras")
        assert status == 401 and headers["www-authenticate"].startswith("Basic ")
        assert TOKEN not in body.decode()

        def basic(user: str, password: str) -> dict:
            return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}
        assert ask(server.address, "/api/cameras", headers={"Authorization": f"Bearer {TOKEN}"})[0] == 200
        assert ask(server.address, "/api/cameras", headers=basic("anyone", TOKEN))[0] == 200
        assert ask(server.address, "/health", headers=basic("", TOKEN))[0] == 200
        for wrong in ({"Authorization": f"Bearer {TOKEN}x"}, {"Authorization": "Bearer "}, basic(TOKEN, "x"),
                      {"Authorization": "Basic !!!"}, {"Authorization": TOKEN}):
            assert ask(server.address, "/api/cameras", headers=wrong)[0] == 401, wrong
        # a wrong Host is refused before the token is asked for (a rebinding page never gets a login prompt)
        assert ask(server.address, "/health", host="evil.example", headers={"Authorization": f"Bearer {TOKEN}"}
                   )[0] == 421


class Broker:
    """A publisher as the engine reads it (`stats()`, as zerocopy.publish.mqtt's)."""

    def __init__(self, connected: bool, queued: int, dropped: int = 0):
        self.connected, self.queued, self.dropped = connected, queued, dropped

    def stats(self) -> dict:
        return {"target": "mqtt://127.0.0.1:1883/zc", "connected": self.connected, "queued": self.queued,
                "dropped": self.dropped, "published": 7, "reconnects": 0, "errors": 1,
                "last_error": None if self.connected else "connection refused",
                "events": {"published": 7, "queued": self.queued, "dropped": self.dropped},
                "detections": {"published": 0, "queued": 0, "dropped": 0}}

    def close(self, timeout: float = 2.0) -> None:
        pass


@pytest.mark.parametrize("requires_broker", [False, True])
def test_health_shows_the_broker_degraded_while_it_is_down_or_behind(tmp_path, requires_broker):
    config = parse_config({"cameras": {"front": {"url": "rtsp://front.lan/1"}}}, env={}, base=tmp_path)
    broker = Broker(connected=False, queued=388, dropped=2)
    engine = Engine(config.cameras, broker, say=lambda msg: None)
    http = HttpConfig(health_requires_broker=requires_broker)
    with StatusServer("127.0.0.1:0", engine, http) as server:
        status, _, body = ask(server.address, "/health")
        assert status == (503 if requires_broker else 200)
        assert json.loads(body) == {"status": "degraded", "broker": {"connected": False, "queued": 388, "dropped": 2},
                                    "reason": "the broker is not connected (connection refused); 388 message(s) "
                                              "queued, 2 dropped"}
        broker.connected = True
        assert ask(server.address, "/health")[0] == (503 if requires_broker else 200)  # connected, still behind
        broker.queued = 0
        status, _, body = ask(server.address, "/health")
        assert status == 200 and json.loads(body) == {"status": "ok", "reason": "ok", "broker": {
            "connected": True, "queued": 0, "dropped": 2}}
        for camera in engine.groups[0].cameras:  # cameras that cannot work come first
            camera.state = "failed"
        assert json.loads(ask(server.address, "/health")[2])["status"] == "unhealthy"


def measure_idle(*args: str) -> dict:
    proc = subprocess.run([sys.executable, "scripts/measure_http_idle.py", "--json", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_under_ulimit_256_a_thousand_idle_sockets_leave_health_answering_without_spinning():
    """The server alone in a process with a 256-fd limit. Before issue 26, /health got no answer and the accept
    loop took a whole core (measured 19.7 CPU s in 20 s); uvicorn alone on Python 3.11 did the same."""
    out = measure_idle("--idle", "1000", "--nofile", "256", "--read-timeout", "2", "--seconds", "3",
                       "--health-timeout", "20", "--release-timeout", "60")
    assert out["connected"] == 1000
    # aimed at under 1 s (measured 0.004 s); 10 s leaves room for a loaded machine, never a wait behind 1,000 sockets
    assert out["health_s"] is not None and out["health_s"] < 10, out
    assert out["health_late_s"] is not None and out["health_late_s"] < 10, out
    # idle, it costs nothing (measured 0.01 CPU s in 5 s); a spinning accept loop takes the whole window
    assert out["cpu_s"] < out["window_s"] / 3, out
    assert out["fds_peak"] < 256 and out["threads_peak"] < 20, out
    assert out["released_s"] is not None, out  # every idle connection closed by the server: fds back down
    assert out["log_lines"] == 0, out


def test_a_process_out_of_fds_backs_off_says_it_once_and_serves_again_when_fds_free_up():
    """The process (its cameras, say) 8 fds short of its limit: accept meets EMFILE. CPython 3.11's own accept
    loop then spins and logs a traceback per try (300 MB in 45 s measured); here it waits 1 s between tries."""
    out = measure_idle("--idle", "1000", "--nofile", "256", "--free", "8", "--read-timeout", "2", "--seconds", "4",
                       "--health-timeout", "5", "--release-timeout", "1")
    assert out["cpu_s"] < out["window_s"] / 3, out  # measured 0.07 CPU s in 30 s
    # one line, said again at most once a minute (this run lasts about 20 s)
    assert 1 <= out["log_lines"] <= 2 and "Too many open files" in out["log_first"], out
    assert out["health_after_s"] is not None, out  # the idle sockets gone, it answers again


CLIP = bytes(range(256)) * 40  # 10,240 bytes


class Stored(load_script("measure_http_idle").Stub):
    """A StatusSource with a real event store: event "a" has a 10 KB clip."""

    def __init__(self, folder: Path):
        self.storage = Storage(folder, max_bytes=2**30, max_days=1, say=lambda msg: None)
        self.storage.record([object_event("new", "a", time.time())])
        clip = folder / "a.mp4"
        clip.write_bytes(CLIP)
        self.storage.attach("a", clip=clip)
        assert self.storage.flush()


@pytest.fixture
def stored(tmp_path):
    source = Stored(tmp_path / "store")
    yield source
    source.storage.close()


def whole_answer(sock: socket.socket) -> tuple[bytes, bytes]:
    """One answer read from `sock`: its status line and headers, and its body (as long as Content-Length says)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536) or pytest.fail(f"closed before an answer's headers: {data[:200]!r}")
    head, _, body = data.partition(b"\r\n\r\n")
    fields = dict(line.lower().split(b": ", 1) for line in head.split(b"\r\n")[1:])
    length = int(fields[b"content-length"])
    while len(body) < length:
        body += sock.recv(65536) or pytest.fail(f"closed after {len(body)} of {length} bytes")
    return head, body


def test_a_100_kb_header_in_one_write_or_a_9_kb_field_is_a_431_and_closed():
    """h11 checks only a request's head that has not come whole: 100 KB sent in one write was answered 200."""
    with StatusServer("127.0.0.1:0", load_script("measure_http_idle").Stub()) as server:
        for field in (b"X-Big: " + b"a" * 100_000, b"Range: bytes=" + b" " * 9_000 + b"0-1"):
            sock = connect(server.address)
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n" + field + b"\r\n\r\n")
            head, body = whole_answer(sock)
            assert head.startswith(b"HTTP/1.1 431 ") and b"connection: close" in head.lower()
            assert body.count(b"\n") == 1 and "longer than" in json.loads(body)["error"]
            assert closed_by_server(sock) < CLOSED_BOUND_S
            sock.close()
        assert ask(server.address, "/health", headers={"X-Fits": "a" * 8_000})[0] == 200  # under the caps


def test_gets_that_announce_a_body_they_never_send_are_answered_and_leave_room_for_health(stored):
    """Before, a file's answer waited for the request's body: 105 such clip requests kept /health at 503 for over
    15 s (review of issue 36). Here three times the cap, each answered whole without its body, then /health."""
    with StatusServer("127.0.0.1:0", stored, max_connections=4) as server:
        held = []
        for i in range(12):
            sock = connect(server.address)
            announced = b"Content-Length: 1000" if i % 2 else b"Transfer-Encoding: chunked"
            sock.sendall(b"GET /api/events/a/clip.mp4 HTTP/1.1\r\nHost: 127.0.0.1\r\n" + announced + b"\r\n\r\n")
            head, body = whole_answer(sock)  # before: the headers, then nothing
            assert head.startswith(b"HTTP/1.1 200 ") and body == CLIP
            held.append(sock)
        t0 = time.monotonic()
        status, _, body = ask(server.address, "/health")
        # aimed at a few ms (the oldest answered connection makes room); 10 s leaves room for a loaded machine,
        # while connections that waited for their bodies kept it at 503 for as long as they stayed
        assert status == 200 and time.monotonic() - t0 < 10
        for sock in held:
            sock.close()


def test_numbers_of_absurd_length_are_a_400_or_read_as_numbers(stored):
    """int() refuses more than 4,300 digits: a `limit` or a Range number that long was a 500 with Python's message."""
    with StatusServer("127.0.0.1:0", stored) as server:
        status, headers, body = ask(server.address, "/api/events?limit=" + "1" * 5000)
        assert (status, headers["content-type"], body.count(b"\n")) == (400, "application/json", 1)
        assert json.loads(body) == {"error": f"limit must be a whole number from 1 to 500, not '{'1' * 40}'"}
        for asked, answer in ((f"bytes=0-{'9' * 5000}", (206, CLIP)), (f"bytes=-{'9' * 5000}", (206, CLIP)),
                              (f"bytes={'0' * 5000}5-9", (206, CLIP[5:10]))):
            status, _, body = ask(server.address, "/api/events/a/clip.mp4", headers={"Range": asked})
            assert (status, body) == answer
        status, headers, _ = ask(server.address, "/api/events/a/clip.mp4", headers={"Range": f"bytes={'9' * 5000}-"})
        assert status == 416 and headers["content-range"] == f"bytes */{len(CLIP)}"
