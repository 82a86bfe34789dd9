"""An answer that goes on as long as its client reads it (a camera's live video, `answers.Stream`): sent with
chunked transfer (no `Content-Length`), a chunk whenever the stream has one, read every `POLL_S` on the server's
pool (a read never waits: no thread of the pool is held by a viewer). The event loop only ever waits for the client:
one that reads slowly holds back its own stream, never the camera (the stream then ends itself, `record.live`), and
one that reads nothing is cut off by the connection's stall deadline (`connections._Deadlines`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor

from zerocopy.errors import ZeroCopyError
from zerocopy.serve.answers import Answer, Stream

POLL_S = 0.1  # how often a stream is asked for what came: at most this much is added to its latency


async def send_stream(answer: Answer, headers: list[tuple[bytes, bytes]], head: bool, send: Callable,
                      receive: Callable, pool: Executor) -> None:
    """`answer`, whose body is a `Stream`, sent with `headers` until the stream ends or the client goes away (or,
    after a HEAD, its headers alone). The stream is closed at the end, whatever ends it (the server's shutdown
    too)."""
    stream: Stream = answer.body  # type: ignore[assignment] (the caller sends only a Stream here)
    loop = asyncio.get_running_loop()
    gone = asyncio.ensure_future(_gone(receive))
    try:
        await send({"type": "http.response.start", "status": int(answer.status), "headers": headers})
        chunk = b"" if head else stream.first
        while not head and not gone.done():
            if chunk:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            else:
                await asyncio.wait((gone,), timeout=POLL_S)
            if gone.done():
                return
            try:
                chunk = await loop.run_in_executor(pool, stream.read)
            except ZeroCopyError:  # it cannot go on (the camera reconnected, the viewer fell behind): it ends
                break
        if not gone.done():
            await send({"type": "http.response.body", "body": b"", "more_body": False})
    except OSError:
        return
    finally:
        gone.cancel()
        stream.close()  # (quick: its muxer's last bytes go to memory, dropped)


async def _gone(receive: Callable) -> None:
    """Returns once the client has gone; anything it sends meanwhile is read and dropped."""
    while (await receive())["type"] != "http.disconnect":
        pass
