"""The decode gate (`--decode-gate auto`, issue 40) on footage encoded as a camera encodes it (tests/support/
cameraclips.py: a keyframe every 2 s, no B-frames, sensor noise): the same objects, with the same `new` and `end`
events and line crossings, as with every frame decoded, while far fewer frames are decoded; a constant-bit-rate
stream turns the gate off and says so; a scene whose brightness jumps (infrared) breaks nothing. CPU figures come from
scripts/bench_decode_gate.py, not from here."""

from __future__ import annotations

import logging
import time

import pytest
from cameraclips import Walk, write_camera_clip

import zerocopy

pytestmark = pytest.mark.slow

LINE = "gate:0.5,0,0.5,1"
WALKS = (Walk(12.3), Walk(21.7, leftwards=True), Walk(31.1))  # entering early, late and mid keyframe interval


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    folder = tmp_path_factory.mktemp("camera")
    made = {"quiet": folder / "quiet.mp4", "cbr": folder / "cbr.mp4", "infrared": folder / "infrared.mp4"}
    write_camera_clip(made["quiet"], 40.0, WALKS, seed=1)
    write_camera_clip(made["cbr"], 20.0, (Walk(11.5),), cbr=True, seed=2)
    write_camera_clip(made["infrared"], 26.0, (Walk(17.3),), infrared_at=11.0, seed=3)
    return made


def run(clip, gate: str, path: str = "software") -> tuple[list, list[tuple], dict | None]:
    """The results, the object events and crossings (without ids), and the decode gate's report."""
    heard = []
    with zerocopy.Detector(path=path, detect_fps=5, track=True, motion=True, lines=(LINE,),
                           decode_gate=gate) as det:
        results = list(det.run(clip, on_event=lambda e: heard.append(e.to_record())))
        report = det.report()
    events = [(e["type"], e.get("label"), e.get("first_pts"), e.get("last_pts"), e.get("direction"))
              for e in heard if e["type"] in ("new", "end", "cross")]
    (source,) = report["inputs"]
    return results, events, (source.get("damage") or {}).get("decode_gate")


@pytest.mark.parametrize("path", ["software"])
def test_the_gate_decodes_a_fraction_and_finds_the_same_objects_at_the_same_times(clips, path):
    plain, plain_events, off_report = run(clips["quiet"], "off", path)
    gated, events, report = run(clips["quiet"], "auto", path)
    assert off_report is None
    assert events == plain_events
    assert [e[0] for e in events].count("new") == len(WALKS) and [e[0] for e in events].count("cross") == len(WALKS)
    assert len(gated) == len(plain) and [r.pts for r in gated] == [r.pts for r in plain]  # every frame still counts
    assert report["off"] is None and report["frames"] == len(plain)
    assert report["decoded_share"] < 0.7, report  # 40 s: ~7 s calibrating, three walks + max_lost; measured 0.605
    assert report["catch_ups"] >= len(WALKS) and report["opened_by"].get("packet size")


def test_a_constant_bit_rate_stream_turns_the_gate_off_and_says_so(clips, caplog):
    plain, plain_events, _ = run(clips["cbr"], "off")
    with caplog.at_level(logging.WARNING, logger="zerocopy"):
        gated, events, report = run(clips["cbr"], "auto")
    assert "constant bit rate" in report["off"]
    assert report["decoded"] >= report["frames"]
    said = [r.getMessage() for r in caplog.records if "decode gate is off" in r.getMessage()]
    assert len(said) == 1 and "constant bit rate" in said[0]
    assert events == plain_events


def test_a_brightness_jump_breaks_nothing(clips):
    plain, plain_events, _ = run(clips["infrared"], "off")
    gated, events, report = run(clips["infrared"], "auto")
    assert report["off"] is None and report["decoded_share"] < 0.9, report
    assert events == plain_events and [e[0] for e in events].count("new") == 1


def inferred_of(clip, gate: str, slow_s: float) -> tuple[list[int], list[tuple]]:
    """The indexes of the frames inferred and the events, the caller taking `slow_s` over each inferred result."""
    heard, inferred = [], []
    with zerocopy.Detector(detect_fps=5, track=True, motion=True, lines=(LINE,), decode_gate=gate) as det:
        for r in det.run(clip, on_event=lambda e: heard.append(e.to_record())):
            if r.inferred:
                inferred.append(r.index)
                time.sleep(slow_s)
    return inferred, [(e["type"], e.get("first_pts"), e.get("last_pts")) for e in heard if e["type"] in ("new", "end")]


@pytest.mark.parametrize("gate", ["off", "auto"])
def test_a_file_infers_the_same_frames_however_fast_its_results_are_taken(clips, gate):
    """What the gate asks the stages (a tracked object moving, an end due) is read once they have seen the frames
    inferred before, on a file: a caller slow to take its results (the feeder runs ahead) changes nothing."""
    fast = inferred_of(clips["quiet"], gate, 0.0)
    assert fast == inferred_of(clips["quiet"], gate, 0.03)
