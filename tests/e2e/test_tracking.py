"""Tracking and object events on scripted footage: people (real face photos) walk across the picture one
after the other (tests/support/passes.py). Targets (issue 18): ≥ 95 % of passes make exactly one object id
from `new` to `end`; `new` comes ≤ 1.0 s (p95) after the object's first frame; the same at `--detect-fps 5`,
where the tracker carries ids across the frames that are not inferred."""

import json

import numpy as np
import pytest
from conftest import detect_quiet, read_jsonl
from passes import write_passes_clip

import zerocopy

FPS = 15


@pytest.fixture(scope="module")
def walks(tmp_path_factory):
    path = tmp_path_factory.mktemp("passes") / "walks.mp4"
    return path, write_passes_clip(path, passes=8, fps=FPS, seed=3)


def score_passes(events: list[dict], passes) -> dict:
    """Per pass, the ids whose sightings overlap it; each id's event types; the `new` delay after the pass's
    first frame (seconds of media time)."""
    by_id: dict[str, list[dict]] = {}
    for e in events:
        by_id.setdefault(e["id"], []).append(e)
    spans = {i: (min(e["first_pts"] for e in es), max(e["last_pts"] for e in es)) for i, es in by_id.items()}
    clean, delays = 0, []
    for p in passes:
        first, last = p.first / FPS, p.last / FPS
        ids = [i for i, (a, b) in spans.items() if a <= last + 0.5 and b >= first - 0.5]
        if len(ids) == 1 and [e["type"] for e in by_id[ids[0]]][0] == "new" \
                and [e["type"] for e in by_id[ids[0]]].count("end") == 1 and by_id[ids[0]][-1]["type"] == "end":
            clean += 1
            new = by_id[ids[0]][0]
            delays.append(new["last_pts"] - first)  # the frame that made it `new`, after the pass's first
    stray = [i for i, (a, b) in spans.items()
             if not any(a <= p.last / FPS + 0.5 and b >= p.first / FPS - 0.5 for p in passes)]
    return {"clean": clean / len(passes), "delays": delays, "stray": stray, "ids": len(by_id)}


@pytest.mark.parametrize("rate", [None, 5])
def test_each_pass_is_one_object_from_new_to_end(walks, tmp_path, rate):
    clip, passes = walks
    events, frames = tmp_path / "events.jsonl", tmp_path / "frames.jsonl"
    extra = ["--detect-fps", str(rate)] if rate else []
    assert detect_quiet(clip, "--path", "software", "--events", events, "--json", frames, *extra) == 0
    got = score_passes(read_jsonl(events), passes)
    assert got["clean"] >= 0.95, got  # measured: 1.0 (8 of 8) at 15 fps and at --detect-fps 5
    assert got["stray"] == [], got
    assert float(np.percentile(got["delays"], 95)) <= 1.0, got  # measured p95: 0.20 s at 15 fps, 0.60 s at 5
    lines = read_jsonl(frames)
    ids = {d["tracker_id"] for rec in lines for d in rec["detections"] if "tracker_id" in d}
    assert len(ids) == got["ids"]  # the frames' tracker ids are the events' objects
    if rate:
        between = [rec for rec in lines if rec.get("inferred") is False]
        assert len(between) > len(lines) // 2
        carried = [d for rec in between for d in rec["detections"]]
        assert carried and all("tracker_id" in d for d in carried)  # boxes between inferences keep their ids


def test_the_api_gives_ids_events_and_a_summary(walks):
    clip, passes = walks
    heard = []
    with zerocopy.Detector(path="software", track=True, max_lost=1.0) as det:
        results = list(det.run(clip, on_event=heard.append))
        report = det.report()
    in_results = [e for r in results for e in r.events]
    assert [e.to_record() for e in in_results] == [e.to_record() for e in heard]
    counts = [e for e in heard if e.type == "count"]  # how many faces are in view, when it changes
    assert counts and counts[-1].count == 0 and {c.count for c in counts} == {0, 1}
    heard = [e for e in heard if e.type != "count"]
    assert {e.type for e in heard} == {"new", "end"}
    news = [e for e in heard if e.type == "new"]
    assert len(news) == len(passes) == len({e.id for e in heard})
    tracked = [r for r in results if len(r.detections)]
    assert tracked and all(r.detections.tracker_id is not None for r in tracked)
    assert report["tracking"]["objects"] == len(passes)
    dwell = report["tracking"]["per_label"]["face"]["mean_dwell_s"]
    assert 1.0 <= dwell <= 3.0  # each walk is seen about 2 s
    json.dumps(report)
