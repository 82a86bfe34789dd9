"""Files over HTTP (an event's snapshot, thumbnail and clip): `file_answer` answers a GET of a file with HTTP range
requests (RFC 9110 §14, read by `ranges.requested_span`: one `bytes=` range, a 206 with `Content-Range`, 416 past
the end; `Accept-Ranges: bytes` always); `send_answer` sends an answer, a `FilePart` a chunk at a time, each read on
the server's pool (a slow disk never stops the event loop), until the client goes away."""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Callable
from concurrent.futures import Executor
from http import HTTPStatus

from zerocopy.serve.answers import Answer, FilePart, as_json
from zerocopy.serve.ranges import Span as Span  # the tests read it from here, as before
from zerocopy.serve.ranges import Unsatisfiable, requested_span

CHUNK = 256 * 1024  # bytes read and sent at a time
ACCEPT_RANGES = (b"accept-ranges", b"bytes")


def file_answer(path: str | os.PathLike, content_type: str, range_header: str | None = None,
                opener: Callable[[str], int] | None = None) -> Answer:
    """A GET of the file at `path`: 200 with all of it, 206 with the part `range_header` asks for, 416 with
    `Content-Range: bytes */SIZE` when that lies past its end, 404 (JSON) if there is no such file. `opener`: how
    `path` is opened read-only (an event's file: `EventStore.open_file`, under the storage folder, never through
    a link; its `FileNotFoundError`, a refusal included, is a 404). The body is a `FilePart` holding the file open
    (a file removed meanwhile is still sent whole). Blocking: call it on the server's pool (routes are)."""
    try:
        fd = os.open(path, os.O_RDONLY) if opener is None else opener(os.fspath(path))
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
    requests); nothing of it after a HEAD. A request's body is never waited for (a GET announcing one it never sends
    is answered all the same). The part is closed at the end. A file cut short meanwhile leaves the answer
    incomplete: the server closes the connection."""
    body = answer.body
    try:
        await send({"type": "http.response.start", "status": int(answer.status), "headers": headers})
        if isinstance(body, bytes) or head or not len(body):
            await send({"type": "http.response.body", "body": body if isinstance(body, bytes) and not head else b""})
            return
        loop = asyncio.get_running_loop()
        gone = asyncio.ensure_future(_gone(receive))
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


async def _gone(receive: Callable) -> None:
    """Returns once the client has gone (or the answer is complete); the request's body, if any comes, is read and
    dropped meanwhile."""
    while (await receive())["type"] != "http.disconnect":
        pass
