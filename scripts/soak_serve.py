#!/usr/bin/env python3
"""Soak `zerocopy serve` as a box beside the cameras meets it (issue 26), and say whether it holds.

    .venv/bin/python scripts/soak_serve.py                 # 30 minutes: the issue's soak
    .venv/bin/python scripts/soak_serve.py --minutes 2     # what CI runs (tests/e2e/test_scripts.py)

Everything runs on the loopback. 4 cameras on one model (tests/support/livesource.py): `ends` is a 10 s MKV
over HTTP of known length, whose stream ends (the server closes it cleanly: serve must open it again);
`drops` is a live stream whose connections are reset every minute; `live1`, `live2` are live streams. A
real mosquitto (tests/support/broker.py, keeping sessions on disk) is stopped and started again on its port
every 2 minutes, and a subscriber receives serve's events all along (a persistent session: what arrives
while it reconnects is kept for it). 20 HTTP clients poll each camera's latest.jpg, /metrics and
/api/cameras, and 200 sockets connect to serve's HTTP port and send nothing (one serve closes is replaced)
(tests/support/serveload.py). A short run shortens the periods: a drop every quarter of the run at most, a
broker restart every third (--minutes 2: 30 s and 40 s, and a 60 s warm-up).

Every `--sample-every` s the script reads serve's RSS, open fds (/proc/PID/fd) and threads (/proc/PID/task)
and scrapes /metrics; at the end it sends SIGTERM. It prints what it measured and a line per target; exit 1
if one is missed: after the warm-up RSS growth ≤ 5 %, fds and threads flat (`steady_spread`; the bound is
printed), no crash, every event serve made published, dropped or queued (`zerocopy_mqtt_*` against the
cameras' event counters) and every published one received, frames again within 10 s of each `drops` outage
and `ends` opened again within 10 s of each end, at most two compiles of the model (the detector and its copy
for the regions around motion)
(`zerocopy_model_compiles_total`, if serve reports it), every /metrics answer valid, exit 143 within 2 s of
SIGTERM. Exit 2 if the soak cannot start.
"""

from __future__ import annotations

import argparse
import collections
import http.client
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMPILES_PER_MODEL = 2  # the detector and its copy for the regions around motion (serve runs motion by default)
sys.path.insert(0, str(ROOT / "tests" / "support"))

from livesource import LiveServer, make_mkv_clip, make_ts_clip  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402
from serveload import IdleSockets, Pollers, usage  # noqa: E402

Metrics = dict[tuple[str, frozenset], float]  # (sample name, its labels) → value


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--minutes", type=float, default=30.0, help="how long serve runs (default 30)")
    p.add_argument("--cameras", type=int, default=4, help="cameras: ends, drops and live ones (default 4, at least 3)")
    p.add_argument("--model", default="face", help="the cameras' model (default face)")
    p.add_argument("--detect-fps", type=float, default=5.0, help="each camera's detect_fps (default 5)")
    p.add_argument("--end-every", type=float, default=10.0, help="length of the `ends` camera's file, s (default 10)")
    p.add_argument("--end-alone", action="store_true",
                   help="`ends` in a group of its own (it sets nireq = 2): serve then restarts that group at each end")
    p.add_argument("--drop-every", type=float, help="s between resets of `drops` (default 60, or a quarter of a "
                   "shorter run)")
    p.add_argument("--broker-every", type=float, help="s between broker restarts (default 120, or a third of a "
                   "shorter run)")
    p.add_argument("--broker-down", type=float, default=2.0, help="s the broker stays stopped (default 2)")
    p.add_argument("--clients", type=int, default=20, help="HTTP clients polling (default 20)")
    p.add_argument("--poll-pause", type=float, default=0.5, help="s each client waits between requests (default 0.5)")
    p.add_argument("--idle", type=int, default=200, help="idle sockets on serve's HTTP port (default 200)")
    p.add_argument("--sample-every", type=float, default=5.0, help="s between samples (default 5)")
    p.add_argument("--warmup", type=float, help="s before the figures count (default a fifth of the run, 60 to 300: "
                   "RSS rises for the first minutes of live streams, docs/scale-out.md)")
    p.add_argument("--max-growth", type=float, default=5.0, help="RSS growth after warm-up, %% (default 5)")
    p.add_argument("--flat-fds", type=int, default=3, help="steady spread (max - min of 3-sample medians) of fds "
                   "after warm-up, serve's HTTP sockets aside (default 3)")
    p.add_argument("--flat-threads", type=int, default=6, help="steady spread of threads after warm-up, beyond "
                   "that of serve's HTTP sockets (default 6)")
    p.add_argument("--max-recovery", type=float, default=10.0,
                   help="s a dropped or ended camera may take to deliver frames again (default 10)")
    p.add_argument("--stop-within", type=float, default=2.0, help="s from SIGTERM to serve's exit (default 2)")
    p.add_argument("--no-broker", action="store_true", help="no mosquitto: serve without [publish]")
    args = p.parse_args()
    duration = args.minutes * 60
    args.drop_every = args.drop_every or min(60.0, duration / 4)
    args.broker_every = args.broker_every or min(120.0, duration / 3)
    args.warmup = args.warmup if args.warmup is not None else min(300.0, max(60.0, duration / 5))
    if args.cameras < 3:
        p.error("--cameras must be at least 3 (ends, drops and one live camera)")
    return args


def total(metrics: Metrics | None, name: str, **labels: str) -> float:
    """The sum of the samples named `name` whose labels include `labels` (0 when there is none)."""
    want = set(labels.items())
    return sum(v for (n, ls), v in (metrics or {}).items() if n == name and want <= ls)


class Serve:
    """`zerocopy serve CONFIG` as a process: its last stderr lines, its HTTP address, its /metrics."""

    def __init__(self, config: Path):
        self.err: collections.deque[str] = collections.deque(maxlen=200)
        self.proc = subprocess.Popen([sys.executable, "-m", "zerocopy", "serve", str(config)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                     env={**os.environ, "STATE_DIRECTORY": str(config.parent / "state")})  # events
        threading.Thread(target=self._read, daemon=True).start()
        self.address = ""
        self.bad_scrapes: list[str] = []  # answers of /metrics that were not Prometheus text
        self.unanswered = 0  # scrapes without a 200 (refused, timed out, 503), each tried 3 times

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.err.append(line.rstrip("\n"))
            if m := re.search(r"status on http://(\S+)/api/cameras", line):
                self.address = m.group(1)

    def started(self, timeout: float = 120.0) -> bool:
        deadline = time.monotonic() + timeout
        while not self.address and self.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        return bool(self.address)

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])

    def scrape(self) -> Metrics | None:
        """/metrics now (up to 3 tries), or None."""
        for _ in range(3):
            try:
                with urllib.request.urlopen(f"http://{self.address}/metrics", timeout=10) as r:
                    text = r.read().decode()
            except (OSError, http.client.HTTPException):
                time.sleep(0.5)
                continue
            try:
                return {(s.name, frozenset(s.labels.items())): s.value
                        for family in text_string_to_metric_families(text) for s in family.samples}
            except Exception as e:  # noqa: BLE001 (an answer that does not parse is a result)
                self.bad_scrapes.append(f"{type(e).__name__}: {e}")
                return None
        self.unanswered += 1
        return None


class Soak:
    """The run: the cameras' servers, the broker and its subscriber, serve, the clients, and what was measured."""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.duration = args.minutes * 60
        self.names = ["ends", "drops"] + [f"live{i}" for i in range(1, args.cameras - 1)]
        self.servers: dict[str, LiveServer] = {}
        self.work: Path | None = None  # the clips and serve's config
        self.broker = self.sub = self.serve = self.pollers = self.idle = None
        self.stop = threading.Event()
        self.t0 = 0.0
        self.samples: list[tuple[float, dict[str, int]]] = []
        self.first: tuple[float, Metrics] | None = None  # the first scrape after the warm-up, and when
        self.drops: list[tuple[float, float | None, bool]] = []  # when, seconds to frames again, others went on
        self.broker_restarts: list[float] = []
        self.threads: list[threading.Thread] = []  # the sampler, the drops, the broker restarts, the progress lines
        self.failures: list[str] = []  # the soak's own threads that failed
        self.answers, self.errors, self.idle_summary = {}, {}, ""  # what the clients met, until the run's end

    def start(self) -> None:
        """The cameras' servers, the broker and its subscriber (RuntimeError if they cannot start), serve."""
        work = self.work = Path(tempfile.mkdtemp(prefix="zc-soak-"))
        lifetime = self.duration + 600
        self.servers["ends"] = LiveServer(make_mkv_clip(work / "ends.mkv", seconds=self.args.end_every), "http",
                                          lifetime=lifetime, sized=True)
        # ~117 KB/s, not x264's default ~38: FFmpeg's MPEG-TS demuxer keeps a seek-back buffer of `probesize` (5 MB)
        # for a stream it cannot seek, its pages touched as the stream passes and given back once full; at 38 KB/s
        # that took 127 s, the whole 2-minute soak's measured stretch, and read as growth (docs/scale-out.md)
        clip = make_ts_clip(work / "face.ts", seconds=4.0, fps=25, width=320, height=180, crf=8)
        self.servers |= {n: LiveServer(clip, "http", lifetime=lifetime, loops=10**6) for n in self.names[1:]}
        if not self.args.no_broker:
            from broker import Broker, Subscriber

            self.broker = Broker(persistent=True)
            self.broker.start()
            self.sub = Subscriber(self.broker, "soak/+/events", session=f"zc-soak-{os.getpid()}")
        config = work / "serve.toml"
        config.write_text(self.config_text())
        self.serve = Serve(config)

    def config_text(self) -> str:
        """serve's config (docs/serve.md): the keys serve/config.py accepts."""
        text = 'node = "soak"\n[http]\nlisten = "127.0.0.1:0"\n'
        if self.broker is not None:
            text += f'[publish]\nurl = "{self.broker.url("soak")}"\n'
        text += f'[defaults]\nmodel = "{self.args.model}"\ndetect_fps = {self.args.detect_fps}\n'
        for name in self.names:
            # a small packet ring, full well before the warm-up ends (a ring is bounded: memory is measured after)
            text += f'[cameras.{name}]\nurl = "{self.servers[name].url}"\nrecord_buffer_mb = 1\n'
            if name == "ends" and self.args.end_alone:
                text += "nireq = 2\n"
        return text

    def now(self) -> float:
        return time.monotonic() - self.t0

    def every(self, period: float, action: Callable[[], None], name: str,
              first: float | None = None) -> threading.Thread:
        """`action` at `first` (default `period`) s into the run and every `period` s after, on a thread, until
        the end."""
        def loop() -> None:
            due = self.t0 + (period if first is None else first)
            while due < self.t0 + self.duration and not self.stop.wait(max(0.0, due - time.monotonic())):
                try:
                    action()
                except Exception as e:  # noqa: BLE001 (said in one line and counted: the soak itself failed)
                    self.failures.append(f"{name}: {type(e).__name__}: {e}")
                    print(f"  {self.now():6.0f} s: the soak's {name} failed: {type(e).__name__}: {e}")
                due += period
        thread = threading.Thread(target=loop, daemon=True, name=name)
        thread.start()
        return thread

    def sample(self) -> None:
        try:
            self.samples.append((self.now(), usage(self.serve.proc.pid, self.serve.port)))
        except FileNotFoundError:  # serve is gone: the main loop says so
            return
        m = self.serve.scrape()
        if m is not None and self.first is None and self.now() >= self.args.warmup:
            self.first = (time.monotonic(), m)

    def drop(self) -> None:
        """Reset `drops`' connections; wait for its frames (and a counted reconnection); did the live ones go on?"""
        frames = "zerocopy_camera_frames_total"
        before = self.serve.scrape() or {}
        at = time.monotonic()
        server = self.servers["drops"]
        server.kill()
        server.restart()
        back = None
        while back is None and time.monotonic() - at < self.args.max_recovery + 20 and not self.stop.is_set():
            m = self.serve.scrape()
            if m and total(m, frames, camera="drops") > total(before, frames, camera="drops") + 5 and \
                    total(m, "zerocopy_camera_reconnects_total", camera="drops") > \
                    total(before, "zerocopy_camera_reconnects_total", camera="drops"):
                back = time.monotonic() - at
            self.stop.wait(0.25)
        if back is None and self.stop.is_set():
            return  # the run ended meanwhile: no verdict
        after = self.serve.scrape() or {}
        others = all(total(after, frames, camera=n) > total(before, frames, camera=n) for n in self.names[2:])
        self.drops.append((self.now(), back, others))
        print(f"  {self.now():6.0f} s: reset drops' connections: frames again after "
              f"{'never' if back is None else f'{back:.1f} s'}; the live cameras went on: {others}")

    def restart_broker(self) -> None:
        assert self.broker is not None
        self.broker.stop()
        time.sleep(self.args.broker_down)
        self.broker.start()
        self.broker_restarts.append(self.now())
        print(f"  {self.now():6.0f} s: broker stopped for {self.args.broker_down:g} s and started again")

    def progress(self) -> None:
        if not self.samples:
            return
        t, u = self.samples[-1]
        ends = self.servers["ends"]
        answers = sum(self.pollers.reading().values(), collections.Counter())
        print(f"  {t:6.0f} s: RSS {u['rss'] / 2**20:.0f} MiB, {u['fds']} fds ({u['http']} HTTP), {u['threads']} "
              f"threads; ends ended {len(ends.ended_at)}x, opened {ends.connections}x; HTTP answers {dict(answers)}; "
              f"idle sockets held {self.idle.held}")

    def run(self) -> tuple[int | None, float | None, Metrics | None]:
        """Serve under the whole load for the run's length; (serve's exit code if it crashed, at what second)
        and /metrics at the end."""
        a = self.args
        self.t0 = time.monotonic()
        host = self.serve.address.rsplit(":", 1)[0]
        paths = [p for n in self.names for p in (f"/api/cameras/{n}/latest.jpg", "/metrics", "/api/cameras")]
        self.pollers = Pollers(host, self.serve.port, paths, count=a.clients, pause=a.poll_pause).start()
        self.idle = IdleSockets(host, self.serve.port, count=a.idle).start()
        self.threads = [self.every(a.sample_every, self.sample, "sampler", first=0.0),
                        self.every(a.drop_every, self.drop, "drop"),
                        self.every(min(60.0, self.duration / 4), self.progress, "progress")]
        if self.broker is not None:
            self.threads.append(self.every(a.broker_every, self.restart_broker, "broker restart"))
        crashed = None
        while self.now() < self.duration:
            if self.serve.proc.poll() is not None:
                crashed = self.now()
                break
            time.sleep(0.2)
        self.stop.set()
        # what the clients met until now, not the refusals once serve has stopped
        self.answers, self.errors, self.idle_summary = self.pollers.reading(), dict(self.pollers.errors), \
            self.idle.summary()
        for thread in self.threads:
            thread.join(a.max_recovery + 30)
        if crashed is not None:
            return self.serve.proc.returncode, crashed, None
        self.sample()
        end = self.serve.scrape()
        if end is not None and self.first is not None:
            self.rates(self.first, (time.monotonic(), end))
        return None, None, end

    def rates(self, first: tuple[float, Metrics], last: tuple[float, Metrics]) -> None:
        """The figures docs/scale-out.md gives, between two scrapes: CPU, and per camera frames decoded and
        inferred a second and events an hour."""
        span = last[0] - first[0]

        def rate(name: str, **labels: str) -> float:
            return (total(last[1], name, **labels) - total(first[1], name, **labels)) / span

        def mean(name: str) -> float:
            return statistics.mean(rate(name, camera=n) for n in self.names)
        print(f"after the warm-up ({span:.0f} s): CPU {rate('process_cpu_seconds_total'):.2f} cores for "
              f"{len(self.names)} cameras; per camera {mean('zerocopy_camera_frames_total'):.1f} fps decoded, "
              f"{mean('zerocopy_camera_inferences_total'):.2f} inferred, "
              f"{mean('zerocopy_camera_events_total') * 3600:.0f} events/hour")

    def terminate(self) -> tuple[int | None, float]:
        """SIGTERM, under the clients' load; (exit code, or None if it took over 30 s; seconds to exit)."""
        t = time.monotonic()
        self.serve.proc.send_signal(signal.SIGTERM)
        try:
            code = self.serve.proc.wait(30)
        except subprocess.TimeoutExpired:
            code = None
        return code, time.monotonic() - t

    def received(self) -> tuple[int, int]:
        """(distinct events received, duplicates): QoS 1 may deliver one twice, with the same bytes."""
        last, quiet_since, deadline = -1, time.monotonic(), time.monotonic() + 10
        while time.monotonic() < deadline and time.monotonic() - quiet_since < 2:  # until none come for 2 s
            if len(self.sub.messages) != last:
                last, quiet_since = len(self.sub.messages), time.monotonic()
            time.sleep(0.2)
        keys = [(topic, repr(payload)) for topic, payload, _ in list(self.sub.messages)]
        return len(set(keys)), len(keys) - len(set(keys))

    def close(self) -> None:
        self.stop.set()
        for thread in self.threads:  # a broker restart under way ends before the broker is closed
            thread.join(15)
        if self.serve is not None and self.serve.proc.poll() is None:
            self.serve.proc.kill()
            self.serve.proc.wait(10)
        for part in (self.pollers, self.idle):
            if part is not None:
                part.stop()
        if self.sub is not None:
            self.sub.close()
        for server in self.servers.values():
            server.stop()
        if self.broker is not None:
            self.broker.close()
        if self.work is not None:
            shutil.rmtree(self.work, ignore_errors=True)


def steady_spread(values: list[int]) -> float:
    """max - min of the medians of every 3 samples in a row: a socket or a thread of a moment (a reconnection,
    a request) is not a leak, a count that keeps rising is."""
    medians = [statistics.median(values[i:i + 3]) for i in range(len(values) - 2)]
    return max(medians) - min(medians)


def verdicts(soak: Soak, crash: tuple[int | None, float | None], end: Metrics | None,
             stop: tuple[int | None, float], received: tuple[int, int] | None) -> list[tuple[bool | None, str]]:
    """(met, what was measured) per target; None: not measured (said why)."""
    a, out = soak.args, []
    code, at = crash
    unmeasured = None if code is not None else False  # a figure missing because serve crashed is not a second miss
    if code is not None:
        how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit {code}"
        out.append((False, f"serve CRASHED {at:.0f} s into the run ({how})"))
    else:
        out.append((True, f"serve ran the whole {soak.duration:.0f} s"))

    after = [u for t, u in soak.samples if t >= a.warmup]
    if len(after) >= 6:
        rss = [u["rss"] / 2**20 for u in after]
        base, final = statistics.median(rss[:3]), statistics.median(rss[-3:])
        growth = (final - base) / base * 100
        out.append((growth <= a.max_growth, f"RSS after warm-up {base:.0f} -> {final:.0f} MiB ({growth:+.1f} %, "
                    f"peak {max(rss):.0f} MiB; target <= {a.max_growth:g} %)"))
        other = [u["fds"] - u["http"] for u in after]
        http = [u["http"] for u in after]
        threads = [u["threads"] for u in after]
        spread = steady_spread(other)
        out.append((spread <= a.flat_fds, f"fds without serve's HTTP sockets {min(other)}-{max(other)}, last "
                    f"{other[-1]} (steady spread {spread:g}; flat: <= {a.flat_fds}); its HTTP sockets (they follow "
                    f"the clients) {min(http)}-{max(http)}, last {http[-1]}"))
        allowed = a.flat_threads + steady_spread(http)
        spread = steady_spread(threads)
        out.append((spread <= allowed, f"threads {min(threads)}-{max(threads)}, last {threads[-1]} (steady spread "
                    f"{spread:g}; flat: <= {a.flat_threads} + {allowed - a.flat_threads:g}, the steady spread of its "
                    "HTTP sockets, for a server with a thread per connection)"))
    else:
        out.append((unmeasured, f"RSS, fds, threads: {len(after)} samples after the {a.warmup:g} s warm-up, too few "
                    "(6 at least): run longer"))

    if soak.broker is None:
        out.append((None, "events: not checked (--no-broker)"))
    elif end is None:
        out.append((unmeasured, "events: /metrics could not be read at the end"))
    else:
        made = total(end, "zerocopy_camera_events_total")
        published = total(end, "zerocopy_mqtt_published_total", kind="events")
        dropped = total(end, "zerocopy_mqtt_dropped_total", kind="events")
        queued = total(end, "zerocopy_mqtt_queued")
        missing = made - published - dropped - queued
        # a scrape reads the publisher's counts, then the cameras': the events of the frames between (a few) are
        # counted as made and not yet as published, dropped or queued
        out.append((0 <= missing <= 5, f"events: {made:.0f} made = {published:.0f} published + {dropped:.0f} dropped "
                    f"+ {queued:.0f} queued at the last scrape; unaccounted {missing:+.0f} (0 to 5: a scrape's own)"))
        distinct, duplicates = received
        out.append((distinct >= published, f"events received by a subscriber: {distinct} distinct (and {duplicates} "
                    f"QoS 1 duplicates) of {published:.0f} published; the broker kept the subscriber's session across "
                    f"{len(soak.broker_restarts)} restarts, so none may be missing"))

    back = [s for _, s, _ in soak.drops if s is not None]
    times = f" after {min(back):.1f}-{max(back):.1f} s (median {statistics.median(back):.1f})" if back else ""
    stalled = sum(not others for _, _, others in soak.drops)
    slow = [s for s in back if s > a.max_recovery]
    out.append((len(back) == len(soak.drops) and not slow and not stalled and (bool(soak.drops) or unmeasured),
                f"drops reset {len(soak.drops)}x: frames again {len(back)}x{times}; the live cameras stalled meanwhile "
                f"{stalled}x (target: frames again each time, within {a.max_recovery:g} s, the live cameras going on)"))

    ends, stopped_at = soak.servers["ends"], soak.t0 + soak.duration
    gaps = []  # from each end with time left in the run to the next opening (None: never)
    for ended in [t for t in ends.ended_at if stopped_at - t > a.max_recovery]:
        later = [t for t in ends.opened_at if t >= ended]
        gaps.append(later[0] - ended if later else None)
    slow = [g for g in gaps if g is None or g > a.max_recovery]
    reopened = [g for g in gaps if g is not None]
    figures = f", after {min(reopened):.1f}-{max(reopened):.1f} s" if reopened else ""
    out.append((not slow and (bool(gaps) or unmeasured), f"ends' stream ended {len(ends.ended_at)}x; of the "
                f"{len(gaps)} ends over {a.max_recovery:g} s before the run's end, {len(reopened)} opened again"
                f"{figures} (target: all, within {a.max_recovery:g} s); serve counted "
                f"{total(end, 'zerocopy_camera_reconnects_total', camera='ends'):.0f} reconnections"))

    compiles = {ls: v for (n, ls), v in (end or {}).items() if n in ("zerocopy_model_compiles_total",
                                                                     "zerocopy_model_compiles")}
    if compiles:
        shown = ", ".join(f"{dict(ls) or 'all'}: {v:.0f}" for ls, v in compiles.items())
        # the detector, and its copy for the regions around motion (roi/regions.py), each compiled once
        out.append((max(compiles.values()) <= COMPILES_PER_MODEL,
                    f"model compiles {shown} (target: {COMPILES_PER_MODEL} per model: the detector and its regions' "
                    "copy, never again at a reopening)"))
    else:
        out.append((None, "model compiles: not reported (no zerocopy_model_compiles_total in /metrics)"))

    bad = soak.serve.bad_scrapes
    out.append((not bad, f"/metrics answers that did not parse: {len(bad)}" + (f" ({bad[0]})" if bad else "")
                + f"; scrapes without an answer: {soak.serve.unanswered}"))

    code, seconds = stop
    if crash[0] is not None:
        out.append((None, "SIGTERM: not sent (serve had crashed)"))
    else:
        out.append((code == 143 and seconds <= a.stop_within, f"SIGTERM: exit "
                    f"{code if code is not None else 'none within 30 s'} after {seconds:.2f} s (target 143 within "
                    f"{a.stop_within:g} s)"))
    return out


def main() -> int:
    args = parse_args()
    if not args.no_broker:
        from broker import MOSQUITTO

        if MOSQUITTO is None:
            print("soak: mosquitto is not installed (scripts/install-system-deps.sh installs it); or pass --no-broker")
            return 2
    soak = Soak(args)
    broker = "no broker" if args.no_broker else \
        f"the broker down {args.broker_down:g} s every {args.broker_every:g} s"
    print(f"soak: {args.cameras} cameras ({args.model}, detect_fps {args.detect_fps:g}) for {args.minutes:g} min: "
          f"ends every {args.end_every:g} s{' (a group of its own)' if args.end_alone else ''}, drops every "
          f"{args.drop_every:g} s, {broker}, {args.clients} HTTP clients, {args.idle} idle sockets; warm-up "
          f"{args.warmup:g} s")
    try:
        try:
            soak.start()
        except RuntimeError as e:  # the broker or its subscriber did not start
            print(f"soak: {e}")
            return 2
        if not soak.serve.started():
            print("soak: serve did not start; its last lines:", *list(soak.serve.err)[-5:], sep="\n  ")
            return 2
        code, crashed_at, end = soak.run()
        stop = soak.terminate() if code is None else (None, 0.0)
        received = soak.received() if soak.sub is not None else None
    except KeyboardInterrupt:
        print("soak: interrupted")
        return 130
    finally:
        soak.close()

    print(f"ran {soak.samples[-1][0] if soak.samples else 0:.0f} s; {len(soak.samples)} samples of serve "
          f"(pid {soak.serve.proc.pid})")
    samples = [(round(t), round(u["rss"] / 2**20), u["fds"], u["http"], u["threads"]) for t, u in soak.samples]
    print(f"samples (s, RSS MiB, fds, of them HTTP, threads): {samples}")
    for kind, counts in sorted(soak.answers.items()):
        other = sum(v for k, v in counts.items() if k not in ("200", "503", "timeout", "error"))
        error = f" ({soak.errors[kind]})" if kind in soak.errors else ""
        print(f"HTTP {kind}: {counts['200']} ok, {counts['503']} 503, {other} other status, {counts['timeout']} timed "
              f"out, {counts['error']} errors{error}")
    print(f"idle sockets: {soak.idle_summary}")
    results = verdicts(soak, (code, crashed_at), end, stop, received)
    for met, text in results:
        print(f"  {'ok    ' if met else '--    ' if met is None else 'MISSED'}  {text}")
    for failure in soak.failures:
        print(f"  FAILED  the soak's {failure} (its figures may be short)")
    missed = [text for met, text in results if met is False]
    if missed or soak.failures:
        print("serve's last lines:", *list(soak.serve.err)[-8:], sep="\n  ")
    failed = f", {len(soak.failures)} failure(s) of the soak" if soak.failures else ""
    print("all targets met" if not missed and not failed else f"{len(missed)} target(s) MISSED{failed}")
    return 1 if missed or soak.failures else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
