"""zerocopy.serve.http over a real engine (not started: its cameras fed real frames and detections by hand):
/health, /metrics (Prometheus text, parsed), /api/cameras (JSON, sources redacted), latest.jpg, 404s.
In the slow tier: it listens on a loopback port."""

import io
import json
import time
import urllib.error
import urllib.request

import av
import numpy as np
import pytest
from PIL import Image
from prometheus_client.parser import text_string_to_metric_families

from zerocopy.detections import Detections
from zerocopy.errors import ZeroCopyError
from zerocopy.frames import Geometry, PreparedFrame
from zerocopy.serve.config import parse_config
from zerocopy.serve.engine import Engine
from zerocopy.serve.http import StatusServer
from zerocopy.serve.status import CameraStatus

W, H = 160, 90
SECRET = "pw-never-shown"


def frame(index: int, inferred: bool = True, latency_s: float = 0.02) -> PreparedFrame:
    rgb = np.zeros((H, W, 3), np.uint8)
    rgb[:, :, 1] = np.linspace(0, 255, W, dtype=np.uint8)  # a gradient: a picture, not a blank
    return PreparedFrame(index, index / 25, W, H, Geometry.fit(W, H, W, H, "stretch"), {},
                         picture=av.VideoFrame.from_ndarray(rgb, format="rgb24"),
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
    assert set(front) == {f for f in CameraStatus.__dataclass_fields__}
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
    assert (status, ctype, json.loads(body)) == (200, "application/json", {"status": "ok", "reason": "ok"})
    for group in engine.groups:
        for camera in group.cameras:
            camera.state = "failed"
    status, _, body = get(server, "/health")
    assert status == 503 and json.loads(body) == {"status": "unhealthy", "reason": "every camera failed"}


@pytest.mark.parametrize("path", ["/", "/api/cameras/nobody", "/api/cameras/nobody/latest.jpg",
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


def test_without_snapshots_latest_jpg_says_why(tmp_path):
    """`[http] snapshots = false` (a full-size download of every frame on the VA paths): no picture is kept,
    and latest.jpg's 404 says so."""
    config = parse_config({"http": {"snapshots": False}, "cameras": {"front": {"url": "rtsp://front.lan/1"}}},
                          env={}, base=tmp_path)
    assert config.http.snapshots is False
    engine = Engine(config.cameras, None, pictures=config.http.snapshots, say=lambda msg: None)
    with StatusServer("127.0.0.1:0", engine) as server:
        status, _, body = get(server, "/api/cameras/front/latest.jpg")
    assert status == 404 and "snapshots = false" in json.loads(body)["error"]
