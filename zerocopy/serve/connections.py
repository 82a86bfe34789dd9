"""What is added to uvicorn's h11 connections for serve's HTTP server (docs/serve.md, *The server*): a deadline for
a request's headers from the moment a connection opens (uvicorn times out only between requests), the line and
headers capped however they arrive (`MAX_HEADERS`, `MAX_FIELD`: a 431), the oldest waiting connection dropped when
a new one comes past the cap (so idle sockets cannot keep `/health` out), and one `accept` per wake-up of the
listening socket (CPython 3.11 spins on EMFILE otherwise)."""

from __future__ import annotations

import asyncio
import resource
from http import HTTPStatus
from typing import Any

from zerocopy.serve.answers import Answer, as_json

MAX_CONNECTIONS = 100  # and at most a quarter of the process's fd limit (`connection_cap`)
MAX_HEADERS = 16 * 1024  # bytes of a request's line and headers, however they arrive (431 past it)
MAX_FIELD = 8 * 1024  # bytes of one header field's value (431 past it)
NOSNIFF = ("X-Content-Type-Options", "nosniff")


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
