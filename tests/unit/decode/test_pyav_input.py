"""zerocopy.decode.pyav_input: the timeline of a live source's frames across its drops; what its end or
a reading error means."""

from __future__ import annotations

import threading

import av
import pytest

from zerocopy.decode.damage import LiveReport
from zerocopy.decode.live import LivePolicy
from zerocopy.decode.pyav_input import PyAVInput, Timeline


def test_timestamps_go_on_across_a_drop_from_the_last_frames_plus_the_time_without_frames():
    live = LiveReport()
    timeline = Timeline(live)
    assert timeline.stamp(0.0, 100.0) == 0.0 and timeline.stamp(0.04, 100.04) == 0.04
    assert timeline.dropped() == 100.04  # since the last frame
    assert timeline.dropped() == 100.04  # dropped again before a frame came: still since then
    assert timeline.stamp(0.0, 102.04) == pytest.approx(2.04)  # the reopened stream's clock restarted at 0
    assert timeline.stamp(0.04, 102.08) == pytest.approx(2.08)
    assert timeline.stamp(None, 102.12) is None
    assert live.gaps == 1 and live.last_gap_s == pytest.approx(2.0)


def test_a_file_has_no_gap_and_its_timestamps_are_its_own():
    timeline = Timeline(None)
    assert [timeline.stamp(pts, 1.0 + i) for i, pts in enumerate((0.0, 0.04, None, 0.12))] == [0.0, 0.04, None, 0.12]


def _input(kind: str) -> PyAVInput:
    return PyAVInput(path="rtsp://camera/stream" if kind == "network" else "/dev/video0", kind=kind,
                     policy=LivePolicy(), hwaccel=None, extra_hw_frames=0, threads=1,
                     stopping=threading.Event(), run_stop=None)


def test_why_reading_stopped():
    assert _input("network").why_ended(paces_itself=False) is None  # a network file of known length: its end
    assert _input("network").why_ended(paces_itself=True) == "the source closed the stream"
    assert _input("device").why_ended(paces_itself=True) == "the camera stopped delivering"
    timeout = av.error.ExitError(1414092869, "Immediate exit requested")
    assert _input("device").why_failed(timeout, None, 10) == f"no data for {LivePolicy().read_timeout:g} s"
    broken = av.error.InvalidDataError(1094995529, "Invalid data found when processing input")
    assert _input("network").why_failed(broken, None, 0) == "invalid data found when processing input"
