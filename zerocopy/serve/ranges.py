"""HTTP range requests (RFC 9110 §14), read with plain string operations: `requested_span` takes time linear in the
header's length (the regular expression it replaces backtracked: a second on 1.5 KB of spaces, an hour on 16 KB,
holding the GIL). One `bytes=` range is served; several, another unit or a malformed one get the whole file."""

from __future__ import annotations

from typing import NamedTuple

from zerocopy.serve.answers import whole_number

SPACE = " \t\n\r\f\v"  # the white space allowed around the unit, the `=`, the `-` and the numbers
BEYOND = 2**63  # past the end of every file: a range's number larger than this is read as this


class Span(NamedTuple):
    """Bytes `first` to `last` of a file, both included (as `Content-Range` writes them)."""

    first: int
    last: int


class Unsatisfiable(Exception):
    """A range that asks only past a file's end (416)."""


def requested_span(header: str | None, size: int) -> Span | None:
    """The one byte range a `Range` header asks of a file of `size` bytes, clipped to its end; None for the whole
    file: no header, another unit, several ranges or a malformed one (RFC 9110 lets a server ignore those).
    Raises `Unsatisfiable` for a range that starts at or past the end, or asks for the last 0 bytes. A number of
    any length is read (one past `BEYOND` lies past every end)."""
    asked = _one_range(header or "")
    if asked is None:
        return None
    first, last = asked
    if first is None:  # `bytes=-N`: the last N bytes (`_one_range` gives one of the two at least)
        if not last or size == 0:
            raise Unsatisfiable
        return Span(max(0, size - last), size - 1)
    if last is not None and last < first:
        return None  # invalid: ignored
    if first >= size:
        raise Unsatisfiable
    return Span(first, size - 1 if last is None else min(last, size - 1))


def _one_range(header: str) -> tuple[int | None, int | None] | None:
    """The first and last byte numbers of `bytes=FIRST-LAST` (white space allowed around each part, the unit in
    any case), either left out (None) but not both; None for any other header."""
    unit, equals, spec = header.partition("=")
    first_text, dash, last_text = spec.partition("-")
    if not equals or not dash or not unit.isascii() or unit.strip(SPACE).lower() != "bytes":
        return None
    first_text, last_text = first_text.strip(SPACE), last_text.strip(SPACE)
    first, last = whole_number(first_text, BEYOND), whole_number(last_text, BEYOND)
    if (first is None and first_text) or (last is None and last_text) or first is last is None:
        return None
    return first, last
