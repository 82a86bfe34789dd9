"""zerocopy.serve.frigate: a Frigate config (YAML) mapped into serve's own config table, key by key; coordinates in
detect pixels made relative; `{FRIGATE_*}` secrets from the environment and a secrets folder; what does not map said
once (a note), what would change what is detected refused (a problem); `zerocopy serve config.yml --check`."""

from pathlib import Path

import pytest
import yaml

from zerocopy.cli import main
from zerocopy.config import RunConfig
from zerocopy.publish.target import MqttTarget
from zerocopy.serve.config import ServeConfigError, load_config
from zerocopy.serve.frigate import frigate_table

CAMERA = {"ffmpeg": {"inputs": [{"path": "rtsp://cam.lan/sub", "roles": ["detect"]}]}}


def mapped(raw: dict, env: dict | None = None, model: str = "objects", secrets_dir: Path | None = None):
    return frigate_table(raw, env or {}, model, str(secrets_dir) if secrets_dir else "/nonexistent")


def camera(raw_camera: dict, model: str = "objects", **top) -> tuple[dict, list[str], list[str]]:
    """The mapped table of one camera `front` (over Frigate's global sections `top`), its notes and problems."""
    frigate = mapped({"cameras": {"front": raw_camera}, **top}, model=model)
    return frigate.table["cameras"]["front"], frigate.notes, frigate.problems


def with_input(**sections) -> dict:
    return {**CAMERA, **sections}


def write(tmp_path: Path, raw: dict, name: str = "config.yml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(raw))
    return path


def env_for(tmp_path: Path, **more) -> dict:
    return {"XDG_DATA_HOME": str(tmp_path / "data"), "HOME": str(tmp_path), **more}


def test_mqtt_becomes_the_publish_url():
    frigate = mapped({"mqtt": {"host": "broker.lan", "port": 1884, "user": "bob", "password": "p@ss/w:$",
                               "topic_prefix": "home/frigate", "client_id": "frigate"}})
    target = MqttTarget.parse(frigate.table["publish"]["url"].replace("$$", "$"))
    assert (target.scheme, target.host, target.port, target.prefix) == ("mqtt", "broker.lan", 1884, "home/frigate")
    assert (target.user, target.password) == ("bob", "p@ss/w:$")
    assert frigate.notes == ["mqtt.client_id: not mapped (zerocopy makes its own client id per connection)"]


def test_mqtt_defaults_tls_and_disabled():
    plain = mapped({"mqtt": {"host": "broker.lan"}}).table["publish"]
    assert plain == {"url": "mqtt://broker.lan:1883/frigate", "frigate_events": True}  # events on frigate/events
    tls = mapped({"mqtt": {"host": "broker.lan", "port": 8883, "tls_ca_certs": "/etc/ca.pem"}}).table["publish"]
    assert tls == {"url": "mqtts://broker.lan:8883/frigate", "ca": "/etc/ca.pem", "frigate_events": True}
    assert "publish" not in mapped({"mqtt": {"enabled": False, "host": "broker.lan"}}).table
    assert mapped({"mqtt": {"port": 1883}}).problems == ["[mqtt] host is missing (the broker's name or address)"]


def test_inputs_by_role():
    table, _, problems = camera({"ffmpeg": {"inputs": [
        {"path": "rtsp://cam.lan/sub", "roles": ["detect"], "input_args": "preset-rtsp-restream"},
        {"path": "rtsp://cam.lan/main", "roles": ["record", "audio"]}]}})
    assert (table["url"], table["record_url"], problems) == ("rtsp://cam.lan/sub", "rtsp://cam.lan/main", [])
    both, _, _ = camera({"ffmpeg": {"inputs": [{"path": "rtsp://cam.lan/main", "roles": ["detect", "record"]}]}})
    assert both["url"] == "rtsp://cam.lan/main" and "record_url" not in both
    _, _, none = camera({"ffmpeg": {"inputs": [{"path": "rtsp://cam.lan/main", "roles": ["record"]}]}})
    assert none == ["[cameras.front.ffmpeg.inputs] exactly one input has the detect role (the stream zerocopy "
                    "decodes), not 0"]


def test_a_go2rtc_restream_is_read_at_its_source():
    table, notes, _ = camera({"ffmpeg": {"inputs": [{"path": "rtsp://127.0.0.1:8554/front", "roles": ["detect"]}]}},
                             go2rtc={"streams": {"front": ["rtsp://user:{FRIGATE_PW}@cam.lan/live",
                                                           "ffmpeg:front#audio=opus"]}})
    assert table["url"] == "rtsp://user:${FRIGATE_PW}@cam.lan/live"
    assert any("go2rtc's restream of front: read at its source" in n for n in notes)


def test_detect_settings():
    table, _, _ = camera(with_input(detect={"fps": 10, "min_initialized": 4, "max_disappeared": 25}))
    assert (table["detect_fps"], table["min_hits"], table["max_lost"]) == (10, 4, 2.5)
    assert camera(with_input())[0]["detect_fps"] == 5  # Frigate's default
    off, notes, _ = camera(with_input(detect={"enabled": False}))
    assert off["enabled"] is False and any("detect.enabled: false" in n for n in notes)


def test_coordinates_in_detect_pixels_become_relative():
    table, _, _ = camera(with_input(
        detect={"width": 640, "height": 360},
        motion={"mask": ["0,0,320,0,320,36,0,36", "0.5,0.5,1,0.5,1,1"]},
        zones={"steps": {"coordinates": ["0,180", "640,180", "640,360", "0,360"]},
               "lawn": {"coordinates": "0.1,0.2,0.3,0.2,0.3,0.4"}}))
    assert table["zones"]["steps"]["points"] == "0,0.5,1,0.5,1,1,0,1"
    assert table["zones"]["lawn"]["points"] == "0.1,0.2,0.3,0.2,0.3,0.4"  # relative already: kept
    assert table["motion_mask"] == ["0,0,0.5,0,0.5,0.1,0,0.1", "0.5,0.5,1,0.5,1,1"]
    unsized, _, _ = camera(with_input(zones={"steps": {"coordinates": "0,180,640,180,640,360"}}))
    assert unsized["zones"]["steps"]["points"] == "0,180,640,180,640,360"  # the stream's own pixels


def test_track_maps_to_the_models_labels_and_a_missing_one_is_said_once():
    frigate = mapped({"objects": {"track": ["PERSON", "car", "unicorn"]},
                      "cameras": {"front": CAMERA, "back": CAMERA}})
    assert frigate.table["cameras"]["front"]["classes"] == ["person", "car"]
    assert frigate.table["cameras"]["back"]["classes"] == ["person", "car"]
    assert [n for n in frigate.notes if "unicorn" in n] == [
        "objects.track: 'unicorn' is not a label of the model objects: not detected (fewer objects than Frigate's "
        "model would find)"]
    assert frigate.problems == []
    assert camera(with_input())[0]["classes"] == ["person"]  # Frigate's default


def test_track_with_no_label_of_the_model_is_a_problem():
    _, _, problems = camera(with_input(objects={"track": ["car"]}), model="face")
    assert problems == ["[cameras.front.objects] track: the model face has none of these labels (its labels: face): "
                        "nothing would be detected; track some of its labels, or name a model that has these "
                        "(zerocopy: {defaults: {model: objects}})"]


# Frigate's reference config (docs.frigate.video, Full Reference Config): a 1280x720 detect size, its filters
REFERENCE_MASK = "0.000,0.000,0.781,0.000,0.781,0.278,0.000,0.278"
REFERENCE_OBJECTS = {"track": ["person"], "mask": REFERENCE_MASK, "filters": {"person": {
    "min_area": 5000, "max_area": 100000, "min_ratio": 0.5, "max_ratio": 2.0, "min_score": 0.5, "threshold": 0.7,
    "mask": REFERENCE_MASK}}}


def test_filters_map_as_frigate_runs_them():
    table, notes, problems = camera(with_input(detect={"width": 1280, "height": 720}, objects=REFERENCE_OBJECTS))
    assert problems == [] and not [n for n in notes if "filters" in n]
    mask = "0,0,0.781,0,0.781,0.278,0,0.278"
    # areas in detect pixels made fractions of its 921600 px (whatever the stream's real size), as coordinates are
    assert table["filters"] == {"person": {"min_area": 0.00542535, "max_area": 0.108507, "min_ratio": 0.5,
                                           "max_ratio": 2.0, "min_score": 0.5, "threshold": 0.7,
                                           "mask": [mask, mask]}}  # its own mask, then objects.mask
    assert "threshold" not in table  # min_score 0.5 is above the objects model's own 0.4: the model's stays
    (spec,) = RunConfig(filters=table["filters"]).filters  # what serve reads it into
    assert (spec.label, spec.min_area, spec.threshold, len(spec.mask)) == ("person", 0.00542535, 0.7, 2)


def test_filter_values_frigate_defaults_and_labels_the_model_lacks():
    table, notes, problems = camera(with_input(objects={"track": ["person", "car"], "filters": {
        "person": {"min_area": 0, "max_area": 24000000, "min_ratio": 0, "max_ratio": 24000000},  # Frigate's defaults
        "car": {"min_area": 3000, "max_area": 2000000},  # no detect size: the stream's pixels
        "dog": {"min_area": 9},  # a label of the model, not tracked: unused, as in Frigate
        "unicorn": {"min_area": 9}}}))
    assert table["filters"] == {"car": {"min_area": 3000, "max_area": 2000000}} and problems == []
    assert [n for n in notes if "filters" in n] == [
        "cameras.front.objects.filters.unicorn: 'unicorn' is not a label of the model objects: not mapped"]
    sized, _, _ = camera(with_input(detect={"width": 640, "height": 360}, objects={"filters": {
        "person": {"min_area": 0.01, "max_area": 500000}}}))
    assert sized["filters"] == {"person": {"min_area": 0.01}}  # a fraction kept; over the whole frame: no bound


def test_frigate_areas_an_int_is_pixels_a_float_below_1_a_fraction():
    given = {"person": {"min_area": 1, "max_area": 0.5}, "car": {"min_area": 230400}, "dog": {"min_area": 1.0}}
    sized, _, problems = camera(with_input(detect={"width": 640, "height": 360}, objects={
        "track": ["person", "car", "dog"], "filters": given}))
    assert problems == []
    assert sized["filters"] == {"person": {"min_area": 4.34028e-06, "max_area": 0.5},  # 1 px of 230400; half
                                "car": {"min_area": 0.999999}, "dog": {"min_area": 4.34028e-06}}  # all of it; 1 px
    unsized, _, _ = camera(with_input(objects={"track": ["person", "car", "dog"], "filters": given}))
    assert unsized["filters"] == {"person": {"min_area": 1, "max_area": 0.5}, "car": {"min_area": 230400},
                                  "dog": {"min_area": 1.0}}  # the stream's pixels: 1 is one pixel in zerocopy too
    (person, _, _) = RunConfig(filters=unsized["filters"]).filters
    assert (person.min_area, person.max_area) == (1, 0.5)


def test_a_min_score_below_the_models_threshold_lowers_the_cameras():
    table, _, problems = camera(with_input(objects={"track": ["person", "car"], "filters": {
        "person": {"min_score": 0.3}}}))
    assert (table["threshold"], problems) == (0.3, [])
    assert table["filters"] == {"person": {"min_score": 0.3}, "car": {"min_score": 0.4}}  # car keeps the model's


def test_filters_that_cannot_be_read_are_problems():
    _, _, problems = camera(with_input(objects={"mask": "0,0,ten,0", "filters": {"person": 0.5}}))
    assert problems == ["[cameras.front.objects] mask: x1,y1,x2,y2,… (pixels of the detect size, or fractions)",
                        "[cameras.front.objects.filters.person] a filter is a table of min_score, threshold, "
                        "min_area, max_area, min_ratio, max_ratio, mask"]
    _, _, typo = camera(with_input(objects={"filters": {"person": {"min_aera": 10}}}))
    assert typo == ["[cameras.front.objects.filters.person] unknown key 'min_aera' (did you mean min_area?)"]


def test_zones():
    table, notes, problems = camera(with_input(objects={"track": ["person", "car"]}, zones={
        "door": {"coordinates": "0,0,0.5,0,0.5,0.5", "objects": ["person", "unicorn"], "inertia": 5,
                 "loitering_time": 4},
        "yard": {"coordinates": "0,0,1,0,1,1", "loitering_time": 0, "friendly_name": "Yard"},
        "pond": {"coordinates": "0,0,1,0,1,1", "objects": "unicorn"}}))
    assert table["zones"] == {"door": {"points": "0,0,0.5,0,0.5,0.5", "labels": ["person"], "min_frames": 5,
                                       "loiter_s": 4},
                              "yard": {"points": "0,0,1,0,1,1"}}
    assert "cameras.front.zones.yard.friendly_name: not mapped" in notes
    assert any("zones.pond: none of its objects" in n for n in notes) and problems == []
    _, _, refused = camera(with_input(zones={"door": {"coordinates": "0,0,1,0,1,1", "speed_threshold": 5}}))
    assert refused == ["[cameras.front.zones.door] speed_threshold: not mapped: objects it would leave out would count "
                       "in the zone"]


def test_motion():
    table, notes, _ = camera(with_input(motion={"enabled": True, "threshold": 40, "contour_area": 10,
                                                "improve_contrast": True, "mqtt_off_delay": 10}))
    assert (table["motion"], table["motion_threshold"], table["motion_off_delay"]) == (True, 40, 10)
    assert not [n for n in notes if "mqtt_off_delay" in n]  # (the review of issue 37: it was "not mapped")
    assert "cameras.front.motion.contour_area: not mapped (zerocopy's motion gate counts changed pixels, not " \
        "contours)" in notes
    assert "cameras.front.motion.improve_contrast: not mapped" in notes


def test_record_and_retention():
    frigate = mapped({"record": {"enabled": True, "retain": {"days": 3},
                                 "alerts": {"pre_capture": 2, "post_capture": 8, "retain": {"days": 30}},
                                 "detections": {"pre_capture": 6, "post_capture": 1}},
                      "snapshots": {"enabled": True, "retain": {"default": 10}},
                      "cameras": {"front": CAMERA, "back": with_input(record={"enabled": False})}})
    front, back = frigate.table["cameras"]["front"], frigate.table["cameras"]["back"]
    # record.retain.days (mode all, Frigate's default) is continuous recording, those days per camera
    assert (front["record"], front["retain_days"], front["pre_capture"], front["post_capture"]) == \
        ("continuous", 3, 6, 8)
    assert back["record"] is False
    assert frigate.table["storage"] == {"max_days": 30}
    old = camera(with_input(record={"enabled": True, "events": {"pre_capture": 4, "post_capture": 7,
                                                                "retain": {"default": 5}}}))[0]
    assert (old["pre_capture"], old["post_capture"]) == (4, 7)
    assert old["record"] == "events" and "retain_days" not in old  # no retain.days: events' clips only
    assert camera(with_input())[0]["record"] is False  # Frigate's default
    motion = camera(with_input(record={"enabled": True, "retain": {"days": 5, "mode": "active_objects"}}))
    assert (motion[0]["record"], motion[0]["retain_days"]) == ("motion", 5)
    assert "cameras.front.record.retain.mode: active_objects is kept as motion" in " ".join(motion[1])


def test_unmapped_keys_are_said_once_each_and_are_no_problem():
    frigate = mapped({"detectors": {"ov": {"type": "openvino"}}, "birdseye": {"enabled": True}, "ui": {},
                      "telemetry": {}, "audio": {"enabled": True}, "review": {},
                      "ffmpeg": {"hwaccel_args": "preset-vaapi"},
                      "cameras": {"front": with_input(ui={"order": 1}, onvif={"host": "x"}), "back": CAMERA}})
    assert frigate.problems == []
    for key in ("detectors", "birdseye", "ui", "telemetry", "audio", "review", "ffmpeg.hwaccel_args",
                "cameras.front.ui", "cameras.front.onvif"):
        assert sum(n.startswith(f"{key}: not mapped") for n in frigate.notes) == 1, key


def test_a_key_frigate_itself_does_not_know_is_a_problem_with_the_nearest_one():
    """A misspelling in a Frigate file was a note, and `--check` passed: `objets` tracked nothing asked, `enabeld`
    left recording off. Frigate refuses such a key; so does this, naming the key it meant."""
    frigate = mapped({"objets": {"track": ["car"]}, "cameras": {"front": with_input(
        detect={"fsp": 10}, record={"enabeld": True}, zones={"door": {"coordinates": "0,0,1,0,1,1", "inertai": 3}})},
                      "mqtt": {"host": "127.0.0.1", "topik_prefix": "x"}})
    assert sorted(frigate.problems) == sorted([
        "[top level] unknown key 'objets' (did you mean objects?)",
        "[cameras.front.detect] unknown key 'fsp' (did you mean fps?)",
        "[cameras.front.record] unknown key 'enabeld' (did you mean enabled?)",
        "[cameras.front.zones.door] unknown key 'inertai' (did you mean inertia?)",
        "[mqtt] unknown key 'topik_prefix' (did you mean topic_prefix?)"])


def test_secrets_from_the_environment_and_the_secrets_folder(tmp_path: Path):
    folder = tmp_path / "secrets"
    folder.mkdir()
    (folder / "FRIGATE_BACK_PW").write_text("from-a-file\n")
    raw = {"mqtt": {"host": "127.0.0.1", "user": "{FRIGATE_MQTT_USER}", "password": "{FRIGATE_BACK_PW}"},
           "cameras": {"front": {"ffmpeg": {"inputs": [{"path": "rtsp://u:{FRIGATE_FRONT_PW}@cam.lan/s$1",
                                                        "roles": ["detect"]}]}},
                       "back": {"ffmpeg": {"inputs": [{"path": "rtsp://u:{FRIGATE_BACK_PW}@cam2.lan/s",
                                                       "roles": ["detect"]}]}}},
           "zerocopy": {"defaults": {"model": "objects"}, "storage": {"path": str(tmp_path / "store")}}}
    path = write(tmp_path, raw)
    env = env_for(tmp_path, FRIGATE_FRONT_PW="from-the-env", FRIGATE_MQTT_USER="frigate-user",
                  CREDENTIALS_DIRECTORY=str(folder))
    config = load_config(path, env=env)
    urls = {c.name: c.url for c in config.cameras}
    assert urls == {"front": "rtsp://u:from-the-env@cam.lan/s$1", "back": "rtsp://u:from-a-file@cam2.lan/s"}
    assert MqttTarget.parse(config.publish.url).password == "from-a-file"
    assert {"from-the-env", "from-a-file"} <= config.secrets
    del env["FRIGATE_FRONT_PW"]
    with pytest.raises(ServeConfigError) as e:
        load_config(path, env=env)
    assert e.value.problems == ["[cameras.front] url: the environment variable FRIGATE_FRONT_PW is not set (nor a "
                                "file of that name in the secrets folder: /run/secrets or $CREDENTIALS_DIRECTORY)"]
    assert not any("from-a-file" in p for p in e.value.problems)


def test_a_secret_file_wins_as_in_frigate(tmp_path: Path):
    (tmp_path / "FRIGATE_PW").write_text("file")
    frigate = mapped({"cameras": {"front": {"ffmpeg": {"inputs": [{"path": "rtsp://u:{FRIGATE_PW}@cam.lan/s",
                                                                     "roles": ["detect"]}]}}}},
                     env={"FRIGATE_PW": "env"}, secrets_dir=tmp_path)
    assert frigate.table["cameras"]["front"]["url"] == f"rtsp://u:${{file:{tmp_path / 'FRIGATE_PW'}}}@cam.lan/s"


def test_the_zerocopy_section_holds_serves_own_keys():
    frigate = mapped({"cameras": {"front": with_input(zerocopy={"model": "face", "classes": ["face"]})},
                      "zerocopy": {"node": "box-1", "http": {"listen": "127.0.0.1:0"}, "defaults": {"device": "CPU"}}},
                     model="face")
    assert frigate.table["node"] == "box-1" and frigate.table["defaults"] == {"device": "CPU"}
    front = frigate.table["cameras"]["front"]
    assert (front["model"], front["classes"]) == ("face", ["face"])
    hidden, notes, _ = camera(with_input(zerocopy={"anonymise": ["person"]}))
    assert "detect_fps" not in hidden and "cameras.front.detect.fps: not mapped: a camera with anonymise infers " \
        "every frame" in notes


def test_load_and_check_a_frigate_file(tmp_path: Path, capsys):
    raw = {"mqtt": {"host": "127.0.0.1"}, "detectors": {"cpu": {"type": "cpu"}}, "objects": {"track": ["face"]},
           "cameras": {"front": {**CAMERA, "motion": {"mqtt_off_delay": 10}}},
           "zerocopy": {"defaults": {"model": "face"}, "storage": {"path": str(tmp_path / "store")}}}
    path = write(tmp_path, raw, "frigate.yaml")
    config = load_config(path, env=env_for(tmp_path))
    assert config.cameras[0].settings["classes"] == ["face"] and config.cameras[0].run.motion_off_delay == 10.0
    assert (config.publish.url, config.publish.frigate_events) == ("mqtt://127.0.0.1:1883/frigate", True)
    assert main(["serve", str(path), "--check"]) == 0
    assert "detectors: not mapped" in capsys.readouterr().err
    raw["objects"]["filters"] = {"face": {"min_area": 100, "threshold": 0.8}}  # runs as written
    write(tmp_path, raw, "frigate.yaml")
    assert main(["serve", str(path), "--check"]) == 0
    (face,) = load_config(path, env=env_for(tmp_path)).cameras[0].run.filters
    assert (face.label, face.min_area, face.threshold) == ("face", 100, 0.8)
    raw["objects"]["filters"] = {"face": {"min_area": -100}}
    write(tmp_path, raw, "frigate.yaml")
    assert main(["serve", str(path), "--check"]) == 2
    assert "[cameras.front] filters: filter face: min_area is a number ≥ 0" in capsys.readouterr().err


def test_a_bad_yaml_file_is_one_problem(tmp_path: Path):
    path = tmp_path / "config.yml"
    path.write_text("cameras: [unclosed\n")
    with pytest.raises(ServeConfigError) as e:
        load_config(path, env=env_for(tmp_path))
    assert len(e.value.problems) == 1 and e.value.problems[0].startswith("not valid YAML: ")
    path.write_text("- a list\n")
    with pytest.raises(ServeConfigError) as e:
        load_config(path, env=env_for(tmp_path))
    assert e.value.problems == ["a Frigate config is a mapping (mqtt:, cameras:, …)"]


def test_toml_takes_frigate_events_too(tmp_path: Path):
    path = tmp_path / "serve.toml"
    path.write_text('[publish]\nurl = "mqtt://127.0.0.1/frigate"\nfrigate_events = true\n'
                    '[cameras.front]\nurl = "rtsp://cam.lan/s"\n')
    assert load_config(path, env=env_for(tmp_path)).publish.frigate_events is True
    path.write_text(path.read_text().replace("frigate_events = true", 'frigate_events = "yes"'))
    with pytest.raises(ServeConfigError) as e:
        load_config(path, env=env_for(tmp_path))
    assert e.value.problems == ["[publish] frigate_events must be true or false, not a str"]


def test_a_missing_mqtt_secret_is_a_problem_naming_it(tmp_path: Path):
    frigate = mapped({"mqtt": {"host": "broker.lan", "user": "bob", "password": "{FRIGATE_MQTT_PASSWORD}"}},
                     secrets_dir=tmp_path)
    assert frigate.problems == [f"[mqtt] password: FRIGATE_MQTT_PASSWORD is neither set in the environment nor a file "
                                f"in {tmp_path}"]
    assert frigate.table["publish"]["url"] == "mqtt://bob@broker.lan:1883/frigate"  # refused for the problem above
