"""zerocopy.stages.figures and .records: a camera's figures kept from its records, and the protocol every record of
the stages speaks (the table in `stages.records`)."""

from __future__ import annotations

import pytest
from samplerecords import HIST, records

from zerocopy.analytics.records import CROSSINGS, IN_ZONE
from zerocopy.stages.figures import Family, Figures, Histogram
from zerocopy.stages.motion import ACTIVE
from zerocopy.stages.records import Record


def test_every_record_of_the_stages_speaks_the_protocol_as_its_table_says():
    kinds = {r.type: (r.logged, r.topic, r.retained) for r in records()}
    assert all(isinstance(r, Record) for r in records())
    assert kinds == {"end": (True, None, False), "cross": (True, "door/lines/gate", False),
                     "count": (False, "door/porch/person", True), "snapshot": (False, "door/person/snapshot", True),
                     "motion": (False, "door/motion", False), "regions": (False, None, False)}
    assert all(isinstance(r.to_record(), dict) and r.to_record()["type"] == r.type for r in records())


def test_records_measure_their_cameras_figures():
    figures = Figures()
    for r in records() + records()[1:2]:
        r.measure(figures)
    assert figures.get(CROSSINGS) == {("gate", "in", "person"): 2.0}
    assert figures.get(IN_ZONE) == {("porch", "person"): 2.0}
    assert figures.get(ACTIVE) == {(): 1.0}


def test_a_histogram_counts_each_observation_in_its_bucket_and_a_copy_stays_as_it_was():
    figures = Figures()
    for seconds in (0.5, 1.0, 3.0, 60.0):
        figures.observe(HIST, ("porch",), seconds)
    copy = figures.copy()
    figures.observe(HIST, ("porch",), 2.0)
    h = copy.get(HIST)[("porch",)]
    assert isinstance(h, Histogram) and h.counts == [2, 1, 1] and h.sum == 64.5 and h.count == 4
    assert h.cumulative() == [("1.0", 2), ("10.0", 3), ("+Inf", 4)]
    assert figures.get(HIST)[("porch",)].count == 5


def test_a_figure_used_against_its_declaration_is_an_error():
    with pytest.raises(ValueError):
        Figures().add(IN_ZONE, ("porch", "person"))  # a gauge is set, not added to
    with pytest.raises(ValueError):
        Figures().set(IN_ZONE, ("porch",), 1)  # one label short
    with pytest.raises(ValueError):
        Family(kind="histogram", name="x", help="x", buckets=(10.0, 1.0))
