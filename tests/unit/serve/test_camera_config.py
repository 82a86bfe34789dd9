"""zerocopy.serve.camera_config: a camera's settings checked once into one frozen record (`CameraConfig.run`), the
one the label checks, the engine's groups, the overlay, the stages and Home Assistant's discovery take; its zones,
lines and motion masks read once, in the check, and carried as their specs from there on."""

import dataclasses
import tomllib
from collections import Counter

import pytest

from zerocopy.analytics import specs
from zerocopy.analytics.lines import Lines
from zerocopy.analytics.zones import Zones
from zerocopy.config import RunConfig
from zerocopy.input_settings import InputSettings, input_settings
from zerocopy.motion.gate import MotionSpec
from zerocopy.publish.homeassistant import entity_labels, zone_labels
from zerocopy.serve.config import ServeConfigError, parse_config
from zerocopy.serve.engine import group_cameras
from zerocopy.sinks.overlay import Overlay

CONFIG = """
[cameras.front]
url = "rtsp://cam.lan/1"
zones = ["door:0,0,0.5,0,0.5,1:labels=person"]
lines = ["gate:0.5,0,0.5,1"]
motion_mask = ["0,0,0.2,0,0.2,0.1"]
[cameras.back]
url = "rtsp://cam.lan/2"
[cameras.back.zones.yard]
points = [[0, 0], [1, 0], [1, 1]]
labels = ["car"]
[cameras.side]
url = "rtsp://cam.lan/3"
threshold = 0.8
"""


def load(tmp_path, text: str = CONFIG):
    return parse_config(tomllib.loads(text), env={}, base=tmp_path)


def test_a_cameras_zones_lines_and_masks_are_read_once_and_every_consumer_takes_the_specs(tmp_path, monkeypatch):
    calls: Counter = Counter()
    for name in ("parse_zone", "zone_from", "parse_line", "line_from", "parse_mask"):
        real = getattr(specs, name)
        monkeypatch.setattr(specs, name, lambda *a, _real=real, _name=name: calls.update([_name]) or _real(*a))
    front, back, side = load(tmp_path).cameras
    groups = group_cameras([front, back, side])
    names = ["person", "car"]
    for camera in (front, back):
        own = InputSettings.of(camera.run)
        assert input_settings(own) is own and own.zones is camera.run.zones  # the API takes the record as it is
        overlay = Overlay.of(own.of_run(groups[0][0]))
        assert overlay is not None and overlay.zones[0] is camera.run.zones[0]  # the very spec, not read again
        Zones(camera.run.zones, names), Lines(camera.run.lines, names)
        entity_labels(camera.run), zone_labels(camera.run, names)
    assert MotionSpec.of(front.run, luma=lambda frame: frame).masks == (front.run.motion_mask[0].points,)
    # one reading each: the text zone (its text, then its mapping), the line, the mask, the [zones.yard] table
    assert calls == Counter(parse_zone=1, zone_from=2, parse_line=1, line_from=1, parse_mask=1)


def test_a_cameras_record_is_frozen_and_holds_serves_settings_and_its_defaults(tmp_path):
    front, back, side = load(tmp_path).cameras
    assert isinstance(front.run, RunConfig) and front.run.track and front.run.reconnect and front.run.retry_open
    assert (front.run.model, front.run.detect_fps, front.run.motion) == ("objects", 5.0, True)
    assert side.run.threshold == 0.8 and back.run.zones[0].labels == ("car",)
    with pytest.raises(dataclasses.FrozenInstanceError):
        front.run.detect_fps = 1.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        front.run = RunConfig()  # type: ignore[misc]


def test_cameras_that_differ_only_in_their_own_settings_share_a_group(tmp_path):
    front, back, side = load(tmp_path).cameras
    (shared, members), (other, alone) = group_cameras([front, back, side])
    assert members == [front, back] and alone == [side]
    assert shared.zones == () and shared.detect_fps is None and shared.track  # each camera's own given it apart
    assert other.threshold == 0.8 and shared.threshold is None


def test_a_rule_between_a_cameras_settings_is_one_problem_and_the_others_are_still_said(tmp_path):
    with pytest.raises(ServeConfigError) as e:
        load(tmp_path, '[cameras.a]\nurl = "rtsp://cam.lan/1"\nzones = ["x:0,0,1,0,1,1"]\nlines = ["x:0,0,1,1"]\n'
                       '[cameras.b]\nurl = "rtsp://cam.lan/2"\nzones = ["y:0,0,1,0,1,1:labels=dragon"]\n'
                       'threshold = 7\nclasses = "unicorn"\n')
    found = e.value.problems
    assert len(found) == 4 and found[:2] == [
        "[cameras.a] a zone and a line are both named 'x': each needs its own name (they share MQTT topics)",
        "[cameras.b] threshold: threshold must be a number in (0, 1] (or None: the model's own), not 7"]
    assert found[2].startswith("[cameras.b] classes: the model has no class 'unicorn'")  # (checked on its record)
    assert found[3].startswith("[cameras.b] zone y: the model has no label 'dragon'")


def test_a_cameras_filters_are_read_from_its_tables_and_a_label_the_model_lacks_is_a_problem(tmp_path):
    config = load(tmp_path, '[cameras.a]\nurl = "rtsp://cam.lan/1"\nmodel = "objects"\n[cameras.a.filters.person]\n'
                            'min_area = 5000\nmask = ["0,0,0.5,0,0.5,1"]\n')
    (spec,) = config.cameras[0].run.filters
    assert (spec.label, spec.min_area, len(spec.mask)) == ("person", 5000, 1)
    with pytest.raises(ServeConfigError) as e:
        load(tmp_path, '[cameras.a]\nurl = "rtsp://cam.lan/1"\nmodel = "objects"\n[cameras.a.filters.dragon]\n'
                       'min_score = 0.6\n[cameras.a.filters.person]\nmin_area = -1\n')
    assert [p.split(" (its labels")[0] for p in e.value.problems] == [
        "[cameras.a] filters: filter person: min_area is a number ≥ 0 (an area: a fraction of the frame "
        "when below 1, else pixels), not -1"]
    with pytest.raises(ServeConfigError) as e:
        load(tmp_path, '[cameras.a]\nurl = "rtsp://cam.lan/1"\nmodel = "objects"\n[cameras.a.filters.dragon]\n'
                       'min_score = 0.6\n')
    assert [p.split(" (its labels")[0] for p in e.value.problems] == [
        "[cameras.a] filter dragon: the model has no label 'dragon'"]
