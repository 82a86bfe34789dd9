"""zerocopy.track.times: a frame's time in its input, and whether the input's time started again."""

import time

from zerocopy.frames import PreparedFrame
from zerocopy.track.times import frame_time, media_time, new_time_base, wall_time, went_back


def frame(index: int, pts: float | None, arrived: float | None = None) -> PreparedFrame:
    return PreparedFrame(index=index, pts=pts, width=64, height=36, geometry=None, inputs={}, arrived=arrived)


def test_a_frame_s_time_is_its_timestamp_or_its_index_over_the_rate():
    assert frame_time(30, 7.25, 10.0) == 7.25 and frame_time(30, None, 10.0) == 3.0
    assert media_time(frame(30, 0.0), 10.0) == 0.0  # a timestamp of 0 is a timestamp
    assert media_time(frame(30, None), 25.0) == 1.2


def test_wall_time_is_when_the_frame_came_out_of_its_decoder():
    assert abs(wall_time(frame(0, None, arrived=time.perf_counter() - 2.0)) - (time.time() - 2.0)) < 0.1
    assert abs(wall_time(frame(0, None)) - time.time()) < 0.1


def test_time_went_back_by_more_than_half_a_frame():
    assert not went_back(1.0, 1.0, 10.0) and not went_back(0.96, 1.0, 10.0)
    assert went_back(0.94, 1.0, 10.0) and went_back(0.0, 60.0, 30.0)


def test_a_new_time_base_is_a_step_back_a_jump_ahead_or_a_wait_longer_than_the_caller_s():
    assert not new_time_base(1.1, 1.0, back_s=0.05, gap_s=2.0)
    assert new_time_base(0.9, 1.0, back_s=0.05, gap_s=2.0)  # back
    assert new_time_base(3.5, 1.0, back_s=0.05, gap_s=2.0)  # ahead
    assert not new_time_base(1.1, 1.0, back_s=0.05, gap_s=2.0, waited=1.9)
    assert new_time_base(1.1, 1.0, back_s=0.05, gap_s=2.0, waited=2.5)  # an outage: the timestamps carried on
