"""`filters` read once into `FilterSpec`s: from the command line's text, the API's and serve's mappings, back from
their text form, as an input's own setting; every wrong value said, naming the filter."""

from __future__ import annotations

import pytest

from zerocopy.analytics.filter_specs import FilterSpec
from zerocopy.config import RunConfig
from zerocopy.errors import ConfigError
from zerocopy.input_settings import input_settings

SQUARE = ((0.0, 0.0), (0.5, 0.0), (0.5, 1.0), (0.0, 1.0))


def test_the_command_lines_text():
    (person, car) = RunConfig(filters=["person:min_area=5000:max_ratio=1.5:min_score=0.5",
                                       "car:mask=0,0,0.5,0,0.5,1,0,1:mask=1,1,2,1,2,2:threshold=0.7"]).filters
    assert person == FilterSpec(label="person", min_area=5000, max_ratio=1.5, min_score=0.5)
    assert car.threshold == 0.7 and car.mask == (SQUARE, ((1, 1), (2, 1), (2, 2)))
    assert not FilterSpec(label="car", threshold=0.7).drops and person.drops and car.drops


def test_a_mapping_as_the_api_and_toml_give_it():
    (spec,) = RunConfig(filters={"person": {"min_area": 5000, "max_area": 100000, "min_ratio": 0.2,
                                            "mask": [[0, 0], [0.5, 0], [0.5, 1], [0, 1]]}}).filters
    assert (spec.label, spec.min_area, spec.max_area, spec.min_ratio, spec.mask) == \
        ("person", 5000, 100000, 0.2, (SQUARE,))
    (two,) = RunConfig(filters={"dog": {"mask": ["0,0,0.5,0,0.5,1,0,1", "0,0,0.5,0,0.5,1,0,1"]}}).filters
    assert len(two.mask) == 2


def test_the_text_form_reads_back_into_the_same_specs():
    config = RunConfig(filters={"person": {"min_score": 0.45, "threshold": 0.7, "min_area": 0.01, "max_area": 90000,
                                           "min_ratio": 0.25, "max_ratio": 4, "mask": "0,0,0.5,0,0.5,1,0,1"}})
    texts = config.to_dict()["filters"]
    assert texts == ("person:min_score=0.45:threshold=0.7:min_area=0.01:max_area=90000:min_ratio=0.25:max_ratio=4:"
                     "mask=0,0,0.5,0,0.5,1,0,1",)
    assert RunConfig.make(config.to_dict()).filters == config.filters


def test_an_input_has_filters_of_its_own():
    own = input_settings({"filters": {"car": {"min_score": 0.8}}})
    assert own.filters == (FilterSpec(label="car", min_score=0.8),)
    assert own.of_run(RunConfig(filters=["person:min_score=0.5"])).filters == own.filters


@pytest.mark.parametrize(("value", "said"), [
    ("person", "a filter is LABEL:key=value"),
    ("person:min_area", "filter person: 'min_area' is not one of min_score=..."),
    ("person:size=4", "filter person: 'size=4' is not one of"),
    ("person:min_score=0.5:min_score=0.6", "filter person: min_score is given twice"),
    ({"person": {"min_score": 1.5}}, "filter person: min_score is a score in (0, 1], not 1.5"),
    ({"person": {"threshold": 0}}, "filter person: threshold is a score in (0, 1], not 0"),
    ({"person": {"min_area": -1}}, "filter person: min_area is a number ≥ 0"),
    ({"person": {"max_ratio": "wide"}}, "filter person: max_ratio is a number ≥ 0"),
    ({"person": {"min_area": True}}, "filter person: min_area is a number ≥ 0"),
    ({"person": {"min_area": 9000, "max_area": 5000}}, "filter person: min_area 9000 is above max_area 5000"),
    ({"person": {"min_ratio": 2, "max_ratio": 0.5}}, "filter person: min_ratio 2 is above max_ratio 0.5"),
    ({"person": {"mask": "0,0,1,1"}}, "filter person: mask: a polygon needs at least 3 points, not 2"),
    ({"person": {"speed": 3}}, "filter person: unknown key 'speed'"),
    ({"person": 0.5}, "filter person: a table of min_score"),
    (["person:min_score=0.5", "Person:max_area=9"], "two filters are for the label 'person'"),
])
def test_each_wrong_value_is_said(value, said):
    with pytest.raises(ConfigError) as caught:
        RunConfig(filters=value)
    assert caught.value.setting == "filters" and said in str(caught.value)


def test_an_area_in_pixels_and_one_as_a_fraction_are_not_compared():
    (spec,) = RunConfig(filters={"person": {"min_area": 0.5, "max_area": 100}}).filters  # half the frame, 100 px
    assert (spec.min_area, spec.max_area) == (0.5, 100)
    (spec,) = RunConfig(filters={"person": {"min_area": 0.5, "max_area": 1}}).filters  # half the frame, 1 px
    assert (spec.min_area, spec.max_area, spec.text) == (0.5, 1, "person:min_area=0.5:max_area=1")


def test_an_area_of_1_and_above_is_pixels_compared_as_such():
    with pytest.raises(ConfigError) as caught:
        RunConfig(filters=["person:min_area=5:max_area=1"])
    assert "filter person: min_area 5 is above max_area 1" in str(caught.value)
