"""`zerocopy serve`'s HTTP server: what `routes.py` answers, as a plain ASGI app on uvicorn (h11) with its own
asyncio loop on a daemon thread; the engine is read on a small thread pool, so a slow read never stops the loop.
No request is logged; an error inside a handler is a one-line 500, never a traceback.

What uvicorn does not do is added (docs/serve.md, *The server*): to its connections in `connections.py` (deadlines,
caps, the connection slots, one `accept` per wake-up), and here the Host allow-list and the token (`gate.py`).
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
from zerocopy.serve.answers import FilePart, Request, as_json
from zerocopy.serve.connections import (
    MAX_CONNECTIONS,
    MAX_HEADERS,
    NOSNIFF,
    _Loop,
    _protocol_class,
    connection_cap,
    too_large,
)
from zerocopy.serve.event_changes import change_answer
from zerocopy.serve.files import send_answer
from zerocopy.serve.gate import LOOPBACK_NAMES, Gate
from zerocopy.serve.http_config import HttpConfig, host_name, is_loopback, parse_listen
from zerocopy.serve.page import PAGE_PATHS
from zerocopy.serve.routes import StatusSource, metrics_registry, route
from zerocopy.serve.streams import send_stream

READ_TIMEOUT_S = 10.0  # from a connection's opening (or its last answer) to its next request's complete headers
KEEP_ALIVE_S = 5.0  # a connection idle after an answer is closed after this (uvicorn's timeout_keep_alive)
BACKLOG = 1024  # the listen queue (the standard library's server had 5)
WORKERS = 4  # threads reading the engine (a scrape, a latest.jpg) while the loop goes on
SAY_EVERY_S = 60.0  # the same kind of server error is said at most once a minute



class App:
    """The ASGI app: GET and HEAD only; the gate first, then `route` on the thread pool (with the request's query
    and headers). Every answer has `Content-Length` (but a stream, a camera's live video: chunked), `Cache-Control:
    no-store` (unless it says its own: the page's files) and (from the server's default headers) `nosniff`."""

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
            # (but DELETE and POST on an event's routes, those that change it; every other path a 405)
            answer = await change_answer(scope, receive, self.gate, self.source.storage, self.pool)
        elif answer is None:
            try:
                answer = await asyncio.get_running_loop().run_in_executor(
                    self.pool, route, self.source, self.registry, scope["path"], self.requires_broker,
                    Request.of(scope))
            except Exception as e:  # a bug must not kill the server nor print a traceback
                answer = as_json(HTTPStatus.INTERNAL_SERVER_ERROR,
                                 {"error": f"{type(e).__name__}: {e}".splitlines()[0][:300]})
        own_cache = any(name == b"cache-control" for name, _ in answer.headers)
        whole = isinstance(answer.body, (bytes, FilePart))  # else a `Stream`: chunked, as long as it goes on
        headers = [(b"content-type", answer.content_type.encode()),
                   *([(b"content-length", str(len(answer.body)).encode())] if whole else []),
                   *([] if own_cache else [(b"cache-control", b"no-store")]), *answer.headers]
        await (send_answer if whole else send_stream)(answer, headers, method == "HEAD", send, receive, self.pool)


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
