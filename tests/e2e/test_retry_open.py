"""`retry_open` (serve's cameras): a network source that is not up yet when the run starts is waited for
with the reconnect back-off; without it, the same source is an error at once (test_live_sources.py)."""

from __future__ import annotations

import threading
import time

import pytest
from livesource import LiveServer, make_ts_clip

from zerocopy.decode.live import LivePolicy, OpenAbandoned
from zerocopy.decode.pyav import PyAVDecoder
from zerocopy.errors import InputError

pytestmark = pytest.mark.timeout(60)


def test_a_source_that_comes_up_late_is_opened_when_it_does(tmp_path):
    with LiveServer(make_ts_clip(tmp_path / "x.ts", seconds=1.0), "tcp", accept_limit=1) as server:
        server.kill()  # not listening: the camera is still booting
        opened: dict = {}

        def open_it() -> None:
            try:
                opened["decoder"] = PyAVDecoder.on_cpu(server.url, 1, policy=LivePolicy(
                    reconnect=True, retry_open=True, give_up_after=30))
            except BaseException as e:  # noqa: BLE001 - reported below
                opened["error"] = e

        t = threading.Thread(target=open_it, daemon=True)
        t.start()
        t.join(1.2)  # attempts at 0.5 s and 1.5 s: the first is refused
        assert t.is_alive(), opened
        server.start()  # the same port
        t.join(30)
        assert "error" not in opened, opened.get("error")
        decoder = opened["decoder"]
        frames = 0
        for _ in decoder.frames():
            frames += 1
            if frames == 25:  # the whole clip (its end would be a drop, reconnected)
                break
        decoder.close()
    assert frames == 25
    live = decoder.damage.live_report
    assert live.attempts >= 2 and live.reconnects == 0  # a late first opening is no reconnection


def test_a_source_that_never_comes_gives_up_with_one_line(tmp_path):
    with LiveServer(make_ts_clip(tmp_path / "x.ts", seconds=0.2), "tcp") as server:
        url = server.url
    with pytest.raises(InputError) as e:
        PyAVDecoder.on_cpu(url, 1, policy=LivePolicy(reconnect=True, retry_open=True, give_up_after=1.2))
    assert str(e.value).startswith(f"{url}: cannot open: ") and "connection refused" in str(e.value)
    assert "\n" not in str(e.value)


def test_a_stop_ends_the_wait_for_a_source_at_once(tmp_path):
    with LiveServer(make_ts_clip(tmp_path / "x.ts", seconds=0.2), "tcp") as server:
        url = server.url
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    t0 = time.monotonic()
    with pytest.raises(OpenAbandoned):
        PyAVDecoder.on_cpu(url, 1, policy=LivePolicy(reconnect=True, retry_open=True, give_up_after=60), stop=stop)
    assert time.monotonic() - t0 < 5  # the stop is seen within the back-off wait (aims at ~0.3 s), not 60 s
