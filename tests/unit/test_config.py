"""The run configuration: declared once, checked once, the CLI's flags made from it, resolved by rule."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from zerocopy.cli.options import BENCH_SETTINGS, build_parser, config_from
from zerocopy.config import RunConfig
from zerocopy.errors import ConfigError, ZeroCopyError

# What `detect` takes that is the caller's, not the run's: the inputs, where results go, how much to read.
CALLER_OPTIONS = {"inputs", "json", "output", "report", "max_frames", "parallel", "quiet", "verbose", "events",
                  "publish", "mqtt_ca", "publish_detections", "name"}


def _dests(parser: argparse.ArgumentParser) -> set[str]:
    return {a.dest for a in parser._actions if a.dest not in ("help",)}


def _subparser(name: str) -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


def test_detect_has_a_flag_for_every_setting_and_no_setting_of_its_own():
    fields = {f.name for f in dataclasses.fields(RunConfig)}
    assert _dests(_subparser("detect")) - CALLER_OPTIONS == fields


def test_bench_flags_are_settings_declared_once():
    fields = {f.name for f in dataclasses.fields(RunConfig)}
    bench = _dests(_subparser("bench"))
    assert set(BENCH_SETTINGS) <= fields and set(BENCH_SETTINGS) <= bench


def test_every_setting_says_what_it_is():
    for f in dataclasses.fields(RunConfig):
        assert f.metadata["help"] and f.metadata["kind"].accepts, f.name


def test_the_flags_build_the_same_config_as_the_api():
    args = build_parser().parse_args(["detect", "x.mp4", "--nireq", "3", "--threshold", "0.6", "--decoder", "yolo",
                                      "--ov-config", "A=1", "--ov-config", "B=2", "--reconnect",
                                      "--decode-threads", "0"])
    assert config_from(args) == RunConfig(nireq=3, threshold=0.6, postprocess="yolo", ov_config={"A": "1", "B": "2"},
                                          reconnect=True, decode_threads=0)
    assert config_from(build_parser().parse_args(["detect", "x.mp4"])) == RunConfig()


@pytest.mark.parametrize("flags", [["--nireq", "0"], ["--nireq", "x"], ["--threshold", "1.5"], ["--batch", "-1"],
                                   ["--decode-threads", "-1"], ["--reconnect-timeout", "0"], ["--ov-config", "noeq"],
                                   ["--path", "gpu"], ["--tiles", "5"]])
def test_a_bad_flag_is_a_usage_error(flags, capsys):
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(["detect", "x.mp4", *flags])
    assert e.value.code == 2
    assert "error:" in capsys.readouterr().err


BAD = [  # (setting, value) pairs a user might pass, each refused with the setting's name
    ("model", 123), ("model", None), ("model", ""),
    ("threshold", "0.5"), ("threshold", 0), ("threshold", 1.5), ("threshold", True), ("threshold", float("nan")),
    ("nireq", 0), ("nireq", True), ("nireq", 2.5), ("nireq", "4"),
    ("batch", 0), ("batch", None), ("batch", 1.0),
    ("tiles", -1), ("tiles", 5), ("tiles", None), ("tiles", 1.5),
    ("decode_threads", -1), ("decode_threads", "2"),
    ("device", None), ("device", 1),
    ("path", "gpu"), ("path", None),
    ("postprocess", "ssd"), ("resize", "crop"),
    ("va_device", 5),
    ("realtime", 1), ("reconnect", "yes"),
    ("reconnect_timeout", 0), ("reconnect_timeout", True), ("reconnect_timeout", -5),
    ("ov_config", ["A=1"]), ("ov_config", {1: "x"}),
    ("node", ""), ("node", "a/b"), ("node", "box.local"), ("node", "door+"), ("node", 7),
]


@pytest.mark.parametrize(("name", "value"), BAD, ids=[f"{n}={v!r}" for n, v in BAD])
def test_a_bad_value_names_its_setting_and_what_it_accepts(name, value):
    with pytest.raises(ConfigError) as e:
        RunConfig(**{name: value})
    assert e.value.setting == name
    assert str(e.value).startswith(f"{name} must be ")
    assert isinstance(e.value, ValueError) and isinstance(e.value, ZeroCopyError)


def test_the_node_is_a_name_and_defaults_to_the_host_name(monkeypatch):
    import socket

    from zerocopy.config import default_node

    assert RunConfig(node="box-1_a").node_name == "box-1_a"
    monkeypatch.setattr(socket, "gethostname", lambda: "nuc 7.home.lan")
    assert default_node() == "nuc_7" and RunConfig().node_name == "nuc_7" and RunConfig().node is None
    monkeypatch.setattr(socket, "gethostname", lambda: "")
    assert default_node() == "zerocopy"


def test_an_unknown_setting_is_named():
    with pytest.raises(ConfigError, match="unknown setting 'treshold'"):
        RunConfig.make({"treshold": 0.5})
    with pytest.raises(ConfigError, match="unknown setting"):
        RunConfig().replace(colour="red")


def test_every_unknown_setting_is_named_with_the_nearest_known_one():
    """The review of issue 37: `Detector(clases=…, zone=…)` named only `clases`, and suggested nothing."""
    from zerocopy import Detector

    with pytest.raises(ConfigError) as e:
        Detector(clases=["person"], zone=["door:0,0,1,0,1,1"], colour="red")
    assert str(e.value).startswith("unknown settings 'clases' (did you mean classes?), 'colour', 'zone' (did you "
                                   "mean zones?); the settings are: anonymise, ")
    assert e.value.setting == "clases"
    with pytest.raises(ConfigError, match=r"^unknown setting 'treshold' \(did you mean threshold\?\); "):
        RunConfig.make({"treshold": 0.5})


def test_values_are_normalised_once():
    from pathlib import Path

    c = RunConfig(model=Path("m.xml"), threshold=1, ov_config=None, reconnect_timeout=5)
    assert (c.model, c.threshold, c.ov_config, c.reconnect_timeout) == ("m.xml", 1.0, {}, 5.0)
    assert isinstance(c.threshold, float)


def test_it_travels_as_json_and_back():
    import json

    c = RunConfig(model="face", nireq=3, ov_config={"A": "1"}, reconnect=True)
    assert RunConfig.make(json.loads(json.dumps(c.to_dict()))) == c


def test_reconnect_is_part_of_the_live_policy():
    live = RunConfig(reconnect=True, reconnect_timeout=7).live_policy
    assert live.reconnect and live.give_up_after == 7.0


class _Spec:
    threshold, resize, postprocess = 0.8, "letterbox", "anchor-ssd"


def test_resolve_fills_in_what_the_model_and_the_machine_give():
    from zerocopy.budget import default_decode_threads

    c = RunConfig().resolve(spec=_Spec(), device="CPU", inputs=1)
    assert (c.threshold, c.resize, c.postprocess, c.device) == (0.8, "letterbox", "anchor-ssd", "CPU")
    assert c.decode_threads == default_decode_threads("CPU", 1)
    assert c.nireq is None  # not known before the model is compiled
    assert c.resolve(optimal_nireq=6, nireq_cap=4).nireq == 4
    assert c.resolve(optimal_nireq=6).nireq == 6


def test_resolve_keeps_what_was_asked_for():
    c = RunConfig(threshold=0.3, resize="stretch", postprocess="yolo", device="GPU", decode_threads=0, nireq=8)
    r = c.resolve(spec=_Spec(), device="CPU", inputs=4, optimal_nireq=2, nireq_cap=4)
    assert r == c


def test_the_report_form_holds_openvino_values_json_cannot():
    import json

    import openvino as ov

    c = RunConfig(ov_config={"PERFORMANCE_HINT": ov.properties.hint.PerformanceMode.LATENCY, "N": 2})
    assert json.loads(json.dumps(c.to_dict(json_ready=True)))["ov_config"]["N"] == 2


@pytest.mark.parametrize(("value", "expected"), [
    ("person,car", ("person", "car")), (" Person , Car ", ("Person", "Car")), (["dog"], ("dog",)),
    (("Cat", "Mug"), ("Cat", "Mug")), (None, None),
])
def test_classes_take_a_comma_separated_string_or_a_sequence(value, expected):
    assert RunConfig(classes=value).classes == expected
    assert config_from(build_parser().parse_args(["detect", "x.mp4", "--classes", "person, car"])).classes == (
        "person", "car")


@pytest.mark.parametrize("value", ["", ",", "a,,b", [], [1], 5, ("a", " ")])
def test_bad_classes_name_the_setting(value):
    with pytest.raises(ConfigError) as e:
        RunConfig(classes=value)
    assert e.value.setting == "classes" and str(e.value).startswith("classes must be class names")


def test_classes_become_label_indices_and_an_unknown_one_lists_the_labels():
    from zerocopy.postprocess import label_indices

    labels = ("???", "Person", "Car", "Coffee cup")
    assert label_indices(("car", "PERSON", "coffee cup"), labels) == (2, 1, 3)  # case-insensitive, in the asked order
    with pytest.raises(ConfigError) as e:
        label_indices(("person", "truck"), labels)
    assert e.value.setting == "classes"
    assert "no class 'truck'" in str(e.value)
    assert "its classes: Person, Car, Coffee cup" in str(e.value)  # not the background, "???"
    with pytest.raises(ConfigError, match="needs a model with labels"):
        label_indices(("person",), ())


def test_bench_takes_classes_and_classify():
    args = build_parser().parse_args(["bench", "x.mp4", "--classes", "person", "--classify", "face-mesh",
                                      "--max-rois", "2", "--min-presence", "0.5"])
    c = config_from(args, BENCH_SETTINGS)
    assert (c.classes, c.classify, c.max_rois, c.min_presence) == (("person",), ("face-mesh",), 2, 0.5)


def test_a_copy_checks_only_what_changes_and_the_rules_between_settings(monkeypatch):
    """Settings are checked once, when given: `replace` and `resolve` check the values they change (and the rules
    between settings), not the whole configuration again."""
    from zerocopy.config import Kind

    config = RunConfig.make({"threshold": 0.3, "classes": ["Person"]})
    checked: list[str] = []
    real = Kind.check
    monkeypatch.setattr(Kind, "check", lambda self, name, value: checked.append(name) or real(self, name, value))
    made = config.replace(detect_fps=5, nireq=2)
    assert sorted(checked) == ["detect_fps", "nireq"]
    assert (made.detect_fps, made.nireq, made.threshold, made.classes) == (5.0, 2, 0.3, config.classes)
    assert config.detect_fps is None  # the original is untouched
    checked.clear()
    assert made.resolve(device="CPU").device == "CPU" and checked == ["device", "decode_threads"]
    with pytest.raises(ConfigError, match="threshold"):
        config.replace(threshold=2.0)
    with pytest.raises(ConfigError, match="anonymise needs every frame inferred"):
        config.replace(anonymise=["Person"], detect_fps=5)
    assert config.replace() is config
