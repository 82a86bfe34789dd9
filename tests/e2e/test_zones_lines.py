"""Zones and lines on scripted footage made from real photos (tests/support/passes.py), through the CLI and the
real face model at `--detect-fps 5`: exact crossing counts each way, zone entries and loitering at the right times,
one crossing for a person who stands jittering on the line; on the software and baseline paths."""

import json

import numpy as np
import pytest
from broker import Broker, Subscriber
from conftest import detect_quiet, read_jsonl, wait_until
from passes import write_passes_clip, write_path_clip

FPS = 15
LINE = "gate:0.5,0,0.5,1"  # looking down the frame, its right-hand side is the frame's left: left to right is `in`
LEFT = "left:0,0,0.5,0,0.5,1,0,1"


@pytest.fixture(scope="module")
def walks(tmp_path_factory):
    path = tmp_path_factory.mktemp("walks") / "walks.mp4"
    return path, write_passes_clip(path, passes=6, fps=FPS, seed=3)


@pytest.mark.parametrize("path", ["software", "baseline"])
def test_passes_cross_the_line_once_each_way(walks, tmp_path, path):
    clip, passes = walks
    events = tmp_path / "events.jsonl"
    assert detect_quiet(clip, "--path", path, "--detect-fps", "5", "--line", LINE, "--zone", LEFT,
                        "--events", events) == 0
    records = read_jsonl(events)
    crossings = [e for e in records if e["type"] == "cross"]
    # passes alternate: the even ones walk left to right (`in`), the odd ones back (`out`)
    assert [c["direction"] for c in crossings] == ["in", "out"] * (len(passes) // 2)
    for c, p in zip(crossings, passes, strict=True):
        assert p.first / FPS <= c["pts"] <= p.last / FPS
    news = [e for e in records if e["type"] == "new"]
    assert [c["id"] for c in crossings] == [e["id"] for e in news]
    ends = [e for e in records if e["type"] == "end"]
    assert len(ends) == len(passes) and all(e["entered_zones"] == ["left"] for e in ends)
    # each pass enters the left half once (an `update` with the zone) and leaves it once, whichever way it walks
    entering = [e for e in records if e["type"] == "update" and e["current_zones"] == ["left"]]
    assert len({e["id"] for e in entering}) == len(passes)


def test_a_person_standing_on_the_line_is_counted_once_and_loiters(tmp_path):
    rng = np.random.default_rng(1)
    walk_in = list(np.linspace(0.1, 0.5, 2 * FPS))
    on_line = [0.5 + float(rng.uniform(-0.006, 0.006)) for _ in range(4 * FPS)]  # ±4 px for 4 s
    walk_out = list(np.linspace(0.5, 0.9, 2 * FPS))
    clip = tmp_path / "standing.mp4"
    write_path_clip(clip, [None] * FPS + walk_in + on_line + walk_out + [None] * 2 * FPS, fps=FPS, noise=2.0)
    events = tmp_path / "events.jsonl"
    middle = "middle:0.4,0,0.6,0,0.6,1,0.4,1:min_frames=2:loiter_s=3"
    assert detect_quiet(clip, "--path", "software", "--detect-fps", "5", "--line", LINE, "--zone", middle,
                        "--events", events) == 0
    records = read_jsonl(events)
    assert [e["direction"] for e in records if e["type"] == "cross"] == ["in"]
    loiters = [e for e in records if e["type"] == "loiter"]
    assert len(loiters) == 1 and loiters[0]["zone"] == "middle"
    entered = next(e for e in records if e["type"] == "update" and e["current_zones"] == ["middle"])
    # 3 s after it was first in the zone, within one inferred frame (0.2 s)
    assert loiters[0]["last_pts"] - entered["last_pts"] == pytest.approx(3.0, abs=0.21)


def test_counts_and_crossings_reach_the_broker(walks, tmp_path):
    clip, _ = walks
    with Broker() as broker, Subscriber(broker) as sub:
        assert sub.wait_subscribed()
        assert detect_quiet(clip, "--path", "software", "--detect-fps", "5", "--line", LINE, "--zone", LEFT,
                            "--publish", broker.url(), "--name", "door") == 0
        wait_until(lambda: len(sub.on("door/lines/gate")) == 6, what="the six crossings on the line's topic")
        crossings = [json.loads(p) if isinstance(p, str | bytes) else p for p in sub.on("door/lines/gate")]
        assert [c["direction"] for c in crossings] == ["in", "out"] * 3
        wait_until(lambda: sub.on("door/face") and sub.on("door/left/face"), what="the retained counts")
        # the last count said is 0: everyone has left by the end of the clip
        assert int(sub.on("door/face")[-1]) == 0 and int(sub.on("door/left/face")[-1]) == 0
        assert max(int(v) for v in sub.on("door/face")) == 1


@pytest.mark.parametrize("motion", [False, True], ids=["every-5th", "motion-gate"])
def test_each_pass_is_one_rise_and_one_fall_and_a_zone_never_exceeds_its_camera(walks, motion):
    """The counts follow the tracks, not the last inferred frame: a face the detector misses for a frame, or one on
    frames the motion gate leaves out, keeps its count (issue 36: `1, 0, 1, 0` within one pass before)."""
    clip, passes = walks
    with Broker() as broker, Subscriber(broker, "zerocopy/door/#") as sub:
        assert detect_quiet(clip, "--path", "software", "--detect-fps", "5", "--zone", LEFT,
                            *(["--motion"] if motion else []), "--publish", broker.url(), "--name", "door") == 0
        wait_until(lambda: len(sub.on("door/face")) >= 2 * len(passes), what="a rise and a fall for each pass")
        with sub._lock:
            counts = [(topic.removeprefix("zerocopy/door/"), int(p)) for topic, p, _ in sub.messages
                      if topic in ("zerocopy/door/face", "zerocopy/door/left/face")]
    assert [n for topic, n in counts if topic == "face"] == [1, 0] * len(passes), counts
    now = {"face": 0, "left/face": 0}
    for topic, n in counts:
        now[topic] = n
        assert now["left/face"] <= now["face"], counts
