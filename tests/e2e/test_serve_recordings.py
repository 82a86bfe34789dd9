"""A camera's recordings over HTTP (docs/serve.md, *Recordings*): a real `zerocopy serve` whose camera is a paced
loopback live stream (tests/support/livesource.py) with `record = "continuous"`. `/recordings` lists segments that
cover the time with no gap over a keyframe interval + 1 s; a 10 s `clip.mp4` decodes (PyAV) and lasts 10 s to 10 s
plus a keyframe interval; a range request gets those bytes of it; bad input gets one clear error each; an export
across a reconnection stops at the gap and says so."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import av
import pytest
from conftest import wait_until
from livesource import LiveServer, make_ts_clip
from test_serve import Serve

pytestmark = [pytest.mark.timeout(240)]

FPS = 25
KEYINT_S = 1.0


@pytest.fixture(scope="module")
def recording(tmp_path_factory, face_model_path):
    """serve with camera `gate` recording continuously a paced HTTP live stream (320×180, a keyframe a second),
    once it has 14 s of segments; (serve, the stream)."""
    folder = tmp_path_factory.mktemp("recordings")
    source = LiveServer(make_ts_clip(folder / "gate.ts", seconds=40, fps=FPS, keyint=int(FPS * KEYINT_S)), "http",
                        lifetime=600, loops=15)
    serve = Serve(folder, f'[http]\nlisten = "127.0.0.1:0"\n[storage]\npath = "{folder / "store"}"\n'
                          f'[defaults]\nmodel = "face"\ndetect_fps = 5\n[cameras.gate]\nurl = "{source.url}"\n'
                          'record = "continuous"\n')
    try:
        serve.started()
        wait_until(lambda: recorded(serve) >= 14.0, 90, "14 s of segments")
        yield serve, source
    finally:
        serve.kill()
        source.stop()


def listing(serve: Serve, query: str = "") -> dict:
    status, kind, body = serve.get(f"/api/cameras/gate/recordings{query}")
    assert status == 200 and kind == "application/json", body
    return json.loads(body)


def recorded(serve: Serve) -> float:
    """Seconds from the first segment's start to the last one's end."""
    segments = listing(serve)["segments"]
    return segments[-1]["end"] - segments[0]["start"] if segments else 0.0


def fetch(serve: Serve, path: str, headers: dict[str, str] | None = None):
    """(status, headers, body) of a GET."""
    request = urllib.request.Request(f"http://{serve.address}{path}", headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=60) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def test_the_recordings_cover_the_time_without_a_gap(recording):
    serve, _ = recording
    answer = listing(serve)
    segments = answer["segments"]
    assert len(segments) >= 2 and answer["more"] is False
    assert all(set(s) == {"start", "end", "bytes", "motion", "objects"} for s in segments)  # never its path
    for before, after in zip(segments, segments[1:], strict=False):
        assert after["start"] - before["end"] < KEYINT_S + 1.0
        assert before["end"] - before["start"] == pytest.approx(10.0, abs=KEYINT_S + 0.1)
    middle = segments[1]["start"] + 0.5
    assert listing(serve, f"?after={middle}&before={middle + 0.1}")["segments"] == [segments[1]]


def test_a_10_s_export_decodes_lasts_what_was_asked_and_answers_a_range(recording, tmp_path):
    serve, _ = recording
    first = listing(serve)["segments"][0]
    start = first["start"] + 1.5  # between two keyframes
    end = start + 10.0
    status, headers, body = fetch(serve, f"/api/cameras/gate/clip.mp4?start={start}&end={end}")
    assert status == 200 and headers["Content-Type"] == "video/mp4" and headers["Accept-Ranges"] == "bytes"
    assert "X-Zerocopy-Cut-At-Gap" not in headers
    began = float(headers["X-Zerocopy-Start"])
    assert start - KEYINT_S - 0.1 <= began <= start  # the keyframe at or before the start
    (tmp_path / "export.mp4").write_bytes(body)
    with av.open(str(tmp_path / "export.mp4")) as container:
        times = [float(f.time) for f in container.decode(video=0)]
    lasts = len(times) / FPS
    assert 10.0 <= lasts <= 10.0 + KEYINT_S + 1 / FPS, lasts
    assert times[0] == 0 and float(headers["X-Zerocopy-Seconds"]) == pytest.approx(lasts, abs=1 / FPS)
    status, headers, part = fetch(serve, f"/api/cameras/gate/clip.mp4?start={start}&end={end}",
                                  {"Range": "bytes=1000-1999"})
    assert status == 206 and headers["Content-Range"] == f"bytes 1000-1999/{len(body)}"
    assert part == body[1000:2000]


@pytest.mark.parametrize(("path", "status", "said"), [
    ("/api/cameras/gate/clip.mp4?start=1795000000", 400, "end is missing"),
    ("/api/cameras/gate/clip.mp4?start=1795000010&end=1795000000", 400, "must come after start"),
    ("/api/cameras/gate/clip.mp4?start=1795000000&end=1795007200", 400, "at most 3600 s"),
    ("/api/cameras/gate/clip.mp4?start=soon&end=1795000000", 400, "start must be a Unix time"),
    ("/api/cameras/gate/clip.mp4?start=1&end=2&speed=2", 400, "unknown parameter 'speed'"),
    ("/api/cameras/gate/clip.mp4?start=1000000000&end=1000000010", 404, "has no recording between"),
    ("/api/cameras/gate/recordings?after=1795000000&before=1795200000", 400, "at most 86400 s"),
    ("/api/cameras/gate/recordings?before=nan", 400, "before must be a Unix time"),
    ("/api/cameras/back/clip.mp4?start=1&end=2", 404, "no camera named 'back'"),
])
def test_bad_input_gets_one_clear_error(recording, path, status, said):
    serve, _ = recording
    got, headers, body = fetch(serve, path)
    assert (got, headers["Content-Type"]) == (status, "application/json")
    assert said in json.loads(body)["error"]


def test_an_export_across_a_reconnection_stops_at_the_gap_and_says_so(recording):
    serve, source = recording
    last = listing(serve)["segments"][-1]["end"]
    source.kill()
    # the camera's recording has seen the drop, and the gap is longer than an export joins over (1 s)
    wait_until(lambda: not serve.cameras()["gate"]["recording"]["recording"] and time.time() > last + 2.5, 30,
               "the recording to stop for more than a second")
    source.restart()

    def gap() -> tuple[dict, dict] | None:
        segments = listing(serve)["segments"]
        return next(((a, b) for a, b in zip(segments, segments[1:], strict=False) if b["start"] - a["end"] > 1.0),
                    None)
    wait_until(lambda: gap() is not None, 60, "a segment after the reconnection")
    before, after = gap()
    start, end = before["end"] - 5.0, after["start"] + 2.0
    status, headers, body = fetch(serve, f"/api/cameras/gate/clip.mp4?start={start}&end={end}")
    assert status == 200 and headers["X-Zerocopy-Cut-At-Gap"] == "1" and body[4:8] == b"ftyp"
    assert float(headers["X-Zerocopy-Seconds"]) <= before["end"] - start + KEYINT_S  # the first side only
