"""Files over HTTP (an event's snapshot, thumbnail and clip): `file_answer` answers a GET of a file with HTTP range
requests (RFC 9110 §14: one `bytes=` range, a 206 with `Content-Range`, 416 past the end; `Accept-Ranges: bytes`
always); `send_answer` sends an answer, a `FilePart` a chunk at a time, each read on the server's pool (a slow disk
never stops the event loop), until the client goes away."""

from __future__ import annotations

import asyncio
import os
import re
import stat
from collections.abc import Callable
from concurrent.futures import Executor
from http import HTTPStatus
from typing import NamedTuple

from zerocopy.serve.answers import Answer, FilePart, as_json

CHUNK = 256 * 1024  # bytes read and sent at a time
ACCEPT_RANGES = (b"accept-ranges", b"bytes")
RANGE = re.compile(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*", re.ASCII | re.IGNORECASE)


class Span(NamedTuple):
    """Bytes `first` to `last` of a file, both included (as `Content-Range` writes them)."""

    first: int
    last: int


class Unsatisfiable(Exception):
    """A range that asks only past a file's end (416)."""


def requested_span(header: str | None, size: int) -> Span | None:
    """The one byte range a `Range` header asks of a file of `size` bytes, clipped to its end; None for the whole
    file: no header, another unit, several ranges or a malformed one (RFC 9110 lets a server ignore those).
    Raises `Unsatisfiable` for a range that starts at or past the end, or asks for the last 0 bytes."""
    found = RANGE.fullmatch(header or "")
    if found is None or found[1] == found[2] == "":
        return None
    first, last = found[1], found[2]
    if not first:  # `bytes=-N`: the last N bytes
        if int(last) == 0 or size == 0:
            raise Unsatisfiable
        return Span(max(0, size - int(last)), size - 1)
    if last and int(last) < int(first):
        return None  # invalid: ignored
    if int(first) >= size:
        raise Unsatisfiable
    return Span(int(first), min(int(last), size - 1) if last else size - 1)


def file_answer(path: str | os.PathLike, content_type: str, range_header: str | None = None) -> Answer:
    """A GET of the file at `path`: 200 with all of it, 206 with the part `range_header` asks for, 416 with
    `Content-Range: bytes */SIZE` when that lies past its end, 404 (JSON) if there is no such file. The body is a
    `FilePart` holding the file open (a file removed meanwhile is still sent whole). Blocking: call it on the
    server's pool (routes are)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return as_json(HTTPStatus.NOT_FOUND, {"error": f"the file {os.path.basename(path)} is gone"})
    except OSError as e:
        return as_json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"cannot read {os.path.basename(path)}: "
                                                          f"{e.strerror or e}"})
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            return as_json(HTTPStatus.NOT_FOUND, {"error": f"{os.path.basename(path)} is not a file"})
        size = info.st_size
        span = requested_span(range_header, size)
    except Unsatisfiable:
        os.close(fd)
        return as_json(HTTPStatus.REQUESTED_RANGE_NOT_SATISFIABLE,
                       {"error": f"the range {range_header!r} lies past the end ({size} bytes)"},
                       headers=(ACCEPT_RANGES, (b"content-range", f"bytes */{size}".encode())))
    except BaseException:
        os.close(fd)
        raise
    if span is None:
        return Answer(HTTPStatus.OK, content_type, FilePart(fd, 0, size), (ACCEPT_RANGES,))
    return Answer(HTTPStatus.PARTIAL_CONTENT, content_type, FilePart(fd, span.first, span.last - span.first + 1),
                  (ACCEPT_RANGES, (b"content-range", f"bytes {span.first}-{span.last}/{size}".encode())))


async def send_answer(answer: Answer, headers: list[tuple[bytes, bytes]], head: bool, send: Callable,
                      receive: Callable, pool: Executor) -> None:
    """`answer` sent with `headers` (ASGI): its body whole, or its `FilePart` `CHUNK` bytes at a time, each read on
    `pool` (a slow disk never stops the loop), until the client goes away (a video player seeking drops its
    requests); nothing of it after a HEAD. The part is closed at the end. A file cut short meanwhile leaves the
    answer incomplete: the server closes the connection."""
    body = answer.body
    try:
        await send({"type": "http.response.start", "status": int(answer.status), "headers": headers})
        if isinstance(body, bytes) or head or not len(body):
            await send({"type": "http.response.body", "body": body if isinstance(body, bytes) and not head else b""})
            return
        loop = asyncio.get_running_loop()
        await receive()  # the request's (empty) body; the next receive answers only when the client goes away
        gone = asyncio.ensure_future(receive())
        try:
            offset = 0
            while offset < len(body) and not gone.done():
                chunk = await loop.run_in_executor(pool, body.read, offset, CHUNK)
                offset += len(chunk)
                await send({"type": "http.response.body", "body": chunk, "more_body": offset < len(body)})
        finally:
            gone.cancel()
    except OSError:
        return
    finally:
        if isinstance(body, FilePart):
            body.close()
