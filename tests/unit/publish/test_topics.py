"""zerocopy.publish.topics: a label from a labels file made one topic level, and every topic that holds a label (the
counts, the snapshots, Home Assistant's configs and ids) made with it (issue 36: `front/door` and `snap#` went into
topics as they were). Through a real broker and serve: tests/e2e/test_serve.py."""

from pathlib import Path

import pytest

from zerocopy.publish.homeassistant import discover
from zerocopy.publish.target import topic_level_problem
from zerocopy.publish.topics import count_topic, snapshot_topic, topic_label
from zerocopy.serve.config import parse_config


@pytest.mark.parametrize(("label", "level"), [
    ("front/door", "front_door"), ("snap#", "snap"), ("a+b", "a_b"), ("Person", "person"), ("x\0y", "x_y"),
    ("traffic light", "traffic light"), ("/#+", "label"), ("events", "events_"), ("Snapshot", "snapshot_"),
    ("motion", "motion_")])
def test_a_label_is_made_one_topic_level(label, level):
    assert topic_label(label) == level
    assert topic_level_problem(level) is None


def test_counts_and_snapshots_hold_the_label_as_one_level():
    assert count_topic("door", None, "front/door") == "door/front_door"
    assert count_topic("door", "porch", "snap#") == "door/porch/snap"
    assert snapshot_topic("door", "Front/Door") == "door/front_door/snapshot"


def test_home_assistant_reads_the_slugged_topics_of_a_labels_file(tmp_path):
    (tmp_path / "labels.txt").write_text("front/door\nsnap#\nevents\n")
    (tmp_path / "model.xml").write_text("")  # a model of ones own (only its labels file is read here)
    raw = {"node": "box1", "publish": {"url": "mqtt://127.0.0.1:1883/zc"}, "homeassistant": {},
           "cameras": {"cam": {"url": "rtsp://cam.lan/1", "model": str(tmp_path / "model.xml"),
                               "labels": str(tmp_path / "labels.txt"),
                               "zones": {"porch": {"points": [[0, 0], [1, 0], [1, 1]]}}}}}
    found = discover(parse_config(raw, env={}, base=Path(".")).cameras, "box1", "zc")
    assert found.counts == ["cam/front_door", "cam/snap", "cam/events_", "cam/porch/front_door", "cam/porch/snap",
                            "cam/porch/events_"]
    read = [t for c in found.configs.values() for k, t in c.items() if k.endswith("_topic")]
    assert {t for t in read if "snapshot" in t} == {f"zc/cam/{x}/snapshot" for x in ("front_door", "snap", "events_")}
    for topic in read + list(found.configs):
        assert [topic_level_problem(level) for level in topic.split("/")] == [None] * len(topic.split("/")), topic
