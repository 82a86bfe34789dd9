"""Live sources for real: MPEG-TS over HTTP and TCP from loopback servers the tests start and kill,
reconnecting with back-off, giving up, and stopping promptly; through the decoder, the API and the CLI."""

from __future__ import annotations

import contextlib
import dataclasses
import re
import threading
import time

import pytest
from conftest import streaming
from livesource import LiveServer, make_ts_clip

from zerocopy.decode.live import LivePolicy
from zerocopy.decode.pyav import PyAVDecoder
from zerocopy.errors import InputError
from zerocopy.samples import ClipSpec

pytestmark = pytest.mark.timeout(60)

FPS = 25


@pytest.fixture(scope="module")
def ts_clip(tmp_path_factory):
    """2 s of H.264 in MPEG-TS, 50 frames."""
    return make_ts_clip(tmp_path_factory.mktemp("live") / "live.ts", seconds=2.0, fps=FPS)


class Reader:
    """Iterates a decoder on a thread of its own, recording what came and when."""

    def __init__(self, decoder: PyAVDecoder, on_frame=None):
        self.decoder, self.on_frame = decoder, on_frame
        self.pts: list[float | None] = []
        self.arrived: list[float] = []
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            for item in self.decoder.frames():
                self.pts.append(item.pts)
                self.arrived.append(item.arrived)
                if self.on_frame is not None:
                    self.on_frame(len(self.pts))
        except BaseException as e:  # noqa: BLE001 - reported by the test
            self.error = e
        finally:
            self.done.set()

    def wait(self, timeout: float) -> None:
        assert self.done.wait(timeout), "the decoder did not end in time"
        assert self.error is None, self.error

    @property
    def frames(self) -> int:
        return len(self.pts)


def wait_for(condition, timeout: float) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "timed out waiting"
        time.sleep(0.01)


@pytest.mark.parametrize("protocol", ["http", "tcp"])
def test_a_live_source_decodes_at_its_own_pace(ts_clip, protocol):
    with LiveServer(ts_clip, protocol, accept_limit=1) as server:
        dec = PyAVDecoder.on_cpu(server.url, 1, realtime=True)  # a live source paces itself: never held back
        assert dec.live and dec.paces_itself and not dec.realtime and dec.expected_frames is None
        assert dec.rate == FPS
        reader = Reader(dec)
        reader.wait(30)
        dec.close()
    assert reader.frames == 2 * FPS
    assert reader.pts == sorted(reader.pts)
    assert reader.arrived[-1] - reader.arrived[0] > 0.8  # it came as the server sent it
    live = dec.damage.live_report
    assert live is not None and live.drops == 1 and live.reconnects == 0
    # a live stream has no end: its end is a drop (FFmpeg 8 reads the server's close as the end of the
    # stream, FFmpeg 9's HTTP reader as an I/O error)
    assert dec.damage.stopped_early in ("the source closed the stream", "input/output error")
    assert dec.damage.to_dict()["live"]["drops"] == 1


def test_reconnect_goes_on_after_the_server_comes_back_and_other_streams_keep_going(ts_clip):
    policy = LivePolicy(give_up_after=2.5)  # attempts 0.5 s (refused) and 1.5 s (back) after the drop
    with LiveServer(ts_clip, "http", accept_limit=2) as dropped, LiveServer(ts_clip, "tcp", accept_limit=1) as steady:
        killed: dict[str, float] = {}

        def kill_at_20(n: int) -> None:
            if n == 20:
                dropped.kill()
                killed["at"] = time.perf_counter()
                threading.Timer(1.0, restart).start()

        def restart() -> None:
            dropped.restart()
            killed["restarted"] = time.perf_counter()

        a = PyAVDecoder.on_cpu(dropped.url, 1, policy=dataclasses.replace(policy, reconnect=True))
        b = PyAVDecoder.on_cpu(steady.url, 1, policy=dataclasses.replace(policy, reconnect=True))
        ra, rb = Reader(a, kill_at_20), Reader(b)
        ra.wait(25)
        rb.wait(25)
        a.close()
        b.close()
    live = a.damage.live_report
    assert live is not None
    assert live.reconnects == 1 and dropped.connections == 2
    assert live.gaps == 1 and 1.0 <= live.last_gap_s < 5.0  # the time without frames, measured
    gap_at = next(i for i, t in enumerate(ra.arrived) if t > killed["restarted"])
    assert gap_at >= 20
    assert ra.arrived[gap_at] - ra.arrived[gap_at - 1] == pytest.approx(live.last_gap_s, abs=0.01)
    assert ra.frames - gap_at == 2 * FPS  # the whole clip again after the restart, in the same iteration
    assert ra.pts == sorted(ra.pts) and len(set(ra.pts)) == ra.frames  # timestamps go on across the gap
    assert ra.pts[gap_at] - ra.pts[gap_at - 1] == pytest.approx(live.last_gap_s, abs=0.01)
    # the restarted clip ended and no third connection was accepted: gave up within the bound
    assert live.drops == 2 and live.gave_up and a.damage.stopped_early == live.gave_up
    assert "1 reconnect (" in a.damage.summary() and "s without frames)" in a.damage.summary()
    # the other stream went on through the gap
    assert rb.frames == 2 * FPS and b.damage.live_report.reconnects == 0
    assert any(killed["at"] < t < killed["restarted"] for t in rb.arrived)


def test_without_reconnect_a_dropped_source_ends_with_what_it_had(ts_clip):
    with LiveServer(ts_clip, "tcp") as server:
        dec = PyAVDecoder.on_cpu(server.url, 1)
        reader = Reader(dec, lambda n: n == 10 and server.kill())
        reader.wait(30)
        dec.close()
    assert 10 <= reader.frames < 2 * FPS
    assert dec.damage.live_report.drops == 1 and dec.damage.live_report.reconnects == 0
    assert "connection reset" in dec.damage.stopped_early.lower()
    assert dec.damage.damaged and "stopped early" in dec.damage.summary()


def test_a_server_that_never_comes_back_is_given_up_within_the_bound(ts_clip):
    policy = LivePolicy(give_up_after=2.0, backoff_initial=0.25)
    with LiveServer(ts_clip, "http") as server:
        dec = PyAVDecoder.on_cpu(server.url, 1, policy=dataclasses.replace(policy, reconnect=True))
        killed = {}
        reader = Reader(dec, lambda n: n == 10 and (server.kill(), killed.setdefault("at", time.perf_counter())))
        reader.wait(30)
        ended = time.perf_counter()
        dec.close()
    # given up once the bound (2.0 s) passed, never before; the product aims at ~2.0 s, and the upper
    # bound only has to show it was not the default 60 s (a busy machine only makes it later)
    assert 1.9 <= ended - killed["at"] < 20
    live = dec.damage.live_report
    assert live.reconnects == 0 and live.attempts >= 3  # 0.25, 0.5, 1 s, … then the bound
    message = dec.damage.stopped_early
    assert message == live.gave_up and "\n" not in message
    # the time it says is the time it waited: the bound or, on a busy machine, a little more
    said = re.match(r"no frame for (\d+\.\d) s after the source dropped", message)
    assert said and 1.9 <= float(said[1]) <= ended - killed["at"] + 0.05, message
    assert "connection refused" in message.lower()


def test_close_during_a_reconnect_wait_returns_at_once(ts_clip):
    policy = LivePolicy(backoff_initial=30.0)
    with LiveServer(ts_clip, "tcp") as server:
        dec = PyAVDecoder.on_cpu(server.url, 1, policy=dataclasses.replace(policy, reconnect=True))
        reader = Reader(dec, lambda n: n == 5 and server.kill())
        wait_for(lambda: dec.damage.live_report.drops == 1, 10)
        time.sleep(0.2)  # in the back-off wait now
        t0 = time.monotonic()
        dec.close()
        # "at once" (the product aims at a few ms); anything well under the 30 s back-off shows close did
        # not wait for it, and a bound this loose cannot fail on a busy machine
        assert time.monotonic() - t0 < 10
        reader.wait(10)  # the iteration on the other thread ended too
    live = dec.damage.live_report
    assert live.attempts == 0 and live.gave_up is None and live.reconnecting == "connection reset by peer"
    assert dec.damage.summary() == "stopped while reconnecting (connection reset by peer)"


def test_close_and_interrupt_end_a_read_that_waits_for_data(ts_clip):
    """FFmpeg's read cannot be interrupted through PyAV: the reading thread is left to finish it (within
    the read timeout) and release the input itself, while close() and the iteration end at once."""
    # a read timeout long enough that "at once" (a few ms) and "after the read timed out" stay apart on a
    # busy machine: close() must return well before the read could have timed out
    policy = LivePolicy(read_timeout=6.0)
    with LiveServer(ts_clip, "http") as server:
        for stop in ("close", "interrupt"):
            dec = PyAVDecoder.on_cpu(server.url, 1, policy=dataclasses.replace(policy, reconnect=True))
            reader = Reader(dec, lambda n: n == 5 and server.stall())
            wait_for(lambda r=reader: r.frames >= 5, 10)
            time.sleep(0.5)  # blocked in FFmpeg's read now
            t0 = time.monotonic()
            getattr(dec, stop)()
            reader.wait(3.0)
            dec.close()
            assert time.monotonic() - t0 < 3.0  # the read is blocked for up to 6 s more: not waited for
            assert dec.damage.stopped_early is None and dec.damage.live_report.drops == 0  # stopped, not dropped
            wait_for(lambda: not [t for t in threading.enumerate() if t.name == "zerocopy-decode"], 30)
            assert dec.container is None  # released by the reading thread once its read timed out
            server.kill()
            server.restart()


def test_a_stalled_source_times_out(ts_clip):
    with LiveServer(ts_clip, "tcp") as server:
        dec = PyAVDecoder.on_cpu(server.url, 1, policy=LivePolicy(read_timeout=1.0))
        reader = Reader(dec, lambda n: n == 5 and server.stall())
        reader.wait(30)
        dec.close()
    assert dec.damage.stopped_early in ("no data for 1 s", "connection timed out")
    assert dec.damage.live_report.drops == 1


def test_a_missing_camera_or_dead_server_is_a_one_line_input_error(tmp_path):
    with pytest.raises(InputError) as e:
        PyAVDecoder.on_cpu("/dev/video97", 1)
    assert str(e.value) == "/dev/video97: no such device (no camera there)"
    with LiveServer(make_ts_clip(tmp_path / "x.ts", seconds=0.2), "tcp") as server:
        url = server.url
    t0 = time.monotonic()
    with pytest.raises(InputError) as e:  # the port is closed now
        PyAVDecoder.on_cpu(url, 1, policy=LivePolicy(reconnect=True))
    assert time.monotonic() - t0 < 20  # at once (aims at ms), not after reconnecting for give_up_after (60 s)
    assert str(e.value).startswith(f"{url}: cannot open: connection refused") and "\n" not in str(e.value)
    with LiveServer(tmp_path / "x.ts", "http") as server:
        server.stall()  # answers the request, then sends nothing
        t0 = time.monotonic()
        with pytest.raises(InputError) as e:
            PyAVDecoder.on_cpu(server.url, 1, policy=LivePolicy(open_timeout=1.0))
        assert time.monotonic() - t0 < 8  # after the 1 s asked (aims at ~1 s), not the default 10 s
    assert str(e.value) == f"{server.url}: cannot open: no answer within 1 s"


@pytest.mark.serial  # two real-time streams: load beside them costs the restarted one its frames (53 of 70)
def test_a_parallel_run_reconnects_one_stream_while_the_other_goes_on(ts_clip):
    """Through the Python API: two live inputs at once, one killed mid-stream and restarted. Results
    keep their frame numbers, the report counts the gap and gives the latency."""
    import zerocopy

    with LiveServer(ts_clip, "http", accept_limit=2) as dropped, LiveServer(ts_clip, "tcp", accept_limit=1) as steady:
        indices: dict[str, list[int]] = {dropped.url: [], steady.url: []}
        with zerocopy.Detector(reconnect=True, reconnect_timeout=2.5) as det:
            for r in det.run([dropped.url, steady.url], parallel=True):
                indices[r.source].append(r.index)
                if r.source == dropped.url and r.index == 20:
                    dropped.kill()
                    threading.Timer(1.0, dropped.restart).start()
            report = det.report()
    a, b = report["inputs"]
    assert indices[dropped.url] == list(range(a["frames"])) and a["frames"] >= 20 + 2 * FPS
    assert a["damage"]["live"]["reconnects"] == 1 and a["damage"]["live"]["seconds_without_frames"] >= 1.0
    assert indices[steady.url] == list(range(2 * FPS)) and b["damage"]["live"]["reconnects"] == 0
    assert a["error"] is None and b["error"] is None
    assert 0 < report["latency"]["p50_ms"] <= report["latency"]["p95_ms"]  # arrival → result, live inputs


@pytest.mark.timeout(300)  # a subprocess that loads OpenVINO and the model: slow on a busy machine
def test_the_cli_runs_three_files_and_a_live_stream_at_once_through_a_server_restart(ts_clip, tmp_path,
                                                                                     face_model_path):
    """Issue 11's done-when: `--parallel` over three local files and one loopback live stream gives
    complete, in-order per-input output, and the live input survives its server's restart."""
    import json
    import subprocess
    import sys

    from zerocopy.samples import write_clip

    files = []
    for i in range(3):
        files.append(tmp_path / f"f{i}.mp4")
        write_clip(files[-1], ClipSpec(frames=20 + 10 * i, width=320, height=180))
    out, report = tmp_path / "d.jsonl", tmp_path / "r.json"
    with LiveServer(ts_clip, "http", accept_limit=2, lifetime=240) as live:
        proc = subprocess.Popen([sys.executable, "-m", "zerocopy", "detect", *map(str, files), live.url, "--parallel",
                                 "--reconnect", "--reconnect-timeout", "2.5", "--json", str(out), "--report",
                                 str(report), "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        # wait for 20 results of the live input (generously: the process may take long to start on a busy
        # machine), and no longer than the process runs
        deadline = time.monotonic() + 180
        seen = 0
        temp = streaming(out, proc.pid)  # JSON Lines stream into the temporary until the run ends
        while time.monotonic() < deadline and seen < 20 and proc.poll() is None:
            time.sleep(0.05)
            with contextlib.suppress(FileNotFoundError):  # not made yet, or just renamed into place
                complete = temp.read_text().rpartition("\n")[0]  # a line being written is not read yet
                seen = sum(1 for line in complete.splitlines() if json.loads(line)["input"] == 3)
        live.kill()
        threading.Timer(1.0, live.restart).start()
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    frames: dict[int, list[int]] = {}
    for line in (json.loads(x) for x in out.read_text().splitlines()):
        frames.setdefault(line["input"], []).append(line["frame"])
    for i in range(3):
        assert frames[i] == list(range(20 + 10 * i))
    assert frames[3] == list(range(len(frames[3]))) and len(frames[3]) >= 20 + 2 * FPS  # before and after
    r = json.loads(report.read_text())
    assert r["inputs"][3]["damage"]["live"]["reconnects"] == 1 and r["latency"]["p95_ms"] > 0
