"""zerocopy.pipeline.delivered: a file's feeder waits until the stages have seen a frame."""

import threading

from zerocopy.pipeline.delivered import Delivered


def test_settle_returns_once_the_frame_is_marked_from_another_thread():
    delivered, stop = Delivered(), threading.Event()
    delivered.reset(0)
    settle = delivered.settler(0, stop)
    waiting = threading.Thread(target=settle, args=(3,))
    waiting.start()
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
    settle(2)  # seen already: at once


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
