"""zerocopy.decode.mp4_index: an MP4 whose index is at its end, served over HTTP by a server that cannot
seek (Python's own `http.server`, as users try it) or one that can, read by the real decoder on the loopback."""

from __future__ import annotations

import functools
import http.server
import io
import threading
from pathlib import Path

import pytest

from zerocopy.decode.mp4_index import ask, explain, top_level_boxes
from zerocopy.decode.pyav import PyAVDecoder
from zerocopy.samples import ClipSpec, write_clip

FRAMES = 30
SPEC = ClipSpec(width=320, height=180, frames=FRAMES, noise=3.0)


class RangedHandler(http.server.SimpleHTTPRequestHandler):
    """Serves byte ranges (`Range: bytes=A-B`, `A-`) as a web server does; records what it was sent."""

    seen: list[dict] = []

    def log_message(self, *args) -> None:
        pass

    def send_head(self):
        RangedHandler.seen.append(dict(self.headers))
        wanted = self.headers.get("Range", "")
        path = Path(self.translate_path(self.path))
        if not wanted.startswith("bytes=") or not path.is_file():
            return super().send_head()
        data = path.read_bytes()
        first, _, last = wanted[6:].partition("-")
        start, end = int(first), min(int(last) if last else len(data) - 1, len(data) - 1)
        self.send_response(206)
        self.send_header("Content-Type", "video/mp4")
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        return io.BytesIO(data[start:end + 1])


class PlainHandler(http.server.SimpleHTTPRequestHandler):
    """`python -m http.server`: ignores ranges, so a client cannot seek."""

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """`serve(handler)` -> base URL of the clips folder served on a loopback port by that handler."""
    root = tmp_path_factory.mktemp("served")
    write_clip(root / "index-last.mp4", SPEC)
    write_clip(root / "index-first.mp4", SPEC, container_options={"movflags": "faststart"})
    servers = []

    def serve(handler) -> str:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(root)))
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()


def _decode(url: str) -> tuple[int, str | None]:
    decoder = PyAVDecoder(url)
    frames = sum(1 for _ in decoder.frames())
    decoder.close()
    return frames, decoder.damage.stopped_early


def test_the_index_at_the_end_from_a_server_that_cannot_seek_is_said_with_the_fix(served):
    base = served(PlainHandler)
    frames, why = _decode(f"{base}/index-last.mp4")
    assert frames == 0
    assert "index (moov) is at its end" in why and "does not serve byte ranges" in why
    assert "+faststart" in why and "MKV or MPEG-TS" in why


def test_the_same_clip_with_its_index_first_or_from_a_server_that_seeks_is_read_whole(served):
    assert _decode(f"{served(PlainHandler)}/index-first.mp4") == (FRAMES, None)
    assert _decode(f"{served(RangedHandler)}/index-last.mp4") == (FRAMES, None)


def test_explain_says_nothing_where_the_index_or_the_server_is_not_why(served):
    plain, ranged = served(PlainHandler), served(RangedHandler)
    mov = "mov,mp4,m4a,3gp,3g2,mj2"
    assert explain(f"{plain}/index-last.mp4", mov) is not None
    assert explain(f"{plain}/index-first.mp4", mov) is None  # the index first: something else failed
    assert explain(f"{ranged}/index-last.mp4", mov) is None  # the server seeks
    assert explain(f"{plain}/index-last.mp4", "matroska,webm") is None
    assert explain(f"{plain}/missing.mp4", mov) is None  # 404: cannot ask
    assert explain("rtsp://127.0.0.1:1/x", mov) is None


def test_ask_reads_the_boxes_and_sends_the_urls_credentials(served, tmp_path):
    ranged = served(RangedHandler)
    RangedHandler.seen.clear()
    port = ranged.rsplit(":", 1)[1]
    assert ask(f"http://user:p%40ss@127.0.0.1:{port}/index-last.mp4") == (True, ["ftyp", "free", "mdat"])
    assert RangedHandler.seen[-1]["Authorization"] == "Basic dXNlcjpwQHNz"  # user:p@ss
    assert RangedHandler.seen[-1]["Range"] == "bytes=0-4095"
    assert ask(f"{ranged}/index-first.mp4")[1][:2] == ["ftyp", "moov"]


def test_top_level_boxes_follow_sizes_and_stop_at_what_is_not_a_box():
    box = lambda kind, size: size.to_bytes(4, "big") + kind + b"\0" * (size - 8)  # noqa: E731
    big = (1).to_bytes(4, "big") + b"mdat" + (2**33).to_bytes(8, "big")
    assert top_level_boxes(box(b"ftyp", 24) + box(b"free", 8) + big) == ["ftyp", "free", "mdat"]
    assert top_level_boxes(box(b"ftyp", 16) + (0).to_bytes(4, "big") + b"mdat") == ["ftyp", "mdat"]
    assert top_level_boxes(b"\0\0\0\3junk" + b"\0" * 20) == ["junk"]
    assert top_level_boxes(b"") == []
