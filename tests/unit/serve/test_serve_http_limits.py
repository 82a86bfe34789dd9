"""What serve's HTTP side refuses to read, without a server: a header field's value over 8 KB or line and headers over
16 KB (a 431 in one line of JSON), where a request's head ends in what was received, and `/api/events`' `limit` of
absurd length (a 400 naming it, not Python's 4,300-digit error as a 500)."""

import json

import pytest

from zerocopy.serve.connections import MAX_FIELD, MAX_HEADERS, head_length, too_large
from zerocopy.serve.event_routes import BadFilter, event_filters


def scope(*fields: tuple[bytes, bytes], path: bytes = b"/health", query: bytes = b"") -> dict:
    return {"type": "http", "method": "GET", "raw_path": path, "query_string": query,
            "headers": [(b"host", b"127.0.0.1"), *fields]}


def refusal(found) -> str:
    assert found.status == 431 and found.content_type == "application/json"
    assert found.body.count(b"\n") == 1 and dict(found.headers)[b"connection"] == b"close"
    return json.loads(found.body)["error"]


def test_a_request_within_the_caps_is_let_through():
    assert too_large(scope((b"range", b"bytes=0-99"), (b"x-a", b"a" * MAX_FIELD))) is None
    assert too_large(scope(*[(b"x-%d" % i, b"a" * 1000) for i in range(12)])) is None


def test_a_field_over_its_cap_is_a_431_naming_it():
    assert refusal(too_large(scope((b"range", b"bytes=" + b" " * MAX_FIELD)))) == \
        f"the header 'range' is longer than {MAX_FIELD} bytes"


@pytest.mark.parametrize("request_scope", [
    scope(*[(b"x-%d" % i, b"a" * 4000) for i in range(5)]),  # each field within its cap, all of them past 16 KB
    scope(path=b"/" + b"a" * MAX_HEADERS),
    scope(query=b"limit=" + b"1" * MAX_HEADERS),
])
def test_line_and_headers_over_their_cap_are_a_431(request_scope):
    assert refusal(too_large(request_scope)) == f"the request's line and headers are longer than {MAX_HEADERS} bytes"


@pytest.mark.parametrize(("received", "length"), [
    (b"", 0), (b"GET / HTTP/1.1\r\nHost: a\r\n", 25), (b"GET / HTTP/1.1\r\nHost: a\r\n\r\n", 27),
    (b"GET / HTTP/1.1\nHost: a\n\nGET / HTTP/1.1\r\n\r\n", 24),  # the first of two requests; bare line feeds too
    (b"GET / HTTP/1.1\r\nX: " + b"a" * 100_000 + b"\r\n\r\n", 100_023),  # past the cap: all of it
])
def test_where_a_requests_head_ends(received, length):
    assert head_length(received) == length


@pytest.mark.parametrize("limit", ["1" * 5000, "0" * 5000 + "1" * 4400, "9" * 100_000])
def test_a_limit_of_absurd_length_is_a_bad_filter(limit):
    with pytest.raises(BadFilter, match=r"^limit must be a whole number from 1 to 500, not '1{40}'$|not '0{40}'$|"
                                        r"not '9{40}'$"):
        event_filters({"limit": [limit]})
    assert event_filters({"limit": ["0" * 5000 + "7"]}) == {"limit": 7}
