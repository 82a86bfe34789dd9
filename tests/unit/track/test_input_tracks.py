"""`InputTracks`: an input's tracker and events in the run loop — first sightings, and a new time base when
the timestamps go back (a looping stream), jump ahead, or a live input goes silent for longer than max_lost."""

import time

import numpy as np

from zerocopy.config import RunConfig
from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame
from zerocopy.input_settings import input_settings
from zerocopy.stages import InputInfo
from zerocopy.track.stage import InputTracks

RATE = 10.0


def face(x: float = 100.0) -> Detections:
    return Detections(np.array([[x, 50, x + 60, 110]], np.float32), np.array([0.9], np.float32),
                      np.array([0], np.int32))


def frame(index: int, pts: float, arrived: float | None = None) -> PreparedFrame:
    return PreparedFrame(index=index, pts=pts, width=640, height=360, geometry=None, inputs={}, arrived=arrived)


def tracks(**settings) -> InputTracks:
    t = InputTracks(RunConfig.make({"track": True, **settings}), ("face",))
    t.begin(InputInfo(index=0, source="rtsp://cam", camera="cam", rate=RATE))
    return t


def test_new_counts_the_first_sighting_and_starts_there():
    t = tracks(min_hits=2)
    t(frame(0, 0.0), Detections.empty(), 0)
    out = [e for i in range(1, 4) for e in t(frame(i, i / RATE), face(), 0)[1]]
    (new,) = out
    assert new.type == "new" and new.first_pts == 0.1 and new.last_pts == 0.2 and new.frames == 2


def test_timestamps_going_back_end_the_objects_and_start_again():
    t = tracks(min_hits=2)
    events = []
    for loop in range(3):  # a 2 s clip served in a loop: its timestamps start again at 0 each time
        for i in range(20):
            events += t(frame(loop * 20 + i, i / RATE), face(100 + 5 * i), 0)[1]
    events += t.end(0)
    kinds = [e.type for e in events]
    assert kinds == ["new", "end"] * 3, kinds
    assert len({e.id for e in events}) == 3
    assert all(e.first_pts <= e.last_pts for e in events)


def test_a_live_input_silent_longer_than_max_lost_ends_its_objects():
    t = tracks(min_hits=2, max_lost=1.0)
    now = time.perf_counter()
    events = []
    for i in range(10):  # 1 s of frames, then 3 s of nothing (an outage), timestamps carried on after it
        events += t(frame(i, i / RATE, arrived=now - 4.0 + i / RATE), face(), 0)[1]
    events += t(frame(10, 1.0, arrived=now), face(), 0)[1]
    assert [e.type for e in events] == ["new", "end"]
    events += t(frame(11, 1.1, arrived=now + 0.1), face(), 0)[1]
    assert [e.type for e in events] == ["new", "end", "new"] and events[2].id != events[0].id


def test_a_file_read_fast_or_slow_makes_the_same_events():
    t = tracks(min_hits=2)
    events = [e for i in range(30) for e in t(frame(i, i / RATE), face(), 0)[1]] + t.end(0)
    assert [e.type for e in events] == ["new", "end"]


def test_ends_come_at_the_last_frame_before_a_jump_and_before_the_input_ended():
    t = tracks(min_hits=2, max_lost=1.0)
    now = time.perf_counter()
    events = []
    for i in range(10):  # 1 s of frames, then the timestamps jump 4 s ahead (with no outage in Unix time)
        events += t(frame(i, i / RATE, arrived=now - 2.0 + i / RATE), face(), 0)[1]
    for i in range(10):
        events += t(frame(10 + i, 5.0 + i / RATE, arrived=now - 1.0 + i / RATE), face(), 0)[1]
    events += t.end(0)
    assert [e.type for e in events] == ["new", "end", "new", "end"]
    wall0 = events[0].frame_time - 0.1  # the first `new` came at the second frame
    assert abs(events[1].frame_time - (wall0 + 0.9)) < 0.05  # the frame before the jump
    assert abs(events[3].frame_time - (wall0 + 1.9)) < 0.05  # the input's last frame
    assert events[1].last_pts == 0.9 and events[3].last_pts == 5.9


def test_a_filters_threshold_is_the_inputs_own_else_the_runs():
    """The run's `face:threshold=0.95` holds every 0.9 face's `new` back; an input with filters of its own (none for
    face) confirms it at min_hits."""
    def news(t: InputTracks) -> list[str]:
        return [e.type for i in range(6) for e in t(frame(i, i / RATE), face(), 0)[1]]

    assert news(tracks(min_hits=2, filters=["face:threshold=0.95"])) == []
    own = InputTracks(RunConfig.make({"track": True, "min_hits": 2, "filters": ["face:threshold=0.95"]}), ("face",))
    own.begin(InputInfo(index=0, source="rtsp://cam", camera="cam", rate=RATE,
                        settings=input_settings({"filters": ["face:min_score=0.5"]})))
    assert news(own) == ["new"]
