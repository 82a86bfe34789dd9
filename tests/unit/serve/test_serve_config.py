"""zerocopy.serve.config: `zerocopy serve`'s TOML file checked whole (every problem on a line of its own,
naming its table and key), `${NAME}` and `${file:PATH}` filled in and never shown, each camera's settings
checked by `RunConfig`'s own declarations."""

from pathlib import Path

import pytest

from zerocopy.cli import main
from zerocopy.config import RunConfig
from zerocopy.errors import ConfigError
from zerocopy.serve.camera_config import SERVICE_SETTINGS
from zerocopy.serve.config import ServeConfigError, default_node, load_config
from zerocopy.serve.http_config import DEFAULT_LISTEN, parse_listen

GOOD = """
node = "box-1"
[publish]
url = "mqtt://127.0.0.1:1883/zerocopy"
detections = true
[http]
listen = "127.0.0.1:8737"
[defaults]
model = "face"
threshold = 0.6
[cameras.front]
url = "rtsp://user:${FRONT_PASSWORD}@front-door.lan/stream1"
classes = ["face"]
detect_fps = 5
[cameras.back]
url = "http://127.0.0.1:9/live.ts"
model = "objects"
classes = "person,car"
publish = false
[cameras.garage]
url = "rtsp://garage.lan/stream"
enabled = false
"""


def write(tmp_path: Path, text: str, name: str = "serve.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def problems(tmp_path: Path, text: str, env: dict | None = None) -> list[str]:
    with pytest.raises(ServeConfigError) as e:
        load_config(write(tmp_path, text), env=env or {})
    assert e.value.problems and all("\n" not in p for p in e.value.problems)
    return e.value.problems


def test_a_good_config_gives_every_camera_with_its_settings_and_its_secret_filled_in(tmp_path):
    config = load_config(write(tmp_path, GOOD), env={"FRONT_PASSWORD": "s3cr3t-pw"})
    assert config.node == "box-1" and config.http.listen == "127.0.0.1:8737"
    assert config.publish is not None and config.publish.url == "mqtt://127.0.0.1:1883/zerocopy"
    assert config.publish.detections is True and config.publish.ca is None
    front, back, garage = config.cameras
    assert (front.name, back.name, garage.name) == ("front", "back", "garage")
    assert front.url == "rtsp://user:s3cr3t-pw@front-door.lan/stream1"  # what gets opened
    assert "s3cr3t-pw" not in front.source and "s3cr3t-pw" not in repr(front) and "s3cr3t-pw" not in repr(config)
    # motion is serve's default (`motion = false` turns it off)
    assert front.settings == {"model": "face", "threshold": 0.6, "classes": ["face"], "detect_fps": 5, "motion": True}
    assert back.settings["model"] == "objects" and back.settings["threshold"] == 0.6  # [defaults] under its own
    assert back.publish is False and front.publish is True
    assert garage.enabled is False
    for camera in config.cameras:  # the record the engine runs: made once, of them and serve's
        assert camera.run == RunConfig.make({**camera.settings, **SERVICE_SETTINGS})


def test_defaults_without_http_node_or_publish(tmp_path):
    config = load_config(write(tmp_path, '[cameras.one]\nurl = "rtsp://cam.lan/1"\n'), env={})
    assert config.http.listen == DEFAULT_LISTEN == "127.0.0.1:8737"
    assert config.node == default_node() and config.publish is None
    # issue 37: what a camera user expects: general objects (not faces), Frigate's 5 inferences a second, motion
    assert config.cameras[0].settings == {"model": "objects", "detect_fps": 5.0, "motion": True}
    assert config.cameras[0].publish is False


def test_a_camera_that_anonymises_gets_no_default_that_anonymise_refuses(tmp_path):
    """`anonymise` needs every frame inferred: neither detect_fps = 5 nor motion is added to such a camera (issue 37),
    whose config is then valid as written; a camera's own detect_fps or model stays as it says."""
    config = load_config(write(tmp_path, '[cameras.door]\nurl = "rtsp://cam.lan/1"\nmodel = "face"\n'
                               'anonymise = "face"\n[cameras.yard]\nurl = "rtsp://cam.lan/2"\ndetect_fps = 2\n'
                               'model = "person"\n'), env={})
    door, yard = config.cameras
    assert door.settings == {"model": "face", "anonymise": "face"}
    assert yard.settings == {"model": "person", "detect_fps": 2, "motion": True}
    for camera in config.cameras:
        assert camera.run == RunConfig.make({**camera.settings, **SERVICE_SETTINGS})


def test_every_problem_is_listed_on_a_line_naming_its_table_and_key(tmp_path):
    found = problems(tmp_path, """
colour = "red"
node = "two words"
[publish]
url = "http://broker.lan"
detections = "yes"
qos = 1
[http]
listen = "127.0.0.1:99999"
[cameras.front]
url = "rtsp://front.lan/1"
detect_fps = 0
threshold = 2
classes = []
fps = 5
reconnect = true
[cameras.back]
model = "no-such-model"
[cameras."front door"]
url = "rtsp://door.lan/1"
""")
    expected = [
        "unknown key 'colour'",
        "node must be a name",
        "[publish] url: MQTT URL http://broker.lan: use mqtt://host",
        "[publish] detections must be true or false",
        "[publish] unknown key 'qos'",
        "[http] listen: expected HOST:PORT",
        "[cameras.front] detect_fps: detect_fps must be a number of frames per second > 0",
        "[cameras.front] threshold: threshold must be a number in (0, 1]",
        "[cameras.front] classes: classes must be class names",
        "[cameras.front] unknown key 'fps'",
        "[cameras.front] reconnect is set by serve",
        "[cameras.back] url is missing",
        "[cameras.back] model: 'no-such-model' is neither a catalogue model",
        "[cameras.front door] a camera's name holds only letters",
    ]
    for text in expected:
        assert sum(text in p for p in found) == 1, (text, found)
    assert len(found) == len(expected), found


def test_run_settings_are_checked_by_runconfig_itself(tmp_path):
    """The message is RunConfig's own (one validator): the same text `Detector(detect_fps=-1)` gives."""
    with pytest.raises(ConfigError) as own:
        RunConfig.make({"detect_fps": -1})
    found = problems(tmp_path, '[cameras.a]\nurl = "rtsp://a.lan/1"\ndetect_fps = -1\n')
    assert found == [f"[cameras.a] detect_fps: {own.value}"]


def test_defaults_are_checked_and_a_misspelt_key_gets_a_suggestion(tmp_path):
    found = problems(tmp_path, '[defaults]\nnireq = 0\n[cameras.a]\nurl = "rtsp://a.lan/1"\ntreshold = 0.5\n')
    assert found[0].startswith("[defaults] nireq: nireq must be an integer ≥ 1")
    assert found[1] == ("[cameras.a] unknown key 'treshold' (did you mean threshold?); a camera takes url, enabled, "
                        "publish and the settings of `zerocopy detect` (docs/serve.md)")
    assert len(found) == 2


def test_no_camera_and_a_table_of_the_wrong_kind(tmp_path):
    assert problems(tmp_path, 'node = "a"\n') == ["no camera: add at least one [cameras.NAME] table with its url"]
    found = problems(tmp_path, 'http = "127.0.0.1:80"\ncameras = 3\n')
    assert "http must be a table ([http]), not a str" in found
    assert "cameras must be a table ([cameras]), not a int" in found


def test_not_toml_and_no_file(tmp_path):
    found = problems(tmp_path, "[cameras.a\nurl = 1\n")
    assert len(found) == 1 and found[0].startswith("not valid TOML: ")
    with pytest.raises(ServeConfigError) as e:
        load_config(tmp_path / "missing.toml")
    assert e.value.problems == ["cannot read it: No such file or directory"]


def test_environment_and_file_secrets_are_filled_in(tmp_path):
    secret = tmp_path / "mqtt_password"
    secret.write_text("file-secret-1\n")  # the trailing newline of `echo … > file` is not part of it
    config = load_config(write(tmp_path, """
node = "${BOX}"
[publish]
url = "mqtt://zc:${file:mqtt_password}@broker.lan/zerocopy"
[cameras.a]
url = "rtsp://admin:${CAM_PW}@a.lan/1?price=$$5"
"""), env={"BOX": "box-7", "CAM_PW": "env-secret-2"})
    assert config.node == "box-7"
    assert config.publish is not None and config.publish.url == "mqtt://zc:file-secret-1@broker.lan/zerocopy"
    assert config.cameras[0].url == "rtsp://admin:env-secret-2@a.lan/1?price=$5"


def test_a_missing_variable_or_file_names_it_and_nothing_else_follows_from_it(tmp_path):
    found = problems(tmp_path, """
[cameras.a]
url = "rtsp://admin:${CAM_A_PW}@a.lan/1"
[cameras.b]
url = "rtsp://admin:${file:/nonexistent/zc-secret}@b.lan/1"
[cameras.c]
url = "rtsp://admin:${not a name}@c.lan/1"
[publish]
url = "mqtt://zerocopy:${MQTT_PW}@127.0.0.1:1883/zc"
""", env={"OTHER": "x"})
    assert found == [
        "[cameras.a] url: the environment variable CAM_A_PW is not set",
        "[cameras.b] url: cannot read the secret file /nonexistent/zc-secret: No such file or directory",
        "[cameras.c] url: ${not a name} is neither ${NAME} (an environment variable) nor ${file:PATH}",
        "[publish] url: the environment variable MQTT_PW is not set",
    ]  # and no "url is missing" after them


def test_secrets_never_appear_in_problems(tmp_path):
    """A secret filled into a setting that is then refused, or into a bad broker URL, is masked."""
    env = {"PW": "hunter2-pw", "MODEL": "hunter3-model"}
    found = problems(tmp_path, """
[publish]
url = "http://user:${PW}@broker.lan"
[cameras.a]
url = "rtsp://u:${PW}@a.lan/1"
model = "${MODEL}"
device = 3
threshold = "${PW}"
""", env=env)
    text = "\n".join(found)
    assert len(found) == 4, found
    for value in env.values():
        assert value not in text
    assert "***" in text


def test_listen_addresses():
    assert parse_listen("127.0.0.1:8737") == ("127.0.0.1", 8737)
    assert parse_listen("0.0.0.0:80") == ("0.0.0.0", 80)  # allowed when asked for (docs/serve.md says so)
    assert parse_listen("[::1]:0") == ("::1", 0)
    assert parse_listen(":9000") == ("127.0.0.1", 9000)  # no host given: the loopback, never every address
    assert parse_listen("9000") == ("127.0.0.1", 9000)
    for bad in ("127.0.0.1", "host:http", "[::1]", "1.2.3.4:70000"):
        with pytest.raises(ValueError):
            parse_listen(bad)


def test_check_prints_one_line_per_problem_prefixed_with_the_file_and_exits_2(tmp_path, capsys):
    path = write(tmp_path, '[cameras.a]\nurl = "rtsp://a.lan/1"\ndetect_fps = 0\nthreshold = 7\n')
    assert main(["serve", str(path), "--check"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"zerocopy: {path}: [cameras.a] detect_fps: detect_fps must be a number of frames per second "
                     "> 0 (or None: every frame), not 0",
                     f"zerocopy: {path}: [cameras.a] threshold: threshold must be a number in (0, 1] (or None: the "
                     "model's own), not 7"]


def test_check_of_a_good_config(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FRONT_PASSWORD", "s3cr3t-pw")
    path = write(tmp_path, GOOD)
    assert main(["serve", str(path), "--check"]) == 0
    out = capsys.readouterr()
    assert "3 camera(s), no problem found" in out.err and "s3cr3t-pw" not in out.err + out.out


def test_classes_the_model_lacks_are_a_problem_of_that_camera_alone(tmp_path):
    """A class the catalogue model does not have would fail every start of the whole group (every camera
    sharing its compiled model): it is a config problem, named with the model's classes."""
    found = problems(tmp_path, '[cameras.door]\nurl = "rtsp://a.lan/1"\nmodel = "face"\nclasses = ["person"]\n'
                               '[cameras.yard]\nurl = "rtsp://b.lan/1"\nmodel = "face"\n'
                               '[cameras.road]\nurl = "rtsp://c.lan/1"\nmodel = "objects"\nclasses = "person,car"\n')
    assert found == ["[cameras.door] classes: the model has no class 'person'; its classes: face"]


def test_anonymise_is_a_camera_setting_checked_like_classes(tmp_path):
    """Issue 26, item 6: a camera hides its `anonymise` labels in latest.jpg whatever its `classes`; a label the
    catalogue model lacks, or `detect_fps` (the frames between would show what it hides), is a problem of check."""
    config = load_config(write(tmp_path, '[cameras.a]\nurl = "rtsp://a.lan/1"\nmodel = "objects"\n'
                                         'classes = ["car"]\nanonymise = ["person"]\n'), env={})
    assert config.cameras[0].settings["anonymise"] == ["person"]
    found = problems(tmp_path, '[cameras.a]\nurl = "rtsp://a.lan/1"\nmodel = "face"\nanonymise = ["person"]\n'
                               '[cameras.b]\nurl = "rtsp://b.lan/1"\nmodel = "face"\nanonymise = "face"\n'
                               'detect_fps = 5\n')
    assert found == ["[cameras.a] anonymise: the model has no class 'person'; its classes: face",
                     "[cameras.b] anonymise needs every frame inferred: with detect_fps the frames in between would "
                     "show what it hides; drop detect_fps"]


def test_a_file_is_not_a_camera(tmp_path):
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(b"")
    found = problems(tmp_path, f'[cameras.a]\nurl = "{clip}"\n[cameras.b]\nurl = "/dev/video0"\n')
    assert len(found) == 1 and found[0].startswith("[cameras.a] url: ") and "is a file, not a camera" in found[0]


def test_a_path_that_only_begins_like_a_device_is_a_file(tmp_path):
    """`..` resolved before the device check (issue 26, item 9): `/dev/v4l/../../etc/passwd` is /etc/passwd."""
    found = problems(tmp_path, '[cameras.a]\nurl = "/dev/v4l/../../etc/passwd"\n'
                               '[cameras.b]\nurl = "/dev/video0/../../etc/shadow"\n'
                               '[cameras.c]\nurl = "/dev/v4l/by-id/usb-cam-video-index0"\n')
    assert [line.split(" is a file")[0] for line in found] == [
        "[cameras.a] url: '/dev/v4l/../../etc/passwd'", "[cameras.b] url: '/dev/video0/../../etc/shadow'"]


def test_a_ca_that_is_no_certificate_is_a_problem_of_check(tmp_path, ca_bundle):
    """`[publish] ca` read as TLS reads it, at `--check` (issue 26, item 9): one line."""
    (tmp_path / "ca.pem").write_text("not a certificate\n")
    text = '[publish]\nurl = "mqtts://127.0.0.1:8883/zc"\nca = "{}"\n[cameras.a]\nurl = "rtsp://a.lan/1"\n'
    assert problems(tmp_path, text.format("ca.pem")) == [
        f"[publish] ca: {tmp_path / 'ca.pem'}: not a PEM CA certificate (no certificate or crl found)"]
    assert problems(tmp_path, text.format("missing.pem")) == [f"[publish] ca: {tmp_path / 'missing.pem'}: no such file"]
    config = load_config(write(tmp_path, text.format(ca_bundle)), env={})
    assert config.publish is not None and config.publish.ca == ca_bundle


def test_a_url_without_a_known_scheme_is_said_so(tmp_path):
    found = problems(tmp_path, '[cameras.a]\nurl = "foo://bar/x"\n[cameras.b]\nurl = "127.0.0.1:554/stream"\n'
                               '[cameras.c]\nurl = "admin:s3cret@cam.lan/live"\n')
    assert found == ["[cameras.a] url: 'foo://bar/x': foo:// is not a stream zerocopy opens (use rtsp://, http://, "
                     "udp://, srt://…)",
                     "[cameras.b] url: '127.0.0.1:554/stream' has no scheme: write rtsp://…, http://… or udp://…",
                     "[cameras.c] url: 'admin:***@cam.lan/live' has no scheme: write rtsp://…, http://… or udp://…"]


def test_detect_url_is_url_by_frigates_name(tmp_path):
    text = ('[storage]\npath = "{d}"\n[cameras.a]\ndetect_url = "rtsp://a.lan/sub"\n'
            'record_url = "rtsp://a.lan/main"\n').format(d=tmp_path / "events")
    (camera,) = load_config(write(tmp_path, text), env={}).cameras
    assert camera.url == "rtsp://a.lan/sub" and camera.record is not None and camera.record.url == "rtsp://a.lan/main"
    found = problems(tmp_path, '[cameras.a]\nurl = "rtsp://a.lan/1"\ndetect_url = "rtsp://a.lan/2"\n')
    assert found == ["[cameras.a] url and detect_url are the same key (the stream detection decodes): give one"]
    found = problems(tmp_path, '[cameras.a]\ndetect_url = "foo://a.lan/1"\n')
    assert len(found) == 1 and found[0].startswith("[cameras.a] detect_url: 'foo://a.lan/1': foo:// is not a stream")


def test_latest_is_a_switch_of_http(tmp_path):
    assert load_config(write(tmp_path, '[cameras.a]\nurl = "rtsp://a.lan/1"\n'), env={}).http.latest is True
    found = problems(tmp_path, '[http]\nlatest = "no"\n[cameras.a]\nurl = "rtsp://a.lan/1"\n')
    assert len(found) == 1 and found[0].startswith("[http] latest must be true or false")


def test_the_old_http_snapshots_key_names_its_new_name_latest(tmp_path):
    """Issue 37: `[http] snapshots` (each camera's last picture for latest.jpg) is now `latest`; a config that still
    says `snapshots` is refused with a line naming `latest`, never read as something else."""
    found = problems(tmp_path, '[http]\nsnapshots = false\n[cameras.a]\nurl = "rtsp://a.lan/1"\n')
    assert found == ["[http] snapshots is now called latest: latest = false keeps no picture for "
                     "/api/cameras/NAME/latest.jpg; every event's snapshot is kept either way, in the [storage] folder"]
    doc = (Path(__file__).resolve().parents[3] / "docs" / "serve.md").read_text()
    assert f"zerocopy: cameras.toml: {found[0]}\n" in doc  # the line docs/serve.md shows


def test_the_docs_config_is_valid_and_runs_the_default_model(tmp_path):
    """docs/serve.md's example config passes the check (its secrets given) and its cameras run serve's default model
    (`objects`, issue 37) unless they name another; its recipes pull the models it uses."""
    import re

    from zerocopy.serve.camera_config import CAMERA_DEFAULTS

    doc = (Path(__file__).resolve().parents[3] / "docs" / "serve.md").read_text()
    text = next(b for b in re.findall(r"```toml\n(.*?)```", doc, flags=re.S) if "[publish]" in b)  # the full one
    (tmp_path / "garage").write_text("pw")
    text = text.replace("/run/secrets/garage", str(tmp_path / "garage"))
    (tmp_path / "serve.toml").write_text(text)
    config = load_config(tmp_path / "serve.toml", env={"FRONT_PASSWORD": "pw"})
    models = {c.name: c.settings["model"] for c in config.cameras}
    assert models == {"front": "objects", "garage": CAMERA_DEFAULTS["model"] == "objects" and "objects"}
    for pull in re.findall(r"zerocopy models pull ([^`\n]+)", doc):
        assert set(models.values()) <= set(pull.split()), pull


def test_a_file_is_a_camera_only_with_loop_and_is_then_paced_as_live(tmp_path):
    """For trying serve without a camera: `loop = true` takes a file (relative to the config's folder), played
    again from its start at its end (serve reopens an input that ends) and paced as live (`realtime`)."""
    from zerocopy.serve.config import parse_config

    def parse(raw: dict, base: Path):
        return parse_config(raw, env={}, base=base)

    (tmp_path / "clip.mp4").write_bytes(b"")
    config = parse({"cameras": {"desk": {"url": "clip.mp4", "loop": True}}}, tmp_path)
    desk, = config.cameras
    assert desk.loop and desk.url == str(tmp_path / "clip.mp4") and desk.settings["realtime"] is True
    with pytest.raises(ServeConfigError) as e:
        parse({"cameras": {"desk": {"url": "clip.mp4"}, "door": {"url": "rtsp://door.lan/1", "loop": True},
                           "gone": {"url": "nothere.mp4", "loop": True}, "odd": {"url": "clip.mp4", "loop": "yes"}}},
              tmp_path)
    problems = "\n".join(e.value.problems)
    assert "[cameras.desk] url: 'clip.mp4' is a file, not a camera" in problems and "add loop = true" in problems
    assert "[cameras.door] loop = true is for a file played as a camera" in problems
    assert "[cameras.gone] url:" in problems and "no such file" in problems
    assert "[cameras.odd] loop must be true or false" in problems


def test_recording_keys_in_defaults_are_each_cameras_unless_it_says_otherwise(tmp_path):
    """As Frigate's global `record`: `[defaults]` may hold record, retain_days, pre_capture, post_capture and
    record_buffer_mb; a camera's own win; an anonymised camera takes none (it cannot record)."""
    text = ('[storage]\npath = "{d}"\n[defaults]\nrecord = "continuous"\nretain_days = 3\npost_capture = 8\n'
            '[cameras.a]\nurl = "rtsp://a.lan/1"\n[cameras.b]\nurl = "rtsp://b.lan/1"\nrecord = "motion"\n'
            '[cameras.c]\nurl = "rtsp://c.lan/1"\nanonymise = "person"\n').format(d=tmp_path / "events")
    a, b, c = load_config(write(tmp_path, text), env={}).cameras
    assert (a.record.mode, a.record.retain_days, a.record.post_s, a.record.enabled) == ("continuous", 3, 8, True)
    assert (b.record.mode, b.record.retain_days) == ("motion", 3)
    assert not c.record.enabled
    found = problems(tmp_path, '[storage]\npath = "{d}"\n[defaults]\nrecord = "always"\nrecord_url = "rtsp://x/1"\n'
                               '[cameras.a]\nurl = "rtsp://a.lan/1"\n[cameras.b]\nurl = "rtsp://b.lan/1"\n'
                     .format(d=tmp_path / "events"))
    assert found == ["[defaults] record_url is a camera's own main stream: set it in its [cameras.NAME] table",
                     "[defaults] record must be \"continuous\", \"motion\", \"events\" or false, not 'always'"]
