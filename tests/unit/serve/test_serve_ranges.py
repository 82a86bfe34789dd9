"""serve's `Range` reading (`zerocopy/serve/ranges.py`) and its numbers (`answers.whole_number`): the same answers as
the regular expression it replaced, at once on a header that made that expression backtrack for seconds, and
numbers of any length read without Python's 4,300-digit limit."""

import itertools
import random
import re
import time

import pytest

from zerocopy.serve.answers import whole_number
from zerocopy.serve.ranges import BEYOND, Span, Unsatisfiable, requested_span

# the parser alone, on one header, in this thread's CPU time (a busy machine does not count): microseconds when linear
# (measured 0.02-0.07 ms here); the regular expression before took 0.9-2.2 s here on 1.5 KB of spaces (4-6 s in the
# review) and hours on 16 KB: half a second fails only on that
PROMPT_S = 0.5
OLD_RANGE = re.compile(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*", re.ASCII | re.IGNORECASE)


def old_span(header: str, size: int) -> Span | None:
    """What serve answered before (its regular expression), for headers short enough to read with it."""
    found = OLD_RANGE.fullmatch(header)
    if found is None or found[1] == found[2] == "":
        return None
    first, last = found[1], found[2]
    if not first:
        if int(last) == 0 or size == 0:
            raise Unsatisfiable
        return Span(max(0, size - int(last)), size - 1)
    if last and int(last) < int(first):
        return None
    if int(first) >= size:
        raise Unsatisfiable
    return Span(int(first), min(int(last), size - 1) if last else size - 1)


def outcome(read, header: str, size: int) -> Span | None | str:
    try:
        return read(header, size)
    except Unsatisfiable:
        return "416"


@pytest.mark.parametrize("spaces", [760, 8_000])  # 1.5 KB (0.9 s before), then 16 KB (hours before)
def test_a_header_that_made_the_old_pattern_backtrack_is_read_at_once(spaces):
    header = "bytes=" + " " * spaces + "-" + " " * spaces + "x"
    t0 = time.thread_time()
    span = requested_span(header, 1000)
    assert time.thread_time() - t0 < PROMPT_S
    assert span is None  # malformed: the whole file


def test_every_short_header_gets_the_answer_the_old_pattern_gave():
    space = ["", "", " ", "\t", "  ", "\n", "\xa0", "\x1c"]  # the last two: no white space to the old pattern
    slots = [space, ["bytes", "BYTES", "Bytes", "byte", "items", ""], space, ["=", "", "==", ":"], space,
             ["", "0", "5", "007", "999", "1000", "12345", "٣", "x", "-"], space, ["-", "", "--", ","], space,
             ["", "0", "9", "999", "1000", "2000", "1e3", "+1"], space, ["", "", ",1-2", "-", "x", ","]]
    rng = random.Random(36)
    headers = ["".join(rng.choice(slot) for slot in slots) for _ in range(20_000)]
    headers += ["".join(rng.choice(slot[:3]) for slot in slots) for _ in range(5_000)]  # more of them well formed
    answers = {}
    for header, size in itertools.product(headers, (0, 1, 1000)):
        answers[header, size] = outcome(old_span, header, size)
        assert outcome(requested_span, header, size) == answers[header, size], (header, size)
    kinds = {type(a).__name__ for a in answers.values()}
    assert kinds == {"Span", "NoneType", "str"}  # each answer was given: ranges, the whole file and 416


@pytest.mark.parametrize(("header", "answer"), [
    ("bytes=0-" + "9" * 5000, Span(0, 999)),  # a last byte past the end: up to the end
    ("bytes=" + "0" * 5000 + "5-9", Span(5, 9)),  # leading zeros of any length
    ("bytes=-" + "9" * 5000, Span(0, 999)),  # the last N bytes, N past the size: the whole file
    ("bytes=" + "9" * 5000 + "-", "416"),  # a first byte past every end
    ("bytes=" + "9" * 5000 + "-7", None),  # last before first: ignored
])
def test_numbers_of_any_length_are_read(header, answer):
    assert outcome(requested_span, header, 1000) == answer


def test_whole_numbers():
    assert whole_number("0042", 100) == 42 and whole_number("0", 100) == 0 and whole_number("100", 100) == 100
    assert whole_number("101", 100) == 100 and whole_number("9" * 5000, BEYOND) == BEYOND
    assert whole_number("0" * 5000 + "7", BEYOND) == 7
    for text in ("", "-1", "+1", " 1", "1.0", "1e3", "٣", "²"):
        assert whole_number(text, 100) is None, text
    assert whole_number("1" * 100_000, 500) == 500  # int() of 100,000 digits is refused
