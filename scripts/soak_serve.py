#!/usr/bin/env python3
"""Soak `zerocopy serve`: N loopback live cameras for M minutes, one camera's stream dropped every minute.

    .venv/bin/python scripts/soak_serve.py                 # 4 cameras, 10 minutes (the issue's target)
    .venv/bin/python scripts/soak_serve.py --minutes 2     # a quick proof that it works

Each camera is a loopback HTTP live stream of a small face clip (tests/support/livesource.py), events go to
a real mosquitto when one is installed (tests/support/broker.py). Every `--sample-every` seconds the script
reads the process's RSS and scrapes `/metrics`; every `--drop-every` seconds it drops one camera's stream
(the connections reset, the server back `--down` seconds later) and times how long until that camera's
frames flow again, and checks that every other camera went on meanwhile. At the end it stops serve with
SIGTERM and prints RSS growth after warm-up, each drop's recovery time, whether every scrape parsed, the
stop time, and the rates docs/scale-out.md uses. Exit 1 if a target is missed:
RSS growth after warm-up < `--max-growth` %, every camera back within `--max-recovery` s of its drop,
every scrape valid, exit 143 within 2 s of SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))

from livesource import LiveServer, make_ts_clip  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--minutes", type=float, default=10.0, help="how long serve runs (default 10)")
    p.add_argument("--cameras", type=int, default=4, help="loopback cameras (default 4)")
    p.add_argument("--model", default="face", help="the cameras' model (default face)")
    p.add_argument("--detect-fps", type=float, default=5.0, help="each camera's detect_fps (default 5)")
    p.add_argument("--drop-every", type=float, default=60.0, help="seconds between drops (default 60)")
    p.add_argument("--down", type=float, default=0.0,
                   help="seconds a dropped stream stays down (default 0: the connection resets, the server stays up)")
    p.add_argument("--sample-every", type=float, default=5.0, help="seconds between RSS samples and scrapes")
    p.add_argument("--warmup", type=float, default=None,
                   help="seconds before RSS counts (default a fifth of the run, 30 to 120 s)")
    p.add_argument("--max-growth", type=float, default=5.0, help="RSS growth target after warm-up, %% (default 5)")
    p.add_argument("--max-recovery", type=float, default=10.0, help="seconds a dropped camera may take (default 10)")
    p.add_argument("--no-broker", action="store_true", help="no mosquitto: serve without [publish]")
    return p.parse_args()


class Serve:
    def __init__(self, config: Path):
        self.err: list[str] = []
        self.proc = subprocess.Popen([sys.executable, "-m", "zerocopy", "serve", str(config)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        threading.Thread(target=self._read, daemon=True).start()
        self.address = ""

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.err.append(line.rstrip("\n"))
            m = re.search(r"status on http://(\S+)/api/cameras", line)
            if m:
                self.address = m.group(1)

    def wait_started(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.address:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"serve did not start: {self.err[-5:]}")
            time.sleep(0.1)

    def scrape(self) -> tuple[dict[tuple[str, str | None], float] | None, str]:
        """The samples of /metrics by (name, camera), or None and why if it did not parse."""
        try:
            with urllib.request.urlopen(f"http://{self.address}/metrics", timeout=10) as r:
                text = r.read().decode()
            samples = {}
            for family in text_string_to_metric_families(text):
                for s in family.samples:
                    samples[(s.name, s.labels.get("camera"))] = s.value
            return samples, ""
        except Exception as e:  # noqa: BLE001 (a failed scrape is a result to report)
            return None, f"{type(e).__name__}: {e}"

    def rss(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0


def frames(samples: dict, camera: str) -> float:
    return samples.get(("zerocopy_camera_frames_total", camera), 0.0)


def main() -> int:
    args = parse_args()
    duration = args.minutes * 60.0
    warmup = args.warmup if args.warmup is not None else min(120.0, max(30.0, duration / 5))
    work = Path(tempfile.mkdtemp(prefix="zc-soak-"))
    clip = make_ts_clip(work / "face.ts", seconds=4.0, fps=25, width=320, height=180)
    names = [f"cam{i + 1}" for i in range(args.cameras)]
    servers = {n: LiveServer(clip, "http", lifetime=duration + 600, loops=100000) for n in names}

    broker = sub = None
    if not args.no_broker:
        from broker import MOSQUITTO, Broker, Subscriber

        if MOSQUITTO is None:
            print("mosquitto is not installed: running without [publish] (--no-broker)")
        else:
            broker = Broker().start()
            sub = Subscriber(broker, "soak/#")
    text = 'node = "soak"\n[http]\nlisten = "127.0.0.1:0"\n'
    text += f'[publish]\nurl = "{broker.url("soak")}"\n' if broker else ""
    text += f'[defaults]\nmodel = "{args.model}"\ndetect_fps = {args.detect_fps}\n'
    for n in names:
        text += f'[cameras.{n}]\nurl = "{servers[n].url}"\n'
    config = work / "serve.toml"
    config.write_text(text)

    print(f"soak: {args.cameras} cameras ({args.model}, detect_fps {args.detect_fps}) for {args.minutes:g} min, "
          f"a drop every {args.drop_every:g} s, warm-up {warmup:g} s")
    serve = Serve(config)
    serve.wait_started()
    t0 = time.monotonic()
    rss: list[tuple[float, int]] = []
    scrapes = bad_scrapes = 0
    scrape_errors: list[str] = []
    recoveries: list[tuple[str, float | None, bool]] = []  # camera, seconds to frames again, others went on
    first: dict | None = None
    last: dict | None = None
    next_sample, next_drop, drops = 0.0, args.drop_every, 0

    def scrape() -> dict | None:
        nonlocal scrapes, bad_scrapes, last
        samples, why = serve.scrape()
        scrapes += 1
        if samples is None:
            bad_scrapes += 1
            scrape_errors.append(why)
        else:
            last = samples
        return samples

    try:
        while (now := time.monotonic() - t0) < duration:
            if serve.proc.poll() is not None:
                raise SystemExit(f"serve exited early ({serve.proc.returncode}): {serve.err[-5:]}")
            if now >= next_sample:
                rss.append((now, serve.rss()))
                samples = scrape()
                if first is None and samples is not None and now >= warmup:
                    first = samples
                next_sample += args.sample_every
            if now >= next_drop:
                victim = names[drops % len(names)]
                drops += 1
                before = scrape() or {}
                dropped_at = time.monotonic()
                servers[victim].kill()
                if args.down:
                    time.sleep(args.down)
                servers[victim].restart()
                back = None
                while time.monotonic() - dropped_at < args.max_recovery + 20:
                    samples = scrape()
                    if samples and frames(samples, victim) > frames(before, victim) + 5 and \
                            samples.get(("zerocopy_camera_reconnects_total", victim), 0) > \
                            before.get(("zerocopy_camera_reconnects_total", victim), 0):
                        back = time.monotonic() - dropped_at
                        break
                    time.sleep(0.25)
                after = scrape() or {}
                others = all(frames(after, n) > frames(before, n) for n in names if n != victim)
                recoveries.append((victim, back, others))
                print(f"  {now:6.0f} s: dropped {victim}: frames again after "
                      f"{'never' if back is None else f'{back:.1f} s'}; the others went on: {others}")
                next_drop += args.drop_every
            time.sleep(0.2)
        rss.append((time.monotonic() - t0, serve.rss()))
        end = scrape()
        stop_t0 = time.monotonic()
        serve.proc.send_signal(signal.SIGTERM)
        code = serve.proc.wait(30)
        stop_s = time.monotonic() - stop_t0
    finally:
        if serve.proc.poll() is None:
            serve.proc.kill()
        for s in servers.values():
            s.stop()
        if sub is not None:
            sub.close()
        if broker is not None:
            broker.close()

    elapsed = rss[-1][0]
    after_warmup = [v for t, v in rss if t >= warmup]
    ok = True
    print(f"ran {elapsed:.0f} s; {len(rss)} RSS samples, {scrapes} scrapes of /metrics")
    if len(after_warmup) >= 6:
        base, final = statistics.median(after_warmup[:3]), statistics.median(after_warmup[-3:])
        growth = (final - base) / base * 100
        peak = (max(after_warmup) - base) / base * 100
        good = growth < args.max_growth
        ok &= good
        print(f"RSS after warm-up: {base / 2**20:.1f} MiB → {final / 2**20:.1f} MiB ({growth:+.2f} %, peak "
              f"{peak:+.2f} %; target < {args.max_growth:g} %): {'ok' if good else 'MISSED'}")
    else:
        print("RSS after warm-up: too few samples for a verdict (run longer)")
        ok = False
    print(f"RSS samples (s, MiB): {[(round(t), round(v / 2**20, 1)) for t, v in rss]}")
    slow = [r for r in recoveries if r[1] is None or r[1] > args.max_recovery or not r[2]]
    ok &= not slow and bool(recoveries)
    times = [f"{c} {'never' if s is None else f'{s:.1f} s'}" for c, s, _ in recoveries]
    print(f"drops: {len(recoveries)}; back after: {', '.join(times) or 'none'} (target ≤ {args.max_recovery:g} s, "
          f"the others running meanwhile): {'ok' if not slow and recoveries else 'MISSED'}")
    ok &= bad_scrapes == 0
    print(f"/metrics scrapes: {scrapes}, {bad_scrapes} did not parse: {'ok' if not bad_scrapes else 'MISSED'}"
          + (f" ({scrape_errors[0]})" if scrape_errors else ""))
    good_stop = code == 143 and stop_s <= 2.0
    ok &= good_stop
    print(f"SIGTERM: exit {code} after {stop_s:.2f} s (target 143 within 2 s): {'ok' if good_stop else 'MISSED'}")
    if first is not None and end is not None:
        span = elapsed - warmup
        cpu = end.get(("process_cpu_seconds_total", None), 0) - first.get(("process_cpu_seconds_total", None), 0)
        fps = {n: (frames(end, n) - frames(first, n)) / span for n in names}
        infer = {n: (end.get(("zerocopy_camera_inferences_total", n), 0)
                     - first.get(("zerocopy_camera_inferences_total", n), 0)) / span for n in names}
        events = {n: (end.get(("zerocopy_camera_events_total", n), 0)
                      - first.get(("zerocopy_camera_events_total", n), 0)) / span * 3600 for n in names}
        print(f"after warm-up: CPU {cpu / span:.2f} cores for {len(names)} cameras; per camera "
              f"{statistics.mean(fps.values()):.1f} fps decoded, {statistics.mean(infer.values()):.1f} inferred, "
              f"{statistics.mean(events.values()):.0f} events/hour")
        print(json.dumps({"cpu_cores": round(cpu / span, 3), **{key: {n: round(v, 2) for n, v in figures.items()}
                          for key, figures in (("fps", fps), ("inference_fps", infer), ("events_per_hour", events))}}))
    if sub is not None:
        per_topic: dict[str, int] = {}
        for topic, _, _ in sub.messages:
            kind = topic.rsplit("/", 1)[-1] if "/available/" not in topic else "available"
            per_topic[kind] = per_topic.get(kind, 0) + 1
        print(f"MQTT messages received by a subscriber: {per_topic}")
    if not ok:
        print("serve's last lines:", *serve.err[-5:], sep="\n  ")
    print("all targets met" if ok else "a target was MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
