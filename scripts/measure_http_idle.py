#!/usr/bin/env python3
"""Measure `zerocopy serve`'s HTTP server under idle sockets and a low open-file limit (docs/serve.md, *The
server*), the server alone in a process of its own:

    .venv/bin/python scripts/measure_http_idle.py                       # 1,000 idle sockets, ulimit -n 256
    .venv/bin/python scripts/measure_http_idle.py --free 8 --json       # the process 8 fds short of its limit

The server (`StatusServer` over a stub engine) runs in a child process whose `RLIMIT_NOFILE` is `--nofile`
(with `--free N`, the child first opens /dev/null until only N descriptors are left: a process whose cameras
and models hold the rest, so `accept` meets EMFILE). This process then opens `--idle` TCP connections to it
that never send a byte, waits until they are connected (`connected`, `connect_s`), asks `/health`
(`health_s`: the seconds to its answer, or null if none came within `--health-timeout`), reads the child's
CPU seconds over `--seconds` (`cpu_s`) and its open fds and threads from /proc, asks `/health` again at the
end of that window (`health_late_s`), waits up to `--release-timeout` s for the server to release the idle
connections while this side still holds them (`released_s`), then closes them and asks `/health` again
(`health_after_s`).
It prints one line per figure, or one JSON object with `--json` (tests/e2e/test_serve_http.py reads it).
`--read-timeout` is the server's deadline for a request's headers (serve's default: 10 s). A server that
lacks the keyword arguments (the standard library server before issue 26) is started without them:

    git archive 2dcaa96 zerocopy | tar -x -C /tmp/before      # the tree before issue 26's HTTP change
    PYTHONPATH=/tmp/before .venv/bin/python scripts/measure_http_idle.py --seconds 20

`--plain-uvicorn` measures uvicorn as it comes instead (a hello-world app, none of serve's additions).
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import os
import resource
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request


class Stub:
    """A `StatusSource` with no camera, no broker and no event store: healthy."""

    latest = False
    storage = None

    def cameras(self, publisher_stats=None):
        return []

    def latest_jpeg(self, name):
        return None

    def healthy(self):
        return True, "ok"

    def publisher_stats(self):
        return None

    def model_compiles(self):
        return {}


def serve(args: argparse.Namespace) -> None:
    """The child: the server on a free loopback port (printed), until stdin closes."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (args.nofile, args.nofile))
    if args.plain_uvicorn:
        plain_uvicorn()
        return
    from zerocopy.serve.http import StatusServer

    wanted = {"read_timeout": args.read_timeout, "say": lambda msg: print(msg, file=sys.stderr, flush=True)}
    accepted = inspect.signature(StatusServer).parameters
    server = StatusServer("127.0.0.1:0", Stub(), **{k: v for k, v in wanted.items() if k in accepted}).start()
    filler = []
    if args.free is not None:
        while True:
            try:
                filler.append(os.open(os.devnull, os.O_RDONLY))
            except OSError:
                break
        for fd in filler[len(filler) - args.free:]:
            os.close(fd)
    print(server.address, flush=True)
    sys.stdin.read()
    server.close()


def plain_uvicorn() -> None:
    """uvicorn as it comes (a hello-world ASGI app, asyncio, h11, its defaults) on a free loopback port."""
    import uvicorn

    async def app(scope, receive, send):
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"ok\n"})

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    print(f"127.0.0.1:{sock.getsockname()[1]}", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, loop="asyncio", http="h11", lifespan="off", log_level="warning"))
    threading.Thread(target=lambda: (sys.stdin.read(), setattr(server, "should_exit", True)), daemon=True).start()
    server.run(sockets=[sock])


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def connected(socks: list[socket.socket], timeout: float) -> tuple[int, float]:
    """How many of `socks` (connecting, non-blocking) are connected within `timeout` s, and when the last was
    (a server with a short listen queue makes the others retry their SYN, for up to a minute)."""
    t0 = time.monotonic()
    pending = {s.fileno(): s for s in socks}
    while pending and time.monotonic() - t0 < timeout:
        poll = select.poll()
        for fd in pending:
            poll.register(fd, select.POLLOUT)
        for fd, _ in poll.poll(50):
            pending.pop(fd)
    return len(socks) - len(pending), round(time.monotonic() - t0, 2)


def health(address: str, timeout: float) -> float | None:
    """Seconds to an answer of /health (any status), or None if none came within `timeout`."""
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(f"http://{address}/health", timeout=timeout) as r:
            r.read()
    except urllib.error.HTTPError:
        pass
    except OSError:
        return None
    return time.monotonic() - t0


def measure(args: argparse.Namespace) -> dict:
    cmd = [sys.executable, __file__, "--serve", "--nofile", str(args.nofile), "--read-timeout", str(args.read_timeout)]
    if args.free is not None:
        cmd += ["--free", str(args.free)]
    if args.plain_uvicorn:
        cmd.append("--plain-uvicorn")
    child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdin is not None and child.stderr is not None
    log = {"lines": 0, "bytes": 0, "first": None}

    def drain(stream) -> None:  # read all along: a child that fills the pipe would stop, not spin
        for line in stream:
            log["lines"] += 1
            log["bytes"] += len(line)
            log["first"] = log["first"] or line.strip()[:200]
    reader = threading.Thread(target=drain, args=(child.stderr,), daemon=True)
    reader.start()
    socks: list[socket.socket] = []
    try:
        address = child.stdout.readline().strip()
        if not address:
            child.wait(10)
            reader.join(5)
            raise SystemExit(f"the server did not start: {log['first']}")
        host, port = address.rsplit(":", 1)
        out: dict = {"idle": args.idle, "nofile": args.nofile, "free": args.free, "fds_before": fds(child.pid),
                     "threads_before": threads(child.pid)}
        for _ in range(args.idle):
            s = socket.socket()
            s.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                s.connect((host, int(port)))
            time.sleep(args.pace / 1e3)
            socks.append(s)
        out["connected"], out["connect_s"] = connected(socks, args.connect_timeout)
        cpu0, t0 = cpu_seconds(child.pid), time.monotonic()
        out["health_s"] = health(address, args.health_timeout)
        peak_fds, peak_threads = fds(child.pid), threads(child.pid)
        while time.monotonic() - t0 < args.seconds:
            time.sleep(0.2)
            peak_fds, peak_threads = max(peak_fds, fds(child.pid)), max(peak_threads, threads(child.pid))
        out["window_s"] = round(time.monotonic() - t0, 2)
        out["cpu_s"] = round(cpu_seconds(child.pid) - cpu0, 2)
        late = health(address, args.health_timeout)
        out["health_late_s"] = None if late is None else round(late, 3)
        out["fds_peak"], out["threads_peak"] = peak_fds, peak_threads
        released = None
        while time.monotonic() - t0 < args.release_timeout:
            if fds(child.pid) <= out["fds_before"] + 2:
                released = round(time.monotonic() - t0, 2)
                break
            time.sleep(0.2)
        out["released_s"], out["fds_held"] = released, fds(child.pid)
        for s in socks:
            s.close()
        socks.clear()
        t1 = time.monotonic()
        after = None
        while after is None and time.monotonic() - t1 < args.health_timeout:
            after = health(address, 2.0)
        out["health_after_s"] = None if after is None else round(time.monotonic() - t1, 2)
        out["cpu_total_s"] = round(cpu_seconds(child.pid) - cpu0, 2)
        out["fds_end"] = fds(child.pid)
        if out["health_s"] is not None:
            out["health_s"] = round(out["health_s"], 3)
    finally:
        for s in socks:
            s.close()
        child.stdin.close()
        try:
            child.wait(10)
        except subprocess.TimeoutExpired:
            child.send_signal(signal.SIGKILL)
            child.wait(10)
        reader.join(5)
    out["log_lines"], out["log_bytes"], out["log_first"] = log["lines"], log["bytes"], log["first"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle", type=int, default=1000, help="connections that send nothing (default 1000)")
    parser.add_argument("--nofile", type=int, default=256, help="the server process's open-file limit (256)")
    parser.add_argument("--free", type=int, help="fill the server's fds up to its limit less this many")
    parser.add_argument("--seconds", type=float, default=5.0, help="the CPU window (5 s)")
    parser.add_argument("--read-timeout", type=float, default=10.0, help="the server's read timeout (10 s)")
    parser.add_argument("--pace", type=float, default=1.0,
                        help="ms between two connections (1: a burst into a 5-deep listen queue loses most)")
    parser.add_argument("--connect-timeout", type=float, default=70.0,
                        help="how long the idle connections are waited for (70 s: a SYN's retries)")
    parser.add_argument("--health-timeout", type=float, default=30.0, help="how long /health is waited for (30 s)")
    parser.add_argument("--release-timeout", type=float, default=40.0,
                        help="how long the release of the idle connections is waited for (40 s)")
    parser.add_argument("--plain-uvicorn", action="store_true",
                        help="measure uvicorn as it comes (a hello-world app) instead of serve's server")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args)
        return
    out = measure(args)
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            print(f"{key}: {value}")


if __name__ == "__main__":
    main()
