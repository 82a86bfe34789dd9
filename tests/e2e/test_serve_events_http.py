"""serve's stored events over real HTTP on the loopback (the server over an engine that owns a real store in
tmp_path): /api/events with its filters, newest first; 400 for a bad filter, 404 for an unknown or expired event;
an event's snapshot, thumbnail and clip, the clip with range requests (206 with the exact bytes, open-ended and
suffix ranges, 416, HEAD), a clip larger than a chunk sent whole, a client that leaves mid-clip; the token and
the Host check on the new routes too; a row naming a file outside the storage folder, or a link in it, a 404
(never served); a damaged row skipped and counted, never a 500; a database that cannot be opened a 503 saying why.
In the slow tier: it listens on loopback ports."""

import http.client
import json
import socket
import sqlite3

import pytest
from objectevents import T0, object_event
from prometheus_client.parser import text_string_to_metric_families

from zerocopy.serve.config import parse_config
from zerocopy.serve.engine import Engine
from zerocopy.serve.files import CHUNK
from zerocopy.serve.http import StatusServer
from zerocopy.serve.http_config import HttpConfig

TOKEN = "0123456789abcdef0123456789abcdef"
CLIP = bytes(range(256)) * 40  # 10,240 bytes, each byte's value its offset modulo 256


@pytest.fixture
def engine(tmp_path):
    config = parse_config({"cameras": {"front": {"url": "rtsp://front.lan/1", "model": "face"}},
                           "storage": {"path": str(tmp_path / "store"), "max_days": 1}}, env={}, base=tmp_path)
    engine = Engine(config.cameras, None, say=lambda msg: None, storage=config.storage)
    store = tmp_path / "store"  # (made by the engine's storage; the events' files lie inside it)
    clip, snapshot, thumbnail = store / "a.mp4", store / "a.jpg", store / "a-thumb.jpg"
    clip.write_bytes(CLIP)
    snapshot.write_bytes(b"\xff\xd8 snapshot")
    thumbnail.write_bytes(b"\xff\xd8 thumbnail")
    engine.storage.record([object_event("new", "a", T0, zones=("door",)),
                           object_event("end", "a", T0, zones=("door",), end=T0 + 8),
                           object_event("new", "b", T0 + 60, label="car", camera="back"),
                           object_event("new", "c", T0 + 120, zones=("yard",))])
    engine.storage.attach("a", clip=clip, snapshot=snapshot, thumbnail=thumbnail)
    assert engine.storage.flush()
    yield engine
    engine.stop(timeout=2.0)


@pytest.fixture
def server(engine):
    with StatusServer("127.0.0.1:0", engine) as server:
        yield server


def get(server: StatusServer, path: str, headers: dict | None = None, method: str = "GET"):
    host, port = server.address.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request(method, path, headers=headers or {})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def test_api_events_filters_newest_first(server):
    status, headers, body = get(server, "/api/events")
    assert status == 200 and headers["content-type"] == "application/json"
    found = json.loads(body)["events"]
    assert [e["id"] for e in found] == ["c", "b", "a"]
    a = found[2]
    assert (a["camera"], a["label"], a["start_time"], a["end_time"], a["zones"]) == ("front", "person", T0, T0 + 8,
                                                                                    ["door"])
    assert a["has_clip"] and a["has_snapshot"] and a["has_thumbnail"] and a["last_event"]["type"] == "end"
    ids = lambda query: [e["id"] for e in json.loads(get(server, "/api/events?" + query)[2])["events"]]  # noqa: E731
    assert ids("camera=front") == ["c", "a"] and ids("label=car") == ["b"] and ids("zone=door") == ["a"]
    assert ids(f"after={T0}") == ["c", "b"] and ids(f"before={T0 + 100}&camera=front") == ["a"]
    assert ids("limit=1") == ["c"] and ids("zone=d%6F%6Fr") == ["a"]  # percent-encoded


def test_bad_filters_are_400_and_unknown_events_404(server):
    status, _, body = get(server, "/api/events?limit=0")
    assert status == 400 and json.loads(body) == {"error": "limit must be a whole number from 1 to 500, not '0'"}
    status, _, body = get(server, "/api/events?after=soon")
    assert status == 400 and "after must be a Unix time" in json.loads(body)["error"]
    assert get(server, "/api/events?cameras=front")[0] == 400
    status, headers, body = get(server, "/api/events/nope")
    assert status == 404 and headers["content-type"] == "application/json" and "unknown" in json.loads(body)["error"]
    assert get(server, "/api/events/b/clip.mp4")[0] == 404  # no clip
    assert get(server, "/api/events/nope/clip.mp4")[0] == 404


def test_an_expired_event_is_a_404_and_its_files_are_gone(server, engine, tmp_path):
    assert get(server, "/api/events/a")[0] == 200
    engine.storage.prune()  # every event is older than max_days = 1
    status, _, body = get(server, "/api/events/a")
    assert status == 404 and json.loads(body) == {"error": "no event 'a' (unknown, or removed by retention)"}
    assert get(server, "/api/events/a/clip.mp4")[0] == 404 and not (tmp_path / "store" / "a.mp4").exists()


def test_the_snapshot_and_the_thumbnail(server):
    assert get(server, "/api/events/a/snapshot.jpg")[::2] == (200, b"\xff\xd8 snapshot")
    status, headers, body = get(server, "/api/events/a/thumbnail.jpg")
    assert (status, headers["content-type"], body) == (200, "image/jpeg", b"\xff\xd8 thumbnail")


def test_the_clip_with_range_requests(server):
    status, headers, body = get(server, "/api/events/a/clip.mp4")
    assert (status, headers["content-type"], headers["accept-ranges"], body) == (200, "video/mp4", "bytes", CLIP)
    assert headers["content-length"] == str(len(CLIP)) and headers["x-content-type-options"] == "nosniff"
    for asked, first, last in (("bytes=100-199", 100, 199), ("bytes=10000-", 10000, 10239),
                               ("bytes=-40", 10200, 10239), ("bytes=10200-99999", 10200, 10239),
                               ("bytes=0-0", 0, 0)):
        status, headers, body = get(server, "/api/events/a/clip.mp4", {"Range": asked})
        assert status == 206, asked
        assert headers["content-range"] == f"bytes {first}-{last}/{len(CLIP)}"
        assert body == CLIP[first:last + 1] and headers["content-length"] == str(last - first + 1)
    status, headers, body = get(server, "/api/events/a/clip.mp4", {"Range": "bytes=20000-"})
    assert status == 416 and headers["content-range"] == f"bytes */{len(CLIP)}" and json.loads(body)["error"]
    assert get(server, "/api/events/a/clip.mp4", {"Range": "bytes=0-1,5-6"})[::2] == (200, CLIP)  # several: whole
    status, headers, body = get(server, "/api/events/a/clip.mp4", {"Range": "bytes=100-199"}, method="HEAD")
    assert (status, headers["content-length"], body) == (206, "100", b"")


def test_a_clip_larger_than_a_chunk_is_sent_whole_and_a_client_that_leaves_does_not_hold_the_server(engine, tmp_path):
    big = tmp_path / "store" / "big.mp4"
    data = bytes(range(251)) * (3 * CHUNK // 251 + 7)
    big.write_bytes(data)
    engine.storage.attach("c", clip=big)
    assert engine.storage.flush()
    with StatusServer("127.0.0.1:0", engine) as server:
        assert get(server, "/api/events/c/clip.mp4")[2] == data
        status, headers, body = get(server, "/api/events/c/clip.mp4", {"Range": f"bytes={CHUNK - 3}-"})
        assert status == 206 and body == data[CHUNK - 3:]
        host, port = server.address.rsplit(":", 1)
        for _ in range(8):  # more than the server's pool: each leaves after the first bytes
            with socket.create_connection((host, int(port)), timeout=10) as sock:
                sock.sendall(b"GET /api/events/c/clip.mp4 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                assert sock.recv(100).startswith(b"HTTP/1.1 200")
        assert get(server, "/health")[0] == 200
        assert get(server, "/api/events/c/clip.mp4", {"Range": "bytes=-10"})[2] == data[-10:]


def test_the_token_and_the_host_check_hold_on_the_event_routes(engine):
    with StatusServer("127.0.0.1:0", engine, HttpConfig(listen="127.0.0.1:0", token=TOKEN)) as server:
        for path in ("/api/events", "/api/events/a", "/api/events/a/clip.mp4"):
            assert get(server, path)[0] == 401
            assert get(server, path, {"Authorization": f"Bearer {TOKEN}"})[0] == 200
            assert get(server, path, {"Authorization": f"Bearer {TOKEN}", "Host": "evil.example"})[0] == 421
        status, headers, body = get(server, "/api/events/a/clip.mp4", {"Authorization": f"Bearer {TOKEN}",
                                                                         "Range": "bytes=5-9"})
        assert (status, body) == (206, CLIP[5:10])


SECRET = b"root:x:0:0:root:/root:/bin/bash\n"


def metric(server: StatusServer, name: str) -> float:
    samples = {s.name: s.value for family in text_string_to_metric_families(get(server, "/metrics")[2].decode())
               for s in family.samples}
    return samples[name]


def test_a_row_naming_a_file_outside_the_folder_or_a_link_in_it_is_never_served(server, engine, tmp_path):
    secret = tmp_path / "passwd"
    secret.write_bytes(SECRET)
    (tmp_path / "store" / "b.mp4").symlink_to(secret)  # a link in the folder, pointing outside
    engine.storage.attach("b", clip=tmp_path / "store" / "b.mp4")
    assert engine.storage.flush()
    conn = sqlite3.connect(engine.storage.store.path)  # a row planted by another program
    conn.execute("UPDATE events SET snapshot = ?, thumbnail = '../passwd' WHERE id = 'c'", (str(secret),))
    conn.commit()
    conn.close()
    for path in ("/api/events/b/clip.mp4", "/api/events/c/snapshot.jpg", "/api/events/c/thumbnail.jpg"):
        status, headers, body = get(server, path)
        assert status == 404 and headers["content-type"] == "application/json" and SECRET not in body, path
    assert metric(server, "zerocopy_storage_refused_total") == 4  # the link when attached (its size), 3 requests
    engine.storage.store.prune(max_days=1, now=T0 + 10 * 86400)  # retention: the rows go, never the file
    assert secret.read_bytes() == SECRET and engine.storage.store.totals()[0] == 0


def test_a_damaged_row_is_skipped_and_counted_never_a_500(server, engine):
    conn = sqlite3.connect(engine.storage.store.path)  # damaged by another program (or a disk)
    conn.execute("UPDATE events SET box = 'not json' WHERE id = 'b'")
    conn.commit()
    conn.close()
    status, _, body = get(server, "/api/events")
    assert status == 200 and [e["id"] for e in json.loads(body)["events"]] == ["c", "a"]
    assert get(server, "/api/events/b")[0] == 404 and get(server, "/api/events/a")[0] == 200
    assert metric(server, "zerocopy_storage_damaged_rows_total") == 1


def test_a_database_that_cannot_be_opened_is_a_503_saying_why_and_left_alone(tmp_path):
    (tmp_path / "store" / "events.db").mkdir(parents=True)  # a folder where the file should be
    said: list[str] = []
    config = parse_config({"cameras": {"front": {"url": "rtsp://front.lan/1", "model": "face"}},
                           "storage": {"path": str(tmp_path / "store")}}, env={}, base=tmp_path)
    engine = Engine(config.cameras, None, say=said.append, storage=config.storage)
    try:
        with StatusServer("127.0.0.1:0", engine) as server:
            status, _, body = get(server, "/api/events")
        assert status == 503 and "cannot open" in json.loads(body)["error"]
        assert (tmp_path / "store" / "events.db").is_dir() and not list((tmp_path / "store").glob("*.corrupt-*"))
        assert any("events: not kept: cannot open" in line for line in said)
    finally:
        engine.stop(timeout=2.0)
