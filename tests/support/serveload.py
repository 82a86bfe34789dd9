"""Load on a local HTTP server, and what it costs the server's process: clients that poll paths, sockets
that connect and send nothing, and a process's memory, open files and threads read from /proc.

`Pollers(host, port, paths)` runs `count` threads that each ask for the next of `paths`, pause, and go on,
counting each answer by its status (`"200"`, `"503"`, …), `"timeout"` or `"error"` per path (a camera's
`…/latest.jpg` all under `latest.jpg`). `IdleSockets(host, port, count)` keeps `count` connections open that
never send a byte: one the server closes is replaced at the next round (every second), so about `count` are
always attempted; it counts what the server did with them. `usage(pid, port)` is one reading of a process.
"""

from __future__ import annotations

import contextlib
import errno
import http.client
import os
import re
import select
import socket
import statistics
import threading
import time
from collections import Counter
from pathlib import Path


def usage(pid: int, port: int | None = None) -> dict[str, int]:
    """`pid`'s resident memory in bytes (`rss`), open file descriptors (`fds`), threads (`threads`), and
    `http`: how many of its fds are TCP sockets on its local `port` (its listener and the connections it
    accepted there). FileNotFoundError once the process is gone."""
    rss = int(re.search(r"VmRSS:\s+(\d+)", Path(f"/proc/{pid}/status").read_text())[1]) * 1024
    links = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):  # closed meanwhile
            links.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
    threads = len(os.listdir(f"/proc/{pid}/task"))
    on_port = set()
    if port is not None:
        for table in ("tcp", "tcp6"):  # columns: sl local_address rem_address st … uid timeout inode
            for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
                fields = line.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == port:
                    on_port.add(f"socket:[{fields[9]}]")
    return {"rss": rss, "fds": len(links), "threads": threads, "http": sum(link in on_port for link in links)}


class Pollers:
    """`count` threads asking `host:port` for `paths` in turn (each thread starting at its own place), one
    request per connection, `pause` seconds apart, each with a `timeout`. `counts[kind]` is a Counter of
    answers by status, `"timeout"` and `"error"` (read it with `reading()`); `errors[kind]` the first error of
    each kind."""

    def __init__(self, host: str, port: int, paths: list[str], count: int = 20, pause: float = 0.5,
                 timeout: float = 10.0):
        self.host, self.port, self.paths, self.pause, self.timeout = host, port, paths, pause, timeout
        self.counts: dict[str, Counter] = {}
        self.errors: dict[str, str] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i,), daemon=True, name=f"poller-{i}")
                         for i in range(count)]

    @staticmethod
    def kind(path: str) -> str:
        return "latest.jpg" if path.endswith("/latest.jpg") else path

    def reading(self) -> dict[str, Counter]:
        """`counts` read now (a copy)."""
        with self._lock:
            return {kind: Counter(counts) for kind, counts in self.counts.items()}

    def start(self) -> Pollers:
        for t in self._threads:
            t.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(self.timeout + 1)

    def _run(self, first: int) -> None:
        i = first
        while not self._stop.is_set():
            path = self.paths[i % len(self.paths)]
            i += 1
            answer = self._ask(path)
            with self._lock:
                self.counts.setdefault(self.kind(path), Counter())[answer] += 1
            self._stop.wait(self.pause)

    def _ask(self, path: str) -> str:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            response.read()
            return str(response.status)
        except TimeoutError:
            return "timeout"
        except (OSError, http.client.HTTPException) as e:
            self.errors.setdefault(self.kind(path), f"{type(e).__name__}: {e}")
            return "error"
        finally:
            conn.close()


class IdleSockets:
    """`count` TCP connections to `host:port` that never send anything, kept on a thread of their own:
    every `every` s, the ones the server closed are counted and replaced. They are opened `pace` s apart: a
    burst would overflow a small listen queue, and the kernel then completes connections the server never
    sees (SYN cookies). `connected`, `closed` (by the server; `answered` of those sent something first, e.g.
    a 408 or a 503), `failed` (refused, or not connected within `connect_timeout` s), `held_s` (how long each
    closed one had been open) and `held` (open now) say what the server did."""

    def __init__(self, host: str, port: int, count: int = 200, every: float = 1.0, pace: float = 0.005,
                 connect_timeout: float = 5.0):
        self.address, self.count, self.every, self.pace = (host, port), count, every, pace
        self.connect_timeout = connect_timeout
        self.connected = self.closed = self.answered = self.failed = self.held = 0
        self.held_s: list[float] = []
        self._socks: dict[int, tuple[socket.socket, bool, float, bool]] = {}  # fd → sock, connected, since, spoke
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="idle-sockets")

    def start(self) -> IdleSockets:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for sock, *_ in self._socks.values():
            sock.close()
        self._socks.clear()

    def summary(self) -> str:
        held = f", held {statistics.median(self.held_s):.1f} s (median) before that" if self.held_s else ""
        return (f"{self.held} of {self.count} held; {self.connected} connected in all, {self.closed} closed by the "
                f"server ({self.answered} with an answer first){held}, {self.failed} could not connect")

    def _run(self) -> None:
        while not self._stop.is_set():
            self._check()
            self._top_up()
            self.held = sum(connected for _, connected, _, _ in self._socks.values())
            self._stop.wait(self.every)

    def _check(self) -> None:
        poller = select.poll()
        for fd, (_, connected, _, _) in self._socks.items():
            poller.register(fd, select.POLLIN if connected else select.POLLOUT)
        now = time.monotonic()
        for fd, _ in poller.poll(0):
            sock, connected, since, spoke = self._socks[fd]
            if not connected:
                if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                    self._drop(fd, failed=True)
                else:
                    self._socks[fd] = (sock, True, now, False)
                    self.connected += 1
                continue
            try:
                data = sock.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if data:
                self._socks[fd] = (sock, True, since, True)
            else:
                self.closed += 1
                self.answered += spoke
                self.held_s.append(now - since)
                self._drop(fd)
        for fd, (_, connected, since, _) in list(self._socks.items()):
            if not connected and now - since > self.connect_timeout:
                self._drop(fd, failed=True)

    def _top_up(self) -> None:
        while len(self._socks) < self.count and not self._stop.wait(self.pace):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setblocking(False)
            rc = sock.connect_ex(self.address)
            if rc not in (0, errno.EINPROGRESS):  # refused at once: try again next round
                sock.close()
                self.failed += 1
                return
            self._socks[sock.fileno()] = (sock, False, time.monotonic(), False)

    def _drop(self, fd: int, failed: bool = False) -> None:
        sock = self._socks.pop(fd)[0]
        sock.close()
        self.failed += failed
