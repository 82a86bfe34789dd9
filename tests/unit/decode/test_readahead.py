"""zerocopy.decode.readahead: the read-ahead thread's order, depth, errors and stopping."""

import sys
import threading
import time

import pytest
from conftest import wait_until

from zerocopy.decode.readahead import ReadAhead


def _counting(n, produced, fail_at=None, finished=None):
    try:
        for i in range(n):
            if i == fail_at:
                raise RuntimeError(f"broken at {i}")
            produced.append(i)
            yield i
    finally:
        if finished is not None:
            finished.append(threading.current_thread().name)


def test_read_ahead_yields_everything_in_order():
    produced: list[int] = []
    ahead = ReadAhead(_counting(200, produced), depth=3)
    assert list(ahead) == list(range(200))
    ahead.close()
    assert not ahead.running


def test_read_ahead_raises_the_sources_error_after_the_items_before_it():
    ahead = ReadAhead(_counting(10, [], fail_at=6), depth=2)
    got = []
    with pytest.raises(RuntimeError, match="broken at 6"):
        for item in ahead:
            got.append(item)
    assert got == [0, 1, 2, 3, 4, 5]
    ahead.close()


def test_read_ahead_stays_within_its_depth_and_stops_on_close():
    produced: list[int] = []
    finished: list[str] = []
    ahead = ReadAhead(_counting(10_000, produced, finished=finished), depth=4, name="test-read-ahead")
    it = iter(ahead)
    assert next(it) == 0
    # it runs ahead to its depth (waited for, so a busy machine cannot make this pass vacuously) …
    wait_until(lambda: len(produced) >= 1 + 4, what="the read-ahead to fill its queue")
    # … and then waits to put the next one, where it stays while nobody takes: seen there, it has run as far as it can
    wait_until(lambda: _waiting_to_put(ahead), what="the read-ahead to wait on its full queue")
    assert len(produced) <= 1 + 4 + 1  # the one taken, a full queue, one waiting to be put
    ahead.close()
    assert not ahead.running
    assert finished == ["test-read-ahead"]  # the source was closed, on its own thread
    assert len(produced) < 10_000


def _waiting_to_put(ahead: ReadAhead) -> bool:
    """Whether the read-ahead's thread is inside its `_put`, waiting for room (its frame, read from outside)."""
    frame = sys._current_frames().get(ahead._thread.ident)
    while frame is not None:
        if frame.f_code.co_name == "_put":
            return True
        frame = frame.f_back
    return False


def test_read_ahead_refuses_a_depth_below_one():
    with pytest.raises(ValueError):
        ReadAhead(iter([]), depth=0)


def test_read_ahead_stop_ends_a_waiting_consumer_and_close_can_leave_a_blocked_source():
    release = threading.Event()
    finished: list[str] = []

    def blocked():
        try:
            yield 1
            release.wait(60)  # a read that does not return (a live source without data)
            yield 2
        finally:
            finished.append(threading.current_thread().name)

    ahead = ReadAhead(blocked(), depth=2, name="test-blocked")
    got: list[int] = []
    consumer = threading.Thread(target=lambda: got.extend(ahead))
    consumer.start()
    wait_until(lambda: got == [1], what="the consumer to take the first item and wait")
    ahead.stop()  # from another thread: the consumer sees the end at once
    consumer.join(30)
    assert not consumer.is_alive() and got == [1]
    t0 = time.monotonic()
    assert ahead.close(wait=0.2) is False  # still blocked: left to end by itself
    # close() aims at returning after its `wait` (0.2 s); the source stays blocked for a minute, so a
    # bound well under that shows close did not wait for it, without failing on a busy machine
    assert time.monotonic() - t0 < 10 and ahead.running
    release.set()
    wait_until(lambda: not ahead.running, what="the read-ahead thread to end once its source returned")
    assert not ahead.running and finished == ["test-blocked"]  # it ended and closed its source, on its thread
