"""zerocopy.decode.live: telling sources apart, back-off, pacing (no server)."""

from __future__ import annotations

import time
from itertools import islice

import pytest

from zerocopy.decode.base import Decoded
from zerocopy.decode.live import LivePolicy, Paced, Pacer, network_options
from zerocopy.decode.pyav import PyAVDecoder
from zerocopy.samples import ClipSpec
from zerocopy.sources import is_live, source_kind

pytestmark = pytest.mark.timeout(60)

FPS = 25


def test_sources_are_told_apart():
    assert is_live("rtsp://cam.local/stream") and is_live("HTTP://127.0.0.1:8080/x.ts") and is_live("/dev/video0")
    assert not is_live("clip.mp4") and not is_live("/data/dev/video0.mp4")
    assert [source_kind(s) for s in ("udp://@:1234", "/dev/v4l/by-id/usb-cam", "a.ts")] == ["network", "device", "file"]
    # the option each protocol takes for its socket timeout in FFmpeg 8
    assert network_options("rtsp://h/s", 5) == {"rtsp_transport": "tcp", "timeout": "5000000"}
    assert network_options("http://h/s.ts", 2.5) == {"timeout": "2500000"}
    assert network_options("tcp://h:1", 1) == {"timeout": "1000000"}
    assert network_options("rtmp://h/app", 3) == {"rw_timeout": "3000000"}  # rtmp's `timeout` means listen


def test_back_off_doubles_up_to_its_cap():
    assert list(islice(LivePolicy().delays(), 7)) == [0.5, 1, 2, 4, 8, 8, 8]


def _fake_time(start: float):
    """A clock (`now[0]`) that a pacer's `wait` moves on, and the waits it asked for."""
    now = [start]
    waits: list[float] = []

    def wait(seconds: float) -> bool:
        waits.append(round(seconds, 6))
        now[0] += seconds
        return False

    return now, waits, wait


def test_pacer_holds_each_frame_until_its_time():
    now, waits, wait = _fake_time(100.0)
    pace = Pacer(25.0, wait, clock=lambda: now[0])
    assert pace(1.4) and waits == []  # the first frame starts the clock
    assert pace(1.44) and waits == [0.04]
    now[0] += 0.1  # the consumer was slow: a late frame is not held
    assert pace(1.48) and waits == [0.04]
    assert pace(None) and waits == [0.04]  # no timestamp: one period after the last, already late
    assert pace(0.0) and waits == [0.04]  # the timestamps went back: the clock starts again
    assert pace(0.5) and waits == [0.04, 0.5]
    stopped = Pacer(25.0, lambda s: True, clock=lambda: now[0])
    stopped(0.0)
    assert not stopped(1.0)  # interrupted while waiting


def test_pacer_starts_again_at_a_timestamp_jump_either_way_and_counts_it():
    """An MPEG-TS whose clock jumps an hour ahead must not be held an hour; jitter is no jump."""
    now, waits, wait = _fake_time(0.0)
    jumps: list[float] = []
    pace = Pacer(25.0, wait, clock=lambda: now[0], on_discontinuity=lambda: jumps.append(now[0]))
    for i in range(30):
        assert pace(i * 0.04)
    assert pace(1.2) and waits[-1] == 0.04 and pace.discontinuities == 0  # (a frame missing: no jump)
    before = len(waits)
    assert pace(3601.2)  # an hour ahead: due now, not in an hour
    assert pace(3601.24) and waits[before:] == [0.04]
    assert pace(3601.26) and pace(3601.32) and pace.discontinuities == 1  # jitter: held, not counted
    assert max(waits) < 0.1
    assert pace(10.0) and waits[-1] < 0.1 and pace.discontinuities == 2  # an hour back
    assert pace(10.5) and waits[-1] == 0.5 and pace.discontinuities == 2  # 0.5 s: ≤ 1 s, not a jump
    assert len(jumps) == 2
    slow = Pacer(1.0, wait, clock=lambda: now[0])  # at 1 fps a jump is more than 10 periods: 10 s
    assert slow(0.0) and slow(5.0) and slow.discontinuities == 0 and waits[-1] == 5.0
    assert slow(20.0) and slow.discontinuities == 1


def test_paced_counts_discontinuities_in_the_damage_report():
    from zerocopy.decode.damage import DamageReport

    class Fake:
        rate, expected_frames = 50.0, 4
        damage = DamageReport()

        def frames(self):
            for pts in (0.0, 0.02, 3600.0, 3600.02):
                yield Decoded("frame", 0.1, pts)

        def close(self):
            pass

    t0 = time.perf_counter()
    assert len(list(Paced(Fake()).frames())) == 4
    assert time.perf_counter() - t0 < 30  # not the hour the timestamps say (it takes ~0.04 s)
    assert Fake.damage.discontinuities == 1 and Fake.damage.damaged
    assert Fake.damage.to_dict()["discontinuities"] == 1
    assert Fake.damage.summary() == "1 timestamp discontinuity"


def test_paced_holds_another_decoders_frames_to_their_timestamps():
    class Fake:
        rate, expected_frames = 50.0, 10
        closed = False

        def frames(self):
            for i in range(10):
                yield Decoded(f"frame {i}", 0.1, i / 50)

        def close(self):
            self.closed = True

    paced = Paced(Fake())
    t0 = time.perf_counter()
    items = list(paced.frames())
    assert time.perf_counter() - t0 >= 0.17  # the last is due 0.18 s after the first
    assert [item.frame for item in items] == [f"frame {i}" for i in range(10)]
    # due 0.18 s apart: never early; late only by what a busy machine adds (the pacer aims at ~1 ms)
    assert 0.17 <= items[-1].arrived - items[0].arrived < 2.0
    assert paced.rate == 50.0 and paced.expected_frames == 10
    paced.close()
    assert paced.decoder.closed


@pytest.mark.slow
def test_realtime_paces_a_file_at_its_rate(clips):
    path, _ = clips("live-2s.mp4", ClipSpec(width=320, height=180, frames=2 * FPS, fps=FPS))
    t0 = time.perf_counter()
    dec = PyAVDecoder.on_cpu(path, 1, realtime=True)
    got = [(item.pts, item.arrived) for item in dec.frames()]
    elapsed = time.perf_counter() - t0
    dec.close()
    assert len(got) == 2 * FPS
    assert elapsed >= 1.9  # the last frame is due 1.96 s after the first
    pts = [p for p, _ in got]
    assert pts == sorted(pts) and len(set(pts)) == len(pts)
    arrived = [a for _, a in got]
    # each frame came out when it was due: never early, late by no more than a busy machine's scheduler
    # adds (the pacer aims at a few ms; the bound is loose so that load cannot fail it)
    assert all(-0.01 < (a - arrived[0]) - (p - pts[0]) < 1.0 for p, a in got)
    assert dec.damage.live_report is None and not dec.damage.damaged

    fast = PyAVDecoder.on_cpu(path, 1)
    t0 = time.monotonic()
    items = list(fast.frames())
    fast_elapsed = time.monotonic() - t0
    fast.close()
    assert len(items) == 2 * FPS
    # not paced without `realtime`: no arrival stamps, and quicker than the 1.96 s pacing takes (typically
    # ~0.1 s; the bound is the loosest that still tells the two apart)
    assert {item.arrived for item in items} == {None}
    assert fast_elapsed < 1.9
