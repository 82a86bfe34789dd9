"""zerocopy.pipeline.delivered: a file's feeder waits until the stages have seen a frame."""

import threading

from zerocopy.pipeline.delivered import Delivered


def waiting_for(index: int, input: int = 0, stop: threading.Event | None = None) -> tuple[Delivered, threading.Thread]:
    """A `Delivered` whose input opened, and a thread waiting on its frame `index`."""
    delivered = Delivered()
    delivered.reset(input)
    thread = threading.Thread(target=delivered.settler(input, stop or threading.Event()), args=(index,))
    thread.start()
    return delivered, thread


def test_settle_returns_once_the_frame_is_marked_from_another_thread():
    delivered, waiting = waiting_for(3)
    for index in range(3):
        delivered.mark(0, index)
    waiting.join(0.2)
    assert waiting.is_alive()  # frame 3 not seen yet
    delivered.mark(1, 3)  # another input's frame 3
    waiting.join(0.2)
    assert waiting.is_alive()
    delivered.mark(0, 3)
    waiting.join(5)
    assert not waiting.is_alive()
    delivered.settler(0, threading.Event())(2)  # seen already: at once


def test_a_stop_ends_the_wait_and_a_reopening_counts_again():
    delivered, stop = Delivered(), threading.Event()
    delivered.reset(0)
    delivered.mark(0, 10)
    delivered.reset(0)  # opened again: its frames count from 0
    settle = delivered.settler(0, stop)
    waiting = threading.Thread(target=settle, args=(5,))
    waiting.start()
    waiting.join(0.2)
    assert waiting.is_alive()
    stop.set()
    waiting.join(5)
    assert not waiting.is_alive()


def test_a_failed_input_releases_its_waits_until_it_opens_again():
    delivered, waiting = waiting_for(7)
    settle = delivered.settler(0, threading.Event())
    delivered.release(0)  # its frame 7 will never be seen (its region models failed)
    waiting.join(5)
    assert not waiting.is_alive()
    settle(1000)  # at once
    delivered.reset(0)  # opened again
    waiting = threading.Thread(target=settle, args=(0,))
    waiting.start()
    waiting.join(0.2)
    assert waiting.is_alive()
    delivered.mark(0, 0)
    waiting.join(5)
    assert not waiting.is_alive()


def test_a_frame_waited_on_in_vain_is_not_waited_on_again(monkeypatch):
    import zerocopy.pipeline.delivered as module

    monkeypatch.setattr(module, "SETTLE_S", 0.1)
    delivered = Delivered()
    delivered.reset(0)
    settle = delivered.settler(0, threading.Event())
    settle(3)  # gives up after SETTLE_S
    waiting = threading.Thread(target=settle, args=(3,))
    waiting.start()
    waiting.join(0.05)
    assert not waiting.is_alive()  # counted as seen
