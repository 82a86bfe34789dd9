"""zerocopy.config: where a setting may appear is said by its declaration alone (`setting(per_input=…,
serve_sets=…, camera_default=…, not_camera=…)`), and every list of settings is read from it: the record of an
input's own settings, serve's camera keys, what serve sets for every camera and a camera's defaults. Zones, lines
and motion masks are kept read (their specs), and printed in their one text form."""

import dataclasses
import json
import typing

import pytest

from zerocopy.analytics.specs import LineSpec, MaskSpec, ZoneSpec
from zerocopy.config import RunConfig
from zerocopy.errors import ConfigError
from zerocopy.input_settings import INPUT_SETTINGS, InputSettings, input_settings
from zerocopy.serve import camera_config

FIELDS = dataclasses.fields(RunConfig)


def declared_as(key: str) -> dict:
    """What the declarations say under `key`, read here from the fields themselves."""
    return {f.name: f.metadata[key] for f in FIELDS if key in f.metadata}


def test_an_inputs_own_settings_are_a_record_made_from_the_declarations():
    per_input = list(declared_as("per_input"))
    assert list(INPUT_SETTINGS) == per_input and {"detect_fps", "classes", "zones", "lines"} <= set(per_input)
    assert [f.name for f in dataclasses.fields(InputSettings)] == per_input
    hints, run = typing.get_type_hints(InputSettings), typing.get_type_hints(RunConfig)
    assert hints == {name: run[name] | None for name in per_input}  # each setting's type, or None: the run's
    assert InputSettings().given() == {}
    with pytest.raises(dataclasses.FrozenInstanceError):
        InputSettings().zones = ()  # type: ignore[misc]


def test_serves_lists_of_settings_are_the_declarations():
    assert declared_as("serve_sets") == camera_config.SERVICE_SETTINGS
    assert camera_config.SERVICE_SETTINGS == {"reconnect": True, "reconnect_timeout": 365 * 86400.0,
                                              "retry_open": True, "track": True}
    assert camera_config.CAMERA_DEFAULTS == declared_as("camera_default") == {"model": "objects", "detect_fps": 5.0,
                                                                              "motion": True}
    assert set(camera_config.NOT_CAMERA) == set(declared_as("not_camera")) == {"node", "snapshots"}
    others = set(camera_config.SERVICE_SETTINGS) | set(camera_config.NOT_CAMERA)
    assert set(camera_config.CAMERA_SETTINGS) == {f.name for f in FIELDS} - others
    assert set(INPUT_SETTINGS) <= set(camera_config.CAMERA_SETTINGS)  # a camera may have each of its own


def test_what_an_input_may_set_is_said_from_the_declarations():
    with pytest.raises(ConfigError) as e:
        input_settings({"zones": ["door:0,0,1,0,1,1"], "threshold": 0.5}, "per_input[0]")
    assert str(e.value) == f"per_input[0]: an input may set only {', '.join(INPUT_SETTINGS)}, not 'threshold' (a " \
        "setting of the whole run)"
    with pytest.raises(ConfigError) as e:  # every key it may not set, each with the nearest it may (issue 37's review)
        input_settings({"zone": ["door:0,0,1,0,1,1"], "clases": ["person"], "colour": "red"}, "per_input[1]")
    assert str(e.value).endswith(", not 'clases' (did you mean classes?), 'colour', 'zone' (did you mean zones?)")


def test_zones_lines_and_masks_are_kept_read_and_printed_as_text_that_reads_back():
    c = RunConfig(zones=["door:0,0,0.5,0,0.5,1:labels=person:min_frames=2"],
                  lines={"gate": {"points": [0.5, 0, 0.5, 1]}}, motion_mask=["0,0,0.2,0,0.2,0.1"])
    assert isinstance(c.zones[0], ZoneSpec) and c.zones[0].labels == ("person",) and c.zones[0].min_frames == 2
    assert isinstance(c.lines[0], LineSpec) and c.motion_mask == (MaskSpec(((0, 0), (0.2, 0), (0.2, 0.1))),)
    shown = c.to_dict(json_ready=True)
    assert (shown["zones"], shown["lines"], shown["motion_mask"]) == (
        ("door:0,0,0.5,0,0.5,1:labels=person:min_frames=2",), ("gate:0.5,0,0.5,1",), ("0,0,0.2,0,0.2,0.1",))
    assert RunConfig.make(json.loads(json.dumps(shown))) == c  # the bench's workers get the same configuration
    again = c.replace(zones=c.zones)
    assert again.zones[0] is c.zones[0]  # a spec given back is taken as it is, not read again


def test_a_zone_that_is_neither_text_nor_a_spec_is_a_config_error():
    with pytest.raises(ConfigError, match="a zone is text or a mapping, not 5"):
        RunConfig(zones=[5])
    with pytest.raises(ConfigError, match="a line is text or a mapping"):
        RunConfig(lines=RunConfig(zones=["door:0,0,1,0,1,1"]).zones)
