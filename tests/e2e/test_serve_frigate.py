"""`zerocopy serve config.yml`: a Frigate config written as Frigate's docs show it (two cameras, zones, filters,
record, snapshots, secrets as `{FRIGATE_*}`, Frigate-only sections) run unchanged as a real process against a real
Mosquitto: events on Frigate's `frigate/events`, per-label and per-zone counts, snapshots on Frigate's topics; what
does not map said once; `--check` on it; no secret shown."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from broker import MOSQUITTO, Broker, Subscriber
from conftest import wait_until
from livesource import LiveServer, make_ts_clip
from test_serve import STOP_BOUND_S, Serve, news

pytestmark = [pytest.mark.timeout(240),
              pytest.mark.skipif(MOSQUITTO is None, reason="mosquitto is not installed (install-system-deps.sh)")]

RTSP_SECRET = "rtsp-pw-5d1c"  # from a file in the secrets folder, as Docker's secrets give it
MQTT_SECRET = "mqtt-pw-8e2b"  # from the environment
# a Frigate 0.14-0.16 config as its docs write one; only `zerocopy:` is zerocopy's (the model: Frigate names a file)
FRIGATE = """
mqtt:
  host: 127.0.0.1
  port: {port}
  topic_prefix: frigate
  client_id: frigate
  user: frigate
  password: "{{FRIGATE_MQTT_PASSWORD}}"
detectors:
  ov:
    type: openvino
    device: GPU
model:
  width: 300
  height: 300
  path: /openvino-model/ssdlite_mobilenet_v2.xml
ffmpeg:
  hwaccel_args: preset-vaapi
birdseye:
  enabled: true
detect:
  fps: 5
objects:
  track:
    - face
  filters:
    face:
      threshold: 0.5
      min_area: 500
      max_area: 200000
record:
  enabled: true
  retain:
    days: 2
  alerts:
    pre_capture: 1
    post_capture: 1
snapshots:
  enabled: true
  retain:
    default: 3
cameras:
  front:
    ffmpeg:
      inputs:
        - path: {front}
          roles:
            - detect
            - record
    detect:
      width: 640
      height: 360
    zones:
      porch:
        coordinates: 0,0,640,0,640,360,0,360
        objects:
          - face
        inertia: 2
  back:
    ffmpeg:
      inputs:
        - path: {back}
          roles:
            - detect
    objects:
      track:
        - person
        - face
    motion:
      threshold: 30
      contour_area: 10
zerocopy:
  defaults:
    model: face
  http:
    listen: 127.0.0.1:0
"""


@pytest.fixture(scope="module")
def clip(tmp_path_factory, face_model_path) -> Path:
    """A 4 s clip of a real face photo (served in a loop); the face model pulled before any process needs it."""
    return make_ts_clip(tmp_path_factory.mktemp("frigate") / "face.ts", seconds=4.0, fps=25, width=320, height=180)


def frigate_config(broker: Broker, front: LiveServer, back: LiveServer) -> str:
    """The config, the front camera's password a Frigate secret (the loopback server ignores it)."""
    return FRIGATE.format(port=broker.port, front=front.url.replace("http://", "http://viewer:{FRIGATE_RTSP_PASSWORD}@"),
                          back=back.url)


def secrets(tmp_path: Path) -> dict[str, str]:
    folder = tmp_path / "secrets"
    folder.mkdir()
    (folder / "FRIGATE_RTSP_PASSWORD").write_text(RTSP_SECRET + "\n")
    return {"CREDENTIALS_DIRECTORY": str(folder), "FRIGATE_MQTT_PASSWORD": MQTT_SECRET}


def test_a_frigate_config_runs_as_written(tmp_path, clip):
    with Broker() as broker, LiveServer(clip, "http", lifetime=600, loops=1000) as front, \
            LiveServer(clip, "http", lifetime=600, loops=1000) as back, Subscriber(broker, "#") as sub:
        serve = Serve(tmp_path, frigate_config(broker, front, back), env=secrets(tmp_path), name="config.yml")
        try:
            serve.started()
            wait_until(lambda: {e["camera"] for e in news(sub, "frigate/events")} == {"front", "back"}, 90,
                       "a `new` event from each camera on Frigate's one events topic")
            wait_until(lambda: 1 in sub.on("frigate/front/face") and 1 in sub.on("frigate/front/porch/face"), 60,
                       "front's face counted, and in its zone")
            wait_until(lambda: sub.on("frigate/front/face/snapshot"), 60, "front's snapshot on Frigate's topic")
            wait_until(lambda: sub.on("frigate/back/motion"), 60, "back's motion state on Frigate's topic")
            cams = serve.cameras()
            elapsed = serve.terminate()
        finally:
            serve.kill()
    assert serve.proc.returncode == 143 and elapsed < STOP_BOUND_S, serve.err
    assert {name: c["state"] for name, c in cams.items()} == {"front": "running", "back": "running"}
    event = next(e for e in news(sub, "frigate/events") if e["camera"] == "front")
    assert not [t for t, _, _ in sub.messages if t.startswith("frigate/") and t.count("/") == 2
                and t.endswith("/events")]  # Frigate's one topic only, not serve's per camera
    assert (event["camera"], event["label"], event["after"]["label"]) == ("front", "face", "face")
    assert sub.on("frigate/available/" + event["node"])[0] == "online"
    assert set(sub.on("frigate/back/motion")) <= {"ON", "OFF"}  # Frigate's payloads, said when motion starts/stops
    said = "\n".join(serve.err)
    for line in ("detectors: not mapped", "model: not mapped", "ffmpeg.hwaccel_args: not mapped",
                 "birdseye: not mapped", "cameras.back.motion.contour_area: not mapped",
                 "objects.track: 'person' is not a label of the model face"):
        assert said.count(line) == 1, (line, serve.err)
    assert "Traceback" not in said
    seen = said + serve.out + json.dumps(sub.messages) + json.dumps(cams)
    assert RTSP_SECRET not in seen and MQTT_SECRET not in seen


def test_check_reads_a_frigate_config_and_refuses_what_would_change_detection(tmp_path):
    text = FRIGATE.format(port=1883, front="http://127.0.0.1:9/a.ts", back="http://127.0.0.1:9/b.ts")
    path = tmp_path / "config.yaml"
    path.write_text(text)
    env = {"STATE_DIRECTORY": str(tmp_path / "state"), "PATH": "/usr/bin:/bin", **secrets(tmp_path)}
    run = subprocess.run([sys.executable, "-m", "zerocopy", "serve", str(path), "--check"], capture_output=True,
                         text=True, env=env, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "2 camera(s), no problem found" in run.stderr and "detectors: not mapped" in run.stderr
    path.write_text(text.replace("      min_area: 500", "      min_aera: 500"))  # a typo: Frigate refuses it too
    run = subprocess.run([sys.executable, "-m", "zerocopy", "serve", str(path), "--check"], capture_output=True,
                         text=True, env=env, timeout=60)
    assert run.returncode == 2
    assert f"{path}: [cameras.front.objects.filters.face] unknown key 'min_aera' (did you mean min_area?)" in run.stderr
