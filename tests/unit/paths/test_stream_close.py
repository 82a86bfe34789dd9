"""A prepared stream closes its decoder's generator itself: what that generator raises while it closes (a second
Ctrl-C landing in its `finally`) reaches whoever closes the stream, never Python's "Exception ignored"."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from zerocopy.decode.base import Decoded
from zerocopy.decode.damage import DamageReport
from zerocopy.decode.live import Paced
from zerocopy.frames import Geometry
from zerocopy.paths.base import Prepared, PreparedStream


class InterruptedWhileClosing:
    """A decoder whose generator is interrupted in its `finally`, where `PyAVDecoder.frames` stops its reader."""

    rate, expected_frames, live, realtime, frames_ready = 25.0, None, False, False, 0

    def __init__(self):
        self.damage = DamageReport()

    def frames(self):
        try:
            for i in range(100):
                yield Decoded(np.zeros((4, 4, 3), np.uint8), 0.0, i / 25)
        finally:
            raise KeyboardInterrupt

    def interrupt(self):
        pass

    def close(self):
        pass


@pytest.fixture
def unraisable(monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    return seen


def prepare(picture):
    return Prepared(inputs={"x": picture}, geometry=Geometry.fit(4, 4, 4, 4, "stretch"), shown=picture)


def test_an_interruption_while_the_decoder_closes_reaches_the_caller(unraisable):
    stream = PreparedStream(InterruptedWhileClosing(), prepare)
    next(iter(stream))
    with pytest.raises(KeyboardInterrupt):
        stream.close()
    assert unraisable == []


def test_a_paced_decoder_passes_it_on_too(unraisable):
    paced = Paced(InterruptedWhileClosing())
    frames = paced.frames()
    next(frames)
    with pytest.raises(KeyboardInterrupt):
        frames.close()
    assert unraisable == []
