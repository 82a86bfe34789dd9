"""zerocopy.serve.decode_gate: what each camera's decode gate did, in `/metrics` and `/api/cameras`, summed over its
openings (each opening's `GateReport` from its damage report, read live while it is open), and why it is off: the
camera's settings, what its stream showed, or a decoder it cannot run on."""

from __future__ import annotations

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from test_serve_engine import FakeDetector, begin, done

from zerocopy.decode.damage import DamageReport
from zerocopy.decode.gate import GateReport
from zerocopy.pipeline import InputEnd, InputOutcome
from zerocopy.serve.config import parse_config
from zerocopy.serve.decode_gate import NOT_GATED
from zerocopy.serve.engine import Engine
from zerocopy.serve.routes import metrics_registry

CBR = "its packets are padded to a constant bit rate (600 bytes), so their sizes do not follow the scene"


def gate(frames: int, decoded: int, catch_ups: int = 0, delays: tuple[float, ...] = (), off: str | None = None):
    report = GateReport(frames=frames, decoded=decoded, catch_ups=catch_ups, off=off)
    report.rise_to_inference_ms.extend(delays)
    return report


def ended_with(report: GateReport, input: int = 0) -> InputEnd:
    """The end of an opening whose damage report holds `report`."""
    return InputEnd(source=f"cam{input}", outcome=InputOutcome(source=f"cam{input}", damage=DamageReport(gate=report)),
                    began=True, input=input)


def scrape(engine: Engine) -> dict[tuple, float]:
    """`/metrics`' decode gate samples: (name, camera, reason) → value."""
    text = generate_latest(metrics_registry(engine)).decode()
    return {(s.name, s.labels["camera"], s.labels.get("reason")): s.value
            for family in text_string_to_metric_families(text) if "decode_gate" in family.name
            for s in family.samples}


def test_metrics_say_what_each_cameras_decode_gate_did_and_why_one_is_off(tmp_path):
    config = parse_config({"cameras": {
        "front": {"url": "rtsp://front.lan/1", "model": "face"},
        "back": {"url": "rtsp://back.lan/1", "model": "face", "decode_gate": "off"},
        "side": {"url": "rtsp://side.lan/1", "model": "face", "motion": False}}}, env={}, base=tmp_path)
    engine = Engine(config.cameras, None, say=lambda msg: None)
    group, = engine.groups
    det = FakeDetector("software")
    det.path = "software"
    assert scrape(engine) == {  # before any opening: counters at 0; off only where the settings say so
        **{(f"zerocopy_camera_decode_gate_{n}_total", cam, None): 0.0 for cam in ("front", "back", "side")
           for n in ("frames", "decoded_frames", "catch_ups")},
        ("zerocopy_camera_decode_gate_off", "back", "decode_gate = off"): 1.0,
        ("zerocopy_camera_decode_gate_off", "side", "motion = false (the decode gate follows the motion gate)"): 1.0}
    for event in (begin(0), done(0), ended_with(gate(300, 120, 2, (40.0, 80.0, 60.0)))):
        group._observe(det, event)
    det.damage[0] = DamageReport(gate=gate(50, 50))  # opened again: calibrating, every frame decoded so far
    group._observe(det, begin(0))
    front = {k: v for k, v in scrape(engine).items() if k[1] == "front"}
    assert front == {("zerocopy_camera_decode_gate_frames_total", "front", None): 350.0,
                     ("zerocopy_camera_decode_gate_decoded_frames_total", "front", None): 170.0,
                     ("zerocopy_camera_decode_gate_catch_ups_total", "front", None): 2.0,
                     ("zerocopy_camera_decode_gate_rise_to_inference_seconds", "front", None): 0.06,  # the last median
                     ("zerocopy_camera_decode_gate_off", "front", ""): 0.0}
    shown = engine.cameras()[0].to_json()["decode_gate"]
    assert shown == {"frames": 350, "decoded": 170, "catch_ups": 2, "rise_to_inference_ms": 60.0, "off": None,
                     "decoded_share": 0.486}
    det.damage[0] = DamageReport(gate=gate(400, 400, off=CBR))  # its stream turned out to be padded
    assert scrape(engine)[("zerocopy_camera_decode_gate_off", "front", CBR)] == 1.0
    det.damage[0] = DamageReport()  # an opening the gate could not run on
    assert engine.cameras()[0].decode_gate.off == NOT_GATED


def test_the_settings_that_keep_every_frame_decoded_are_named():
    from zerocopy.config import RunConfig
    from zerocopy.serve.decode_gate import setting_off

    assert setting_off(RunConfig(motion=True)) is None
    assert "motion = false" in setting_off(RunConfig(motion=False))
    assert setting_off(RunConfig(motion=True, decode_gate="off")) == "decode_gate = off"
    assert "draw_motion" in setting_off(RunConfig(motion=True, draw_motion=True))  # not "its decoder cannot"


def test_counters_do_not_fall_back_while_an_input_closes(tmp_path):
    """The review of this change: the feeder lets its stream go before the input's end reaches the camera; in
    between the open input's report was gone and the sums fell back by it (a Prometheus counter must not)."""
    config = parse_config({"cameras": {"front": {"url": "rtsp://front.lan/1", "model": "face"}}}, env={},
                          base=tmp_path)
    engine = Engine(config.cameras, None, say=lambda msg: None)
    group, = engine.groups
    det = FakeDetector("software")
    det.path = "software"
    det.damage[0] = DamageReport(gate=gate(300, 120, 2))
    group._observe(det, begin(0))
    frames = ("zerocopy_camera_decode_gate_frames_total", "front", None)
    assert scrape(engine)[frames] == 300.0
    del det.damage[0]  # its reader let the stream go; its end not counted yet
    assert scrape(engine)[frames] == 300.0
    group._observe(det, ended_with(gate(300, 120, 2)))
    assert scrape(engine)[frames] == 300.0
