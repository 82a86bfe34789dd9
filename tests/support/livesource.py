"""Live sources for the tests: an MPEG-TS clip served over HTTP (chunked) or raw TCP on the loopback,
paced at its real rate, from threads the test starts and stops.

`LiveServer(clip, "http")` listens on 127.0.0.1 at an ephemeral port (`url`), and streams the clip from
its start to every client that connects, each video packet sent when its time comes (as a camera or
an encoder would). `kill()` drops every connection mid-stream (a TCP reset, or a plain close) and stops
listening, so new connections are refused; `restart()` listens again on the same port; `stall()` keeps
the connections open but sends nothing more. Each server stops by itself after `lifetime` seconds, and
`stop()` (or leaving its `with` block) ends it at once; with `accept_limit` it refuses connections
after that many. With `sized`, an HTTP answer carries its Content-Length instead of chunks: served an MKV
(`make_mkv_clip`), it is a network file of known length, whose end FFmpeg takes as the end of the input
(not a drop); `opened_at` and `ended_at` hold when each connection was accepted and when one was served to
its end. Only loopback addresses are used.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from pathlib import Path

import av

from zerocopy.samples import ClipSpec, write_clip

LOOPBACK = "127.0.0.1"


def make_ts_clip(path: str | Path, seconds: float = 2.0, fps: int = 25, width: int = 320, height: int = 180,
                 keyint: int | None = None, crf: int | None = None) -> Path:
    """A small H.264 MPEG-TS clip of a real photo (zerocopy.samples); `keyint`: frames between keyframes; `crf`:
    x264's quality (lower: more bytes a second)."""
    options = (("g", str(keyint)),) if keyint else ()
    options += (("crf", str(crf)),) if crf is not None else ()
    spec = ClipSpec(width=width, height=height, frames=int(round(seconds * fps)), fps=fps, options=options)
    write_clip(path, spec, container_format="mpegts")
    return Path(path)


def make_mkv_clip(path: str | Path, seconds: float = 2.0, fps: int = 25, width: int = 320,
                  height: int = 180) -> Path:
    """`make_ts_clip`'s clip remuxed into Matroska, which states its duration in its header."""
    path = Path(path)
    ts = make_ts_clip(path.with_suffix(".ts"), seconds=seconds, fps=fps, width=width, height=height)
    with av.open(str(ts)) as src, av.open(str(path), "w") as out:
        stream = out.add_stream_from_template(src.streams.video[0])
        for packet in src.demux(src.streams.video[0]):
            if packet.dts is not None:
                packet.stream = stream
                out.mux(packet)
    ts.unlink()
    return path


def ts_schedule(path: str | Path) -> list[tuple[int, float]]:
    """(byte offset, seconds from the first) of every video packet, in file order: when to send what."""
    marks = []
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        for packet in container.demux(stream):
            if packet.pos is not None and packet.pos >= 0 and packet.dts is not None:
                marks.append((packet.pos, float(packet.dts * packet.time_base)))
    marks.sort()
    t0 = marks[0][1]
    return [(pos, t - t0) for pos, t in marks]


class LiveServer:
    """Serves `clip` (an MPEG-TS file, or an MKV when `sized`) over `protocol` ("http" or "tcp") on the
    loopback, paced."""

    def __init__(self, clip: str | Path, protocol: str = "http", lifetime: float = 30.0, loops: int = 1,
                 accept_limit: int | None = None, sized: bool = False):
        if protocol not in ("http", "tcp"):
            raise ValueError(f"unknown protocol {protocol!r}")
        self.protocol = protocol
        self.data = Path(clip).read_bytes()
        self.mkv = Path(clip).suffix == ".mkv"
        self.schedule = ts_schedule(clip)
        self.loops = loops  # times the clip is sent per connection before it ends cleanly
        self.port = 0
        self.connections = 0  # accepted so far
        self.accept_limit = accept_limit  # after that many connections in all, the next ones are refused
        self.sized = sized  # HTTP: Content-Length, not chunks (a network file of known length)
        self.opened_at: list[float] = []  # time.monotonic() of each connection accepted
        self.ended_at: list[float] = []  # and of each served to its end (`loops` times the clip)
        self._deadline = time.monotonic() + lifetime
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._generation = 0  # bumped by kill(): connections of an older generation end
        self._drop = threading.Event()  # wakes the serving threads of the generation being killed
        self._stall = threading.Event()
        self._reset = True
        self._threads: list[threading.Thread] = []
        self._conns: set[socket.socket] = set()
        self.start()

    @property
    def url(self) -> str:
        path = ("/live.mkv" if self.mkv else "/live.ts") if self.protocol == "http" else ""
        return f"{self.protocol}://{LOOPBACK}:{self.port}{path}"

    def __enter__(self) -> LiveServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- control -------------------------------------------------------------------------------
    def start(self) -> None:
        """Listen (again, on the same port once it has one) and serve every client from the clip's start."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((LOOPBACK, self.port))
        listener.listen(8)
        listener.settimeout(0.05)
        self.port = listener.getsockname()[1]
        with self._lock:
            self._listener = listener
            self._drop = threading.Event()
            self._stall.clear()
            generation = self._generation
        self._spawn(self._accept_loop, listener, generation)

    restart = start

    def kill(self, reset: bool = True) -> None:
        """Drop every connection now (`reset`: a TCP RST, else a plain close) and stop listening."""
        with self._lock:
            listener, self._listener = self._listener, None
            self._generation += 1
            self._reset = reset
            drop = self._drop
        drop.set()
        if listener is not None:
            listener.close()
        self._join(timeout=0.5)
        for conn in list(self._conns):  # a send blocked on a client that does not read: wake it
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._join(timeout=2.0)

    def stall(self) -> None:
        """Keep every connection open but send nothing more (a server that hangs)."""
        self._stall.set()

    def stop(self) -> None:
        self._stopped.set()
        self.kill()

    # --- serving -------------------------------------------------------------------------------
    def _spawn(self, target, *args) -> None:
        t = threading.Thread(target=target, args=args, daemon=True, name=f"livesource-{self.protocol}")
        self._threads.append(t)
        t.start()

    def _join(self, timeout: float) -> None:
        me = threading.current_thread()
        end = time.monotonic() + timeout
        for t in list(self._threads):
            if t is not me:
                t.join(max(0.0, end - time.monotonic()))
        self._threads = [t for t in self._threads if t.is_alive()]

    def _over(self, generation: int) -> bool:
        return self._stopped.is_set() or generation != self._generation or time.monotonic() > self._deadline

    def _accept_loop(self, listener: socket.socket, generation: int) -> None:
        while not self._over(generation):
            if self.accept_limit is not None and self.connections >= self.accept_limit:
                break
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:  # closed by kill()
                return
            self.connections += 1
            self.opened_at.append(time.monotonic())
            self._spawn(self._serve, conn, generation, self._drop)
        with self._lock:
            if self._listener is listener:
                self._listener = None
        listener.close()

    def _serve(self, conn: socket.socket, generation: int, drop: threading.Event) -> None:
        kind = b"video/x-matroska" if self.mkv else b"video/mp2t"
        conn.settimeout(30.0)  # a client may not read for a while (e.g. compiling a model after opening)
        self._conns.add(conn)
        try:
            if self.protocol == "http" and not self._http_request(conn):
                return
            chunked = self.protocol == "http" and not self.sized
            if chunked:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\n"
                             b"Connection: close\r\nCache-Control: no-cache\r\n\r\n" % kind)
            elif self.protocol == "http":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
                             b"Connection: close\r\n\r\n" % (kind, len(self.data) * self.loops))
            for _ in range(self.loops):
                if not self._send_clip(conn, generation, drop, chunked):
                    return
            if chunked:
                conn.sendall(b"0\r\n\r\n")
            self.ended_at.append(time.monotonic())
        except OSError:
            return
        finally:
            if generation != self._generation and self._reset:  # killed: drop it hard
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()
            self._conns.discard(conn)

    def _http_request(self, conn: socket.socket) -> bool:
        request = b""
        while b"\r\n\r\n" not in request:
            part = conn.recv(4096)
            if not part:
                return False
            request += part
        return request.startswith(b"GET ")

    def _send_clip(self, conn: socket.socket, generation: int, drop: threading.Event, chunked: bool) -> bool:
        """Each packet's bytes when its time comes; False when the connection was killed or stalled for good."""
        marks = self.schedule + [(len(self.data), None)]
        start = time.monotonic()
        sent = 0
        for (_, due), (next_pos, _) in zip(marks, marks[1:], strict=False):
            wait = start + due - time.monotonic()
            if wait > 0 and drop.wait(wait):
                return False
            while self._stall.is_set():
                if drop.wait(0.05) or self._over(generation):
                    return False
            if self._over(generation):
                return False
            self._send(conn, self.data[sent:next_pos], chunked)
            sent = next_pos
        return True

    @staticmethod
    def _send(conn: socket.socket, data: bytes, chunked: bool) -> None:
        if not data:
            return
        if chunked:
            conn.sendall(b"%x\r\n" % len(data) + data + b"\r\n")
        else:
            conn.sendall(data)
