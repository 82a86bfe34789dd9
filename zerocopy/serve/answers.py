"""What the HTTP side's routes read of a request (`Request`, its numbers: `whole_number`) and give back (`Answer`,
whose body is bytes, a part of an open file, `FilePart`, sent in chunks: `files.send_answer`, or a `Stream` that
goes on as long as the client reads it: `streams.send_stream`)."""

from __future__ import annotations

import json
import os
from typing import Any, NamedTuple, Protocol
from urllib.parse import parse_qs


class FilePart:
    """`length` bytes of the open file `fd` from `start`: an answer's body, read a chunk at a time on the server's
    pool. Owns `fd`: `close()` (the server's, once the answer is sent or dropped)."""

    def __init__(self, fd: int, start: int, length: int):
        self.fd, self.start, self.length = fd, start, length

    def __len__(self) -> int:
        return self.length

    def read(self, offset: int, size: int) -> bytes:
        """Up to `size` bytes from `offset` within the part; `OSError` if the file ends before the part does."""
        data = os.pread(self.fd, min(size, self.length - offset), self.start + offset)
        if not data and offset < self.length:
            raise OSError(f"the file ended {self.length - offset} byte(s) early")
        return data

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class Stream(Protocol):
    """An answer's body of unknown length, sent in chunks as it comes (a camera's live video): `first` at once, then
    what each `read()` gives (b"": nothing yet; a `ZeroCopyError`: it has ended), until the client goes away. `read`
    never waits. Owned by the answer: `close()` (the server's, once it is over)."""

    first: bytes

    def read(self) -> bytes: ...
    def close(self) -> None: ...


class Answer(NamedTuple):
    """An HTTP answer (`route`, `as_json`, `Gate.refuse`, `files.file_answer`)."""

    status: int
    content_type: str
    body: bytes | FilePart | Stream
    headers: tuple[tuple[bytes, bytes], ...] = ()  # besides Content-Type, Content-Length and Cache-Control


class Request(NamedTuple):
    """What a route reads of a request besides its path: the query (name → every value given, percent-decoded) and
    the headers (lower-case names; the last of a repeated one)."""

    query: dict[str, list[str]] = {}  # noqa: RUF012 (a NamedTuple's default: never changed)
    headers: dict[str, str] = {}  # noqa: RUF012

    @classmethod
    def of(cls, scope: dict) -> Request:
        """From an ASGI request's scope."""
        query = parse_qs(bytes(scope.get("query_string", b"")).decode("utf-8", "replace"), keep_blank_values=True)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}
        return cls(query, headers)


def whole_number(text: str, most: int) -> int | None:
    """`text` as a whole number written in ASCII digits (`most` if it is larger), None if it is not one: in time
    linear in its length, with no limit on it (Python's `int` refuses more than 4,300 digits: a 500)."""
    if not text.isascii() or not text.isdigit():
        return None
    digits = text.lstrip("0")
    return most if len(digits) > len(str(most)) else min(int(digits or "0"), most)


def as_json(status: int, value: Any, headers: tuple[tuple[bytes, bytes], ...] = ()) -> Answer:
    return Answer(status, "application/json", (json.dumps(value) + "\n").encode(), headers)
