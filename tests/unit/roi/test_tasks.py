"""`--classify MODEL[:LABEL,...]` items, as the API and the CLI give them."""

import pytest

from zerocopy.config import RunConfig
from zerocopy.errors import ConfigError
from zerocopy.roi.tasks import RoiTask, parse_task


@pytest.mark.parametrize(("item", "task"), [
    ("face-mesh", RoiTask("face-mesh")),
    ("face-mesh:face", RoiTask("face-mesh", ("face",))),
    (" handedness:hand , person ", RoiTask("handedness", ("hand", "person"))),
    ("./models/cls.xml:Car,Vehicle", RoiTask("./models/cls.xml", ("Car", "Vehicle"))),
])
def test_items_name_a_model_and_the_labels_it_runs_on(item, task):
    assert parse_task(item) == task


def test_a_file_whose_name_holds_a_colon_is_taken_whole(tmp_path):
    f = tmp_path / "cls:v2.xml"
    f.write_text("")
    assert parse_task(str(f)) == RoiTask(str(f))


@pytest.mark.parametrize("item", ["", "face-mesh:", "face-mesh:face,,car", ":face"])
def test_malformed_items_are_config_errors(item):
    with pytest.raises(ConfigError):
        parse_task(item)


def test_the_setting_takes_one_string_or_a_sequence_and_refuses_the_rest():
    assert RunConfig(classify="face-mesh").classify == ("face-mesh",)
    assert RunConfig(classify=["face-mesh:face", "x.xml"]).classify == ("face-mesh:face", "x.xml")
    for bad in (3, ["face-mesh", 4], ["face-mesh:"], [""]):
        with pytest.raises(ConfigError, match="classify"):
            RunConfig(classify=bad)
    with pytest.raises(ConfigError, match="max_rois"):
        RunConfig(max_rois=0)
    with pytest.raises(ConfigError, match="min_presence"):
        RunConfig(min_presence=1.5)


def test_the_setting_is_read_by_the_one_grammar_when_given():
    """`classify` is checked by `parse_task` when the configuration is made (one grammar, one place), written back
    as it reads it, and `tasks` gives the items read; `min_presence` without a region model is refused there too."""
    config = RunConfig(classify=["face-mesh: face , Person", "handedness"])
    assert config.classify == ("face-mesh:face,Person", "handedness")
    assert config.tasks == (RoiTask("face-mesh", ("face", "Person")), RoiTask("handedness"))
    with pytest.raises(ConfigError, match="MODEL:LABEL,LABEL..., not 'face-mesh:face,,car'"):
        RunConfig(classify=["face-mesh:face,,car"])
    with pytest.raises(ConfigError, match="min_presence needs a landmark model"):
        RunConfig(min_presence=0.5)
    assert RunConfig(classify=["face-mesh"], min_presence=0.5).min_presence == 0.5
