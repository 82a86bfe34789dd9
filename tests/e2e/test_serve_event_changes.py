"""serve's routes that change an event, over real HTTP on the loopback (the server over an engine that owns a real
store in tmp_path), and /api/events paged: pages across inserts with every filter and its total; DELETE removes the
row and its files, and what comes for it afterwards does not bring it back; a retained event survives a retention
pass that removes its neighbours; a false positive shown; and every refusal: no token configured, none given, a
wrong one, basic auth, another origin, another site, a body that is not JSON or too large, an unknown id, GET on a
POST route, a method a path does not take. In the slow tier: it listens on loopback ports."""

import http.client
import json

import pytest
from objectevents import T0, object_event

from zerocopy.serve.config import parse_config
from zerocopy.serve.engine import Engine
from zerocopy.serve.event_changes import MAX_BODY
from zerocopy.serve.http import StatusServer
from zerocopy.serve.http_config import HttpConfig

TOKEN = "0123456789abcdef0123456789abcdef"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
JSON = {**BEARER, "Content-Type": "application/json"}


@pytest.fixture
def engine(tmp_path):
    config = parse_config({"cameras": {"front": {"url": "rtsp://front.lan/1", "model": "face"}},
                           "storage": {"path": str(tmp_path / "store"), "max_days": 1}}, env={}, base=tmp_path)
    engine = Engine(config.cameras, None, say=lambda msg: None, storage=config.storage)
    store = tmp_path / "store"
    for name in "abc":
        (store / f"{name}.mp4").write_bytes(b"clip " + name.encode())
        (store / f"{name}.jpg").write_bytes(b"\xff\xd8 " + name.encode())
    engine.storage.record([object_event("new", "a", T0, zones=("door",)), object_event("end", "a", T0, end=T0 + 8,
                                                                                       zones=("door",)),
                           object_event("new", "b", T0 + 60, label="car", camera="back"),
                           object_event("new", "c", T0 + 120, zones=("yard",))])
    for name in "abc":
        engine.storage.attach(name, clip=store / f"{name}.mp4", snapshot=store / f"{name}.jpg")
    assert engine.storage.flush()
    yield engine
    engine.stop(timeout=2.0)


@pytest.fixture
def server(engine):
    with StatusServer("127.0.0.1:0", engine, HttpConfig(listen="127.0.0.1:0", token=TOKEN)) as server:
        yield server


def ask(server: StatusServer, method: str, path: str, headers: dict | None = None, body: bytes | None = None):
    host, port = server.address.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        data = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, json.loads(data) if data else None
    finally:
        conn.close()


def test_pages_across_inserts_with_each_filter_and_its_total(server, engine):
    status, _, first = ask(server, "GET", "/api/events?limit=2", BEARER)
    assert status == 200 and [e["id"] for e in first["events"]] == ["c", "b"] and first["total"] == 3
    engine.storage.record([object_event("new", "d", T0 + 500), object_event("new", "e", T0 + 30)])
    assert engine.storage.flush()
    _, _, second = ask(server, "GET", f"/api/events?limit=2&cursor={first['next']}", BEARER)
    assert [e["id"] for e in second["events"]] == ["e", "a"] and second["total"] == 5  # d is newer: on page one
    assert second["next"] is None  # the last page
    _, _, front = ask(server, "GET", f"/api/events?camera=front&zone=door&before={T0 + 100}&after={T0 - 1}", BEARER)
    assert [e["id"] for e in front["events"]] == ["a"] and front["total"] == 1 and front["next"] is None
    status, _, bad = ask(server, "GET", "/api/events?cursor=soon", BEARER)
    assert status == 400 and bad["error"].startswith("cursor: 'soon' is not a cursor")


def test_delete_removes_the_row_and_its_files_and_it_does_not_come_back(server, engine, tmp_path):
    status, _, answer = ask(server, "DELETE", "/api/events/c", BEARER)
    assert (status, answer["deleted"], answer["done"], answer["bytes"]) == (200, "c", True, 6 + 4)
    assert not (tmp_path / "store" / "c.mp4").exists() and not (tmp_path / "store" / "c.jpg").exists()
    assert ask(server, "GET", "/api/events/c", BEARER)[0] == 404
    assert ask(server, "DELETE", "/api/events/c", BEARER)[0] == 404
    late = tmp_path / "store" / "late.mp4"  # its object still in view, its clip written after the deletion
    late.write_bytes(b"late clip")
    engine.storage.record([object_event("update", "c", T0 + 120)])
    engine.storage.attach("c", clip=late)
    assert engine.storage.flush() and not late.exists() and ask(server, "GET", "/api/events/c", BEARER)[0] == 404
    assert [e["id"] for e in ask(server, "GET", "/api/events", BEARER)[2]["events"]] == ["b", "a"]


def test_a_retained_event_survives_a_retention_pass_that_removes_its_neighbours(server, engine, tmp_path):
    status, _, shown = ask(server, "POST", "/api/events/b/retain", JSON, b'{"retain": true}')
    assert status == 200 and shown["id"] == "b" and shown["retain"] is True
    engine.storage.prune()  # every event is older than max_days = 1
    assert [e["id"] for e in ask(server, "GET", "/api/events", BEARER)[2]["events"]] == ["b"]
    assert (tmp_path / "store" / "b.mp4").exists() and not (tmp_path / "store" / "a.mp4").exists()
    assert ask(server, "POST", "/api/events/b/retain?retain=false", BEARER)[2]["retain"] is False
    engine.storage.prune()
    assert ask(server, "GET", "/api/events/b", BEARER)[0] == 404


def test_a_false_positive_is_shown(server):
    status, _, shown = ask(server, "POST", "/api/events/a/false_positive", JSON, b'{"false_positive": true}')
    assert status == 200 and shown["false_positive"] is True and shown["retain"] is False
    assert ask(server, "GET", "/api/events/a", BEARER)[2]["false_positive"] is True
    listed = ask(server, "GET", "/api/events", BEARER)[2]["events"]
    assert [e["false_positive"] for e in listed] == [False, False, True]


def test_without_a_token_configured_changes_are_403_on_the_loopback_too(engine, tmp_path):
    with StatusServer("127.0.0.1:0", engine) as server:
        for method, path in (("DELETE", "/api/events/a"), ("POST", "/api/events/a/retain?retain=true")):
            status, _, answer = ask(server, method, path)
            assert status == 403 and "set [http] token" in answer["error"], path
        assert ask(server, "GET", "/api/events/a")[2]["retain"] is False and (tmp_path / "store" / "a.mp4").exists()


@pytest.mark.parametrize(("headers", "status", "says"), [
    ({}, 401, "a token is needed"),
    ({"Authorization": "Bearer " + "f" * 32}, 401, "a token is needed"),
    ({"Authorization": "Basic " + __import__("base64").b64encode(f"u:{TOKEN}".encode()).decode()}, 401,
     "not basic auth"),
    ({**BEARER, "Origin": "http://evil.example"}, 403, "another origin"),
    ({**BEARER, "Origin": "null"}, 403, "another origin"),
    ({**BEARER, "Sec-Fetch-Site": "cross-site"}, 403, "another site"),
])
def test_a_change_without_the_bearer_token_or_from_another_origin_is_refused(server, tmp_path, headers, status, says):
    for method, path in (("DELETE", "/api/events/a"), ("POST", "/api/events/a/retain?retain=true")):
        got, _, answer = ask(server, method, path, headers)
        assert (got, says in answer["error"]) == (status, True), (method, answer)
    assert ask(server, "GET", "/api/events/a", BEARER)[2]["retain"] is False and (tmp_path / "store" / "a.mp4").exists()


def test_a_change_from_this_servers_own_origin_is_taken(server):
    origin = {**JSON, "Origin": f"http://{server.address}", "Sec-Fetch-Site": "same-origin"}
    assert ask(server, "POST", "/api/events/a/retain", origin, b'{"retain": true}')[0] == 200


@pytest.mark.parametrize(("headers", "body", "status", "says"), [
    ({**BEARER, "Content-Type": "application/x-www-form-urlencoded"}, b"retain=true", 415, "body is JSON"),
    (BEARER, b'{"retain": true}', 415, "not untyped"),
    (JSON, b"{retain: true", 400, "not JSON"),
    (JSON, b'{"retain": "yes"}', 400, 'must be {"retain": true}'),
    (JSON, b'{"retain": true, "other": 1}', 400, 'must be {"retain": true}'),
    (JSON, b" " * (MAX_BODY + 1), 413, f"at most {MAX_BODY} bytes"),
    (BEARER, None, 400, "give retain once"),
])
def test_a_body_that_is_not_a_small_json_value_is_refused(server, headers, body, status, says):
    got, _, answer = ask(server, "POST", "/api/events/a/retain", headers, body)
    assert got == status and says in answer["error"], answer


def test_both_a_body_and_a_query_or_a_bad_query_are_refused(server):
    assert ask(server, "POST", "/api/events/a/retain?retain=true", JSON, b'{"retain": true}')[0] == 400
    assert ask(server, "POST", "/api/events/a/retain?retain=yes", BEARER)[0] == 400
    assert ask(server, "POST", "/api/events/a/retain?keep=true", BEARER)[0] == 400


def test_unknown_ids_and_methods_a_path_does_not_take(server):
    for method, path in (("DELETE", "/api/events/nope"), ("POST", "/api/events/nope/false_positive?false_positive"
                                                                  "=true")):
        status, _, answer = ask(server, method, path, BEARER)
        assert status == 404 and "no event 'nope'" in answer["error"]
    status, headers, answer = ask(server, "GET", "/api/events/a/retain", BEARER)
    assert (status, headers["allow"]) == (405, "POST") and "use POST" in answer["error"]
    status, headers, _ = ask(server, "POST", "/api/events/a", BEARER)
    assert (status, headers["allow"]) == (405, "GET, HEAD, DELETE")
    for method, path in (("POST", "/metrics"), ("DELETE", "/api/events"), ("PUT", "/api/events/a/retain")):
        status, headers, _ = ask(server, method, path, BEARER)
        assert status == 405 and headers["allow"] in ("GET, HEAD", "POST"), (method, path)
