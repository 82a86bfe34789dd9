"""zerocopy.publish.homeassistant: which labels get entities, one id per entity whatever the names, every config what
Home Assistant requires (tests/support/hadiscovery.py holds the documented table), the occupancy template rendered as
Home Assistant renders it (Jinja2), and serve's [homeassistant] table. Through a real broker: tests/e2e/
test_homeassistant_discovery.py."""

from pathlib import Path

import jinja2
import pytest
from hadiscovery import problems

from zerocopy.config import RunConfig
from zerocopy.publish.homeassistant import OCCUPIED, discover, entity_labels, unique_id, zone_labels
from zerocopy.serve.config import ServeConfigError, parse_config

TRIANGLE = [[0, 0], [1, 0], [1, 1]]


def serve_config(cameras: dict, **top):
    raw = {"node": "box1", "publish": {"url": "mqtt://127.0.0.1:1883/zc"}, "homeassistant": {}, **top,
           "cameras": {name: {"url": f"rtsp://cam.lan/{name}", **cam} for name, cam in cameras.items()}}
    return parse_config(raw, env={}, base=Path("."))


@pytest.mark.parametrize(("count", "state"), [("0", "OFF"), ("1", "ON"), ("2", "ON"), ("17", "ON"), ("", "OFF"),
                                              ("garbage", "OFF")])
def test_the_occupancy_template_turns_a_count_into_on_or_off(count, state):
    """Rendered by Jinja2 as Home Assistant renders a value_template (the payload is `value`; HA's `int` filter with a
    default behaves as Jinja2's), and the result is the config's own payload_on / payload_off."""
    configs = discover(serve_config({"door": {"model": "face"}}).cameras, "box1", "zc").configs
    config = next(c for c in configs.values() if c.get("device_class") == "occupancy")
    rendered = jinja2.Environment().from_string(config["value_template"]).render(value=count).strip()
    assert config["value_template"] == OCCUPIED
    assert rendered == state == (config["payload_on"] if count not in ("0", "", "garbage") else config["payload_off"])


def test_which_labels_get_entities():
    cams = serve_config({
        "picked": {"model": "objects", "classes": ["Person", "car"]},  # classes, as the count topics spell them
        "few": {"model": "face"},  # a model of at most 5 labels: each
        "many": {"model": "objects", "zones": {"drive": {"points": TRIANGLE, "labels": ["car"]}},
                 "lines": {"gate": {"points": [[0, 0], [1, 1]], "labels": ["bicycle"]}}},
        "bare": {"model": "objects"},  # 24 labels: person only
    }).cameras
    assert {c.name: entity_labels(c.run) for c in cams} == {
        "picked": ["person", "car"], "few": ["face"], "many": ["person", "car", "bicycle"], "bare": ["person"]}


def test_a_labels_file_of_ones_own_model(tmp_path):
    (tmp_path / "labels.txt").write_text("???\ncat\ndog\n\n")
    config = RunConfig(model=str(tmp_path / "model.xml"), labels=str(tmp_path / "labels.txt"))
    assert entity_labels(config) == ["cat", "dog"]
    assert entity_labels(config.replace(labels=str(tmp_path / "missing.txt"))) == []  # unknown: only the named


def test_a_zone_gets_its_own_labels_that_the_camera_reports():
    run = serve_config({"c": {"model": "objects", "classes": ["person"], "zones": {
        "drive": {"points": TRIANGLE, "labels": ["car", "person"]}, "yard": {"points": TRIANGLE}}}}).cameras[0].run
    assert zone_labels(run, entity_labels(run)) == {"drive": ["person"], "yard": ["person"]}


def test_discovery_reads_each_cameras_checked_record_and_makes_no_other(monkeypatch):
    """The review of issue 37: discovery made a `RunConfig` from each camera's settings twice over (every setting
    checked again) where serve's check had made the camera's record (`CameraConfig.run`) once."""
    cams = serve_config({"front": {"model": "objects", "zones": {"drive": {"points": TRIANGLE, "labels": ["car"]}}},
                         "door": {"model": "face"}}).cameras
    made = []
    real = RunConfig.__post_init__
    monkeypatch.setattr(RunConfig, "__post_init__", lambda self: made.append(self) or real(self))
    configs = discover(cams, "box1", "zc").configs
    assert made == [] and len(configs) == 1 + 3 * 2 + 2 + 3  # the box; person and car (and the drive's car); face


def test_no_two_entities_share_an_id_whatever_the_names():
    """A camera `a-b` and a camera `a` with a zone `b`; `a_b` and `a` with `_b`: names alone joined would collide."""
    names = [("n", "a-b", "x"), ("n", "a", "b", "x"), ("n", "a_b", "x"), ("n", "a", "_b", "x"), ("n", "a", "b-x"),
             ("n-a", "b", "x")]
    assert len({unique_id(*p) for p in names}) == len(names)
    cams = serve_config({
        "a-b": {"model": "face"},
        "a": {"model": "face", "zones": {"b": {"points": TRIANGLE}}},
        "a_b": {"model": "face"},
    }).cameras
    configs = discover(cams, "box1", "zc").configs
    ids = [c["unique_id"] for c in configs.values()]
    assert len(ids) == len(set(ids)) == len(configs) == 1 + 3 * 3 + 2


def test_every_config_has_what_home_assistant_requires():
    cams = serve_config({
        "front": {"model": "objects", "zones": {"drive": {"points": TRIANGLE, "labels": ["car"]}}},
        "door": {"model": "face"},
        "off": {"model": "face", "enabled": False},  # not run: no entity
        "quiet": {"model": "face", "publish": False},  # its counts never reach the broker: no entity
    }).cameras
    configs = discover(cams, "box1", "zc", "ha").configs
    assert [p for t, c in configs.items() for p in problems(t, c, "zc/available/box1")] == []
    names = {c["default_entity_id"] for c in configs.values()}
    assert names == {
        "binary_sensor.zerocopy_box1_connected",
        "binary_sensor.front_person_occupancy", "sensor.front_person_count", "image.front_person_snapshot",
        "binary_sensor.front_car_occupancy", "sensor.front_car_count", "image.front_car_snapshot",
        "binary_sensor.front_drive_car_occupancy", "sensor.front_drive_car_count",
        "binary_sensor.door_face_occupancy", "sensor.door_face_count", "image.door_face_snapshot"}
    topics = {c["default_entity_id"]: c.get("state_topic", c.get("image_topic")) for c in configs.values()}
    assert topics["binary_sensor.front_drive_car_occupancy"] == topics["sensor.front_drive_car_count"] == \
        "zc/front/drive/car"
    assert topics["image.door_face_snapshot"] == "zc/door/face/snapshot"
    assert all(t.startswith("ha/") and "/zerocopy-box1/" in t for t in configs)


def test_the_homeassistant_table_is_checked():
    ok = serve_config({"c": {"model": "face"}}, homeassistant={"prefix": "/ha/disc/"})
    assert (ok.homeassistant.enabled, ok.homeassistant.prefix) == (True, "ha/disc")
    assert serve_config({"c": {"model": "face"}}).homeassistant.prefix == "homeassistant"
    with pytest.raises(ServeConfigError) as e:
        parse_config({"homeassistant": {"enabld": True, "prefix": "ha/#", "enabled": "yes"},
                      "cameras": {"c": {"url": "rtsp://cam.lan/c"}}}, env={}, base=Path("."))
    assert e.value.problems == [
        "[homeassistant] unknown key 'enabld' (did you mean enabled?); [homeassistant] takes enabled, prefix",
        "[homeassistant] enabled must be true or false, not a str",
        "[homeassistant] prefix 'ha/#' has a wildcard in '#'",
        "[homeassistant] needs a [publish] table: the discovery configs go to its broker"]


def test_the_worked_example_of_the_docs_is_what_serve_announces(tmp_path):
    """docs/homeassistant.md: its config gives the topics, entities and state topics of its table, and its JSON is the
    config sent (zerocopy's version aside)."""
    import json
    import re

    from zerocopy.serve.config import load_config

    doc = (Path(__file__).resolve().parents[3] / "docs" / "homeassistant.md").read_text()
    example = doc[doc.index("## A worked example"):]
    (tmp_path / "serve.toml").write_text(re.search(r"```toml\n(.*?)```", example, flags=re.S).group(1))
    config = load_config(tmp_path / "serve.toml", env={"FRONT_PASSWORD": "pw"})
    configs = discover(config.cameras, config.node, "zerocopy", config.homeassistant.prefix).configs
    rows = re.findall(r"^\| `([a-z_]+/zerocopy-box1/[^`]+)` \| `([^`]+)` \| `([^`]+)` \|$", example, flags=re.M)
    assert [(f"homeassistant/{t}", e, r) for t, e, r in rows] == [
        (t, c["default_entity_id"], c.get("state_topic", c.get("image_topic"))) for t, c in configs.items()]
    assert f"Home Assistant: {len(configs)} entities under homeassistant/" in example
    shown = json.loads(re.search(r"```json\n(.*?)```", example, flags=re.S).group(1))
    sent = json.loads(json.dumps(configs["homeassistant/binary_sensor/zerocopy-box1/"
                                      "zerocopy-box1-front-person-occupancy/config"]))
    for c in (shown, sent):
        c["device"]["sw_version"] = c["origin"]["sw_version"] = "VERSION"
    assert shown == sent
