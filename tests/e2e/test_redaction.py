"""Stream passwords and tokens never leave the process: every place a source is shown or written shows
it redacted (issue 16, item 1), while the real URL is what gets opened."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from livesource import LiveServer, make_ts_clip

import zerocopy
from zerocopy.samples import ClipSpec, write_clip

SECRETS = ("s3cretPW", "s3cretTOKEN", "s3cretKEY")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def media(tmp_path_factory):
    folder = tmp_path_factory.mktemp("redaction")
    clip = folder / "clip.mp4"
    write_clip(clip, ClipSpec(frames=10, width=320, height=180))
    return clip, make_ts_clip(folder / "live.ts", seconds=1.0)


def _urls(server: LiveServer) -> tuple[str, str]:
    live = server.url.replace("http://", "http://user:s3cretPW@") + "?channel=1&token=s3cretTOKEN"
    dead = f"http://admin:s3cretPW@127.0.0.1:{_closed_port()}?apikey=s3cretKEY"  # no path: the label is the host
    return live, dead


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def test_the_cli_writes_no_secret_anywhere(media, tmp_path):
    clip, ts = media
    out = tmp_path / "out.mp4"
    jsonl, report = tmp_path / "d.jsonl", tmp_path / "r.json"
    with LiveServer(ts, "http", accept_limit=1) as server:
        live, dead = _urls(server)
        proc = subprocess.run([sys.executable, "-m", "zerocopy", "detect", str(clip), live, dead, "--json", str(jsonl),
                               "--report", str(report), "--output", str(out), "--verbose"],
                              capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr  # the dead source failed; the others ran
    lines = [json.loads(x) for x in jsonl.read_text().splitlines()]
    r = json.loads(report.read_text())
    assert {line["source"] for line in lines} == {str(clip), live.replace("s3cretPW", "***").replace(
        "s3cretTOKEN", "***")}  # the live input ran, under its redacted name
    assert any("user:***@" in e["source"] for e in r["inputs"]) and r["inputs"][2]["error"]
    assert "admin:***@127.0.0.1" in proc.stderr  # the failing source is named, without its password
    written = [proc.stdout, proc.stderr, jsonl.read_text(), report.read_text()]
    written += [p.read_bytes().decode("latin-1") for p in tmp_path.glob("*.mp4")]  # metadata included
    assert [_leaks(w) for w in written] == [[]] * len(written)


def test_the_api_shows_no_secret_anywhere(media):
    from zerocopy.cli.detect import Outputs, run_detect

    clip, ts = media
    labels = []
    with LiveServer(ts, "http", accept_limit=2) as server, zerocopy.Detector("face") as det:
        live, dead = _urls(server)
        results = list(det.run([str(clip), live], on_error="skip"))
        assert {r.source for r in results} >= {str(clip)} and len({r.source for r in results}) == 2
        assert not any(_leaks(r.source) for r in results)
        with pytest.raises(zerocopy.InputError) as e:
            list(det.run([dead]))
        assert "admin:***@" in str(e.value) and not _leaks(str(e.value))
        assert not _leaks(json.dumps(det.report()))
        run_detect(det, [dead], Outputs(progress=lambda source, total, position: labels.append(source)))
    assert not _leaks(json.dumps(labels))


@pytest.mark.parametrize(("source", "shown"), [
    ("http://user:s3cretPW@127.0.0.1:8080/live.ts", "http://user:***@127.0.0.1:8080/live.ts"),
    ("rtsp://admin:p@ss@cam.lan:554/s1?channel=1&token=s3cretTOKEN", "rtsp://admin:***@cam.lan:554/s1?channel=1&token=***"),
    ("https://s3cretTOKEN@host/x?Password=s3cretPW#f", "https://***@host/x?Password=***#f"),
    ("http://127.0.0.1:9/live.ts?session=1&w=2", "http://127.0.0.1:9/live.ts?session=***&w=***"),  # w: no harmless key
    ("rtsp://admin:pa/ss@cam/x", "rtsp://admin:***@cam/x"),  # an unencoded / in the password
    ("rtsp://cam/live;user=a;password=s3cretPW", "rtsp://cam/live;user=***;password=***"),  # path parameters
    ("srt://127.0.0.1:9000?streamid=#!::u=a,p=s3cretPW&latency=2", "srt://127.0.0.1:9000?streamid=#!::u=a,p=***&latency=2"),
    ("http://127.0.0.1:1/live.ts?page=2", "http://127.0.0.1:1/live.ts?page=2"),
    # an npm package's scope is a path segment, not a password: the registry stays readable
    ("https://registry.npmjs.org/@mediapipe/objectron/-/o.tgz", "https://registry.npmjs.org/@mediapipe/objectron/-/o.tgz"),
    ("http://127.0.0.1:4873/@mediapipe/objectron/-/o.tgz", "http://127.0.0.1:4873/@mediapipe/objectron/-/o.tgz"),
    ("https://u:s3cretPW@127.0.0.1/@mediapipe/o", "https://u:***@127.0.0.1/@mediapipe/o"),
    ("clip.mp4", "clip.mp4"), ("/dev/video0", "/dev/video0"), (str(Path("a b/c.mp4")), "a b/c.mp4"),
])
def test_redact(source, shown):
    from zerocopy.redaction import redact, redact_text

    assert redact(source) == shown
    assert redact_text(f"{source}: cannot open: refused") == f"{shown}: cannot open: refused"
