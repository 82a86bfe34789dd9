"""`zerocopy serve`'s HTTP server: what `routes.py` answers, as a plain ASGI app on uvicorn (h11) with its own
asyncio loop on a daemon thread; the engine is read on a small thread pool, so a slow read never stops the loop.
No request is logged; an error inside a handler is a one-line 500, never a traceback.

What uvicorn does not do is added here (docs/serve.md, *The server*): a deadline for a request's headers
from the moment a connection opens (uvicorn times out only between requests), the oldest waiting connection
dropped when a new one comes past the cap (so idle sockets cannot keep `/health` out), one `accept` per
wake-up of the listening socket (CPython 3.11 spins on EMFILE otherwise), the Host allow-list and the token.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from typing import Any

from zerocopy.errors import ZeroCopyError
from zerocopy.serve.answers import Answer, Request, as_json
from zerocopy.serve.files import send_answer
from zerocopy.serve.gate import LOOPBACK_NAMES, Gate
from zerocopy.serve.http_config import HttpConfig, host_name, is_loopback, parse_listen
from zerocopy.serve.page import PAGE_PATHS
from zerocopy.serve.routes import StatusSource, metrics_registry, route

READ_TIMEOUT_S = 10.0  # from a connection's opening (or its last answer) to its next request's complete headers
KEEP_ALIVE_S = 5.0  # a connection idle after an answer is closed after this (uvicorn's timeout_keep_alive)
MAX_CONNECTIONS = 100  # and at most a quarter of the process's fd limit (`connection_cap`)
BACKLOG = 1024  # the listen queue (the standard library's server had 5)
MAX_HEADERS = 16 * 1024  # bytes of a request's line and headers, however they arrive (431 past it)
MAX_FIELD = 8 * 1024  # bytes of one header field's value (431 past it)
WORKERS = 4  # threads reading the engine (a scrape, a latest.jpg) while the loop goes on
NOSNIFF = ("X-Content-Type-Options", "nosniff")
SAY_EVERY_S = 60.0  # the same kind of server error is said at most once a minute



class App:
    """The ASGI app: GET and HEAD only; the gate first, then `route` on the thread pool (with the request's query
    and headers). Every answer has `Content-Length`, `Cache-Control: no-store` (unless it says its own: the page's
    files) and (from the server's default headers) `nosniff`."""

    def __init__(self, source: StatusSource, registry: Any, gate: Gate, pool: ThreadPoolExecutor,
                 requires_broker: bool = False):
        self.source, self.registry, self.gate, self.pool = source, registry, gate, pool
        self.requires_broker = requires_broker

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return
        method = scope["method"]
        answer = too_large(scope) or self.gate.refuse(scope)
        if answer is None and method not in ("GET", "HEAD"):
            answer = as_json(HTTPStatus.METHOD_NOT_ALLOWED, {"error": f"{method} is not served; use GET"},
                             headers=((b"allow", b"GET, HEAD"),))
        elif answer is None:
            try:
                answer = await asyncio.get_running_loop().run_in_executor(
                    self.pool, route, self.source, self.registry, scope["path"], self.requires_broker,
                    Request.of(scope))
            except Exception as e:  # a bug must not kill the server nor print a traceback
                answer = as_json(HTTPStatus.INTERNAL_SERVER_ERROR,
                                 {"error": f"{type(e).__name__}: {e}".splitlines()[0][:300]})
        own_cache = any(name == b"cache-control" for name, _ in answer.headers)
        headers = [(b"content-type", answer.content_type.encode()), (b"content-length", str(len(answer.body)).encode()),
                   *([] if own_cache else [(b"cache-control", b"no-store")]), *answer.headers]
        await send_answer(answer, headers, method == "HEAD", send, receive, self.pool)


def too_large(scope: dict) -> Answer | None:
    """A 431 (closing the connection) for a request with a header field's value over `MAX_FIELD` bytes, or line
    and headers over `MAX_HEADERS` (counted again here: h11 parses a request that came after another's body
    unchecked by `_Deadlines`); None for the others."""
    fields = scope.get("headers", ())
    size = len(scope.get("raw_path", b"")) + len(scope.get("query_string", b"")) + sum(len(k) + len(v) + 4
                                                                                      for k, v in fields)
    name = next((k for k, v in fields if len(v) > MAX_FIELD), None)
    if name is None and size <= MAX_HEADERS:
        return None
    why = (f"the header {name.decode('latin-1')[:40]!r} is longer than {MAX_FIELD} bytes" if name is not None else
           f"the request's line and headers are longer than {MAX_HEADERS} bytes")
    return as_json(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, {"error": why}, headers=((b"connection", b"close"),))


def connection_cap(wanted: int = MAX_CONNECTIONS) -> int:
    """`wanted`, at most a quarter of the process's open-file limit (the cameras, models and broker need the
    rest): 64 under `ulimit -n 256`."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return max(2, min(wanted, soft // 4)) if soft != resource.RLIM_INFINITY else wanted


class _Deadlines:
    """What is added to uvicorn's h11 protocol (`_protocol_class` makes the class, with `read_timeout` and
    `cap`): a connection must send a request's complete headers within `read_timeout` of its opening or of its
    last answer, else it is closed; one whose client stops reading its answer (the write buffer full) for
    `read_timeout` is aborted; a connection that opens past `cap` aborts one that stalls so, else closes the
    oldest one that waits for a request (none: its request gets uvicorn's 503); a request whose line and headers
    pass `MAX_HEADERS` bytes is answered 431 and closed before h11 reads it, however its bytes arrive (h11 checks
    only a request not yet whole: 100 KB in one write passed); a malformed request's 400 is JSON with `nosniff`."""

    read_timeout: float
    cap: int
    _deadline: asyncio.TimerHandle | None = None
    _stall: asyncio.TimerHandle | None = None
    waiting_since: float | None = None  # None while a request is being answered
    stalled = False  # the client does not read the answer: our write buffer is full

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._wait()
        if len(self.connections) > self.cap:
            others = [c for c in self.connections if c is not self]
            stalled = [c for c in others if getattr(c, "stalled", False)]
            waiting = [c for c in others if getattr(c, "waiting_since", None) is not None]
            if stalled:
                stalled[0].abort()
            elif waiting:
                min(waiting, key=lambda c: c.waiting_since).drop()

    def pause_writing(self) -> None:
        super().pause_writing()
        self.stalled = True
        self._stall = self.loop.call_later(self.read_timeout, self.abort)

    def resume_writing(self) -> None:
        super().resume_writing()
        self.stalled = False
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None

    def abort(self) -> None:
        """Drop a connection whose client does not read its answer (closing would wait for the buffer)."""
        if self.stalled:
            self.transport.abort()
            self.connections.discard(self)

    def _wait(self) -> None:
        self.waiting_since = self.loop.time()
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = self.loop.call_later(self.read_timeout, self.drop)

    def drop(self) -> None:
        """Close the connection unless a request of it is being answered."""
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        if self.waiting_since is not None and not self.transport.is_closing():
            self.transport.close()
            self.connections.discard(self)  # counted out now, not when its close completes (uvicorn's cap)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.cycle is not None and not self.cycle.response_complete and self.waiting_since is not None:
            self.waiting_since = None  # a request came: the deadline is for its headers only
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._wait()

    def connection_lost(self, exc: Exception | None) -> None:
        for timer in (self._deadline, self._stall):
            if timer is not None:
                timer.cancel()
        self._deadline = self._stall = None
        super().connection_lost(exc)

    def handle_events(self) -> None:
        """h11's events, unless the request awaited has more than `MAX_HEADERS` bytes of line and headers."""
        import h11

        if self.conn.their_state is h11.IDLE and head_length(self.conn.trailing_data[0]) > MAX_HEADERS:
            self.refuse(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                        f"the request's line and headers are longer than {MAX_HEADERS} bytes")
            return
        super().handle_events()

    def send_400_response(self, msg: str) -> None:
        self.refuse(HTTPStatus.BAD_REQUEST, msg)

    def refuse(self, status: HTTPStatus, why: str) -> None:
        """Answer `status` with `{"error": why}` and close, whatever h11 has read of the request."""
        import h11

        answer = as_json(status, {"error": why})
        headers = [(b"content-type", answer.content_type.encode()), (b"content-length", str(len(answer.body)).encode()),
                   (b"cache-control", b"no-store"), (b"connection", b"close"),
                   (NOSNIFF[0].lower().encode(), NOSNIFF[1].encode())]
        try:
            for event in (h11.Response(status_code=int(status), headers=headers, reason=status.phrase.encode()),
                          h11.Data(data=answer.body), h11.EndOfMessage()):
                self.transport.write(self.conn.send(event))
        except h11.LocalProtocolError:  # an answer already begun: only closing is left
            pass
        self.transport.close()


def head_length(received: bytes) -> int:
    """Bytes of the request line and headers at the start of `received`: up to its blank line, or all of it while
    that has not come (only the first `MAX_HEADERS` bytes are searched)."""
    ends = [at + len(mark) for mark in (b"\n\n", b"\n\r\n") if (at := received.find(mark, 0, MAX_HEADERS + 3)) >= 0]
    return min(ends) if ends else len(received)


def _protocol_class(read_timeout: float, cap: int) -> type:
    """uvicorn's h11 protocol with `_Deadlines` added, for `read_timeout` and `cap` (uvicorn, an optional
    dependency, is imported only when a server starts)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    return type("Protocol", (_Deadlines, H11Protocol), {"read_timeout": read_timeout, "cap": cap})


class _Loop(asyncio.SelectorEventLoop):
    """An event loop that takes one connection per wake-up of a listening socket. CPython 3.11's
    `_accept_connection` goes on trying `backlog` times after an EMFILE, each failure logged with a
    traceback and a retry scheduled (python/cpython#151615): under a 256-fd limit uvicorn then took a whole
    core and wrote 300 MB of tracebacks in 45 s. With one a wake-up, EMFILE pauses accepting for 1 s."""

    def _accept_connection(self, protocol_factory, sock, sslcontext=None, server=None, backlog=100, *args, **kw):
        super()._accept_connection(protocol_factory, sock, sslcontext, server, 1, *args, **kw)


class StatusServer:
    """The HTTP endpoints over `source` on `listen` ("HOST:PORT"; port 0 picks a free one: `address` says
    which), with `http`'s Host names, token and health rule. `start()` binds (a `ZeroCopyError` if it cannot, or
    if it would listen beyond the loopback with neither a token nor `allow_anonymous`) and serves on a daemon
    thread; `close()` stops within about 0.3 s (a request still being answered gets up to 0.5 s more).
    `say`: where a server-side problem is said (EMFILE: once a minute)."""

    def __init__(self, listen: str, source: StatusSource, http: HttpConfig | None = None, *,
                 say: Callable[[str], None] | None = None, read_timeout: float = READ_TIMEOUT_S,
                 keep_alive: float = KEEP_ALIVE_S, max_connections: int = MAX_CONNECTIONS):
        self.host, self.port = parse_listen(listen)
        self.source = source
        self.http = http or HttpConfig(listen=listen)
        self.say = say or (lambda msg: None)
        self.read_timeout, self.keep_alive = read_timeout, keep_alive
        self.cap = connection_cap(max_connections)
        self._server: Any = None
        self._bound: tuple[str, int] | None = None  # the address bound (a port 0 made real)
        self._thread: threading.Thread | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._said: dict[str, float] = {}

    @property
    def address(self) -> str:
        host, port = self._bound or (self.host, self.port)
        return f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"

    @property
    def access(self) -> str:
        """Who may ask, in one line for the log."""
        if self.http.token is not None:
            return f"HTTP on {self.address} needs a token (bearer, or basic auth with the token as password)"
        if is_loopback(self.host):
            return f"HTTP on {self.address}: loopback only, no token"
        return f"HTTP on {self.address}: anonymous access allowed ([http] allow_anonymous = true)"

    def hosts(self) -> set[str]:
        """The Host names served: the loopback names, the listen address (unless it is every address) and
        `[http] hosts`."""
        names = set(LOOPBACK_NAMES) | set(self.http.hosts)
        listen = host_name(self.host)
        if listen is not None and listen not in ("0.0.0.0", "::"):
            names.add(listen)
        return names

    def start(self) -> StatusServer:
        try:
            import uvicorn
        except ImportError:
            raise ZeroCopyError("serve's HTTP needs uvicorn: pip install 'zerocopy[serve]'") from None
        if not is_loopback(self.host) and self.http.token is None and not self.http.allow_anonymous:
            raise ZeroCopyError(f"HTTP on {self.host}:{self.port} reaches beyond the loopback: set [http] token or "
                                "allow_anonymous = true")
        sock = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self.port))
            sock.listen(BACKLOG)
            self._bound = sock.getsockname()[:2]
        except OSError as e:
            sock.close()
            raise ZeroCopyError(f"cannot listen on {self.host}:{self.port} for HTTP: {e.strerror or e}") from None
        _quiet_uvicorn()
        self._pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="zerocopy-http")
        gate = Gate(self.hosts(), self.http.token, PAGE_PATHS)
        app = App(self.source, metrics_registry(self.source), gate, self._pool, self.http.health_requires_broker)
        config = uvicorn.Config(app, http=_protocol_class(self.read_timeout, self.cap), ws="none", lifespan="off",
                                interface="asgi3", log_config=None, access_log=False, proxy_headers=False,
                                server_header=False, date_header=True, headers=[NOSNIFF],
                                timeout_keep_alive=max(1, round(self.keep_alive)), limit_concurrency=self.cap + 1,
                                backlog=BACKLOG, h11_max_incomplete_event_size=MAX_HEADERS,
                                timeout_graceful_shutdown=0.5)
        server = uvicorn.Server(config)
        loop = _Loop()
        loop.set_exception_handler(self._loop_error)
        self._server = server
        self._thread = threading.Thread(target=self._run, args=(loop, server, sock), daemon=True,
                                        name="zerocopy-serve-http")
        self._thread.start()
        deadline = time.monotonic() + 30.0
        while not server.started and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.005)
        if not server.started:
            self.close()
            raise ZeroCopyError(f"the HTTP server on {self.host}:{self.port} did not start")
        return self

    @staticmethod
    def _run(loop: asyncio.AbstractEventLoop, server: Any, sock: socket.socket) -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(server.serve(sockets=[sock]))
        finally:
            sock.close()
            loop.close()

    def _loop_error(self, loop: asyncio.AbstractEventLoop, context: dict) -> None:
        """asyncio's errors (a failed accept, a transport's error): one line, each kind at most once a minute."""
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in (errno.EMFILE, errno.ENFILE):
            soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
            kind, text = "emfile", (f"HTTP: cannot accept a connection: {exc.strerror} (the limit is {soft}); new "
                                    "connections wait, tried again each second")
        else:
            kind = str(context.get("message", "error"))
            text = f"HTTP: {kind}" + (f": {type(exc).__name__}: {exc}".splitlines()[0][:300] if exc else "")
        now = time.monotonic()
        if now - self._said.get(kind, -SAY_EVERY_S) >= SAY_EVERY_S:
            self._said[kind] = now
            self.say(text)

    def close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.should_exit = True  # seen at its next tick (0.1 s); idle connections are closed at once
            if self._thread is not None:
                self._thread.join(1.0)
                if self._thread.is_alive():
                    server.force_exit = True
                    self._thread.join(1.0)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> StatusServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()


def _quiet_uvicorn() -> None:
    """uvicorn's own log (a warning per 503, per malformed request) stays out of serve's stderr."""
    log = logging.getLogger("uvicorn.error")
    if not log.handlers:
        log.addHandler(logging.NullHandler())
    log.propagate = False
