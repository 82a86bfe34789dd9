"""serve's page files (zerocopy/serve/page/): each served with its content type, a policy that lets it load nothing
from outside, cached but checked at each use (ETag, 304); none names an outside URL; the package ships them; they
are the only paths the gate serves without the token. The page in a real browser: tests/e2e/test_serve_page.py."""

import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path

from zerocopy.serve.gate import Gate
from zerocopy.serve.page import FILES, HERE, PAGE_PATHS, page_answer

TOKEN = "page-t0ken-never-shown-42"
REPO = Path(__file__).resolve().parents[3]


def test_each_file_is_served_with_its_type_a_policy_and_an_etag():
    types = {}
    for path in FILES:
        answer = page_answer(path)
        assert answer is not None and answer.status == 200 and answer.body == (HERE / FILES[path][0]).read_bytes()
        headers = dict(answer.headers)
        assert headers[b"cache-control"] == b"no-cache" and re.fullmatch(rb'"[0-9a-f]{20}"', headers[b"etag"])
        policy = headers[b"content-security-policy"].decode()
        assert "default-src 'none'" in policy and "connect-src 'self'" in policy and "frame-ancestors 'none'" in policy
        types[path] = answer.content_type
    scripts = ("app", "common", "live", "detail", "events", "timeline")
    assert types == {"/": "text/html; charset=utf-8", "/page/app.css": "text/css; charset=utf-8",
                     "/page/icon.svg": "image/svg+xml",
                     **{f"/page/{name}.js": "text/javascript; charset=utf-8" for name in scripts}}
    assert page_answer("/api/cameras") is None and page_answer("/page/") is None and page_answer("/index.html") is None


def test_a_file_the_browser_has_is_answered_304():
    etag = dict(page_answer("/page/app.js").headers)[b"etag"].decode()
    assert page_answer("/page/app.js", etag).status == 304 and page_answer("/page/app.js", etag).body == b""
    assert page_answer("/page/app.js", f'"other", {etag}').status == 304
    assert page_answer("/page/app.js", '"other"').status == 200
    assert page_answer("/page/app.css", etag).status == 200  # another file's tag


def test_no_file_names_an_outside_url_and_the_page_asks_only_for_its_own():
    for name, _ in FILES.values():
        text = (HERE / name).read_text(encoding="utf-8").replace('xmlns="http://www.w3.org/2000/svg"', "")
        assert not re.search(r"https?:|[\"'(]//|@import", text), name
    html = (HERE / "index.html").read_text(encoding="utf-8")
    asked = set(re.findall(r'(?:src|href)="([^"]+)"', html))
    assert asked == {"page/common.js", "page/live.js", "page/detail.js", "page/events.js", "page/timeline.js",
                     "page/app.js", "page/app.css", "page/icon.svg"}
    assert {f"/{a}" for a in asked} < PAGE_PATHS
    # (deferred, run in order: common.js is what the others use; app.js, last, starts them with the page's API)
    scripts = re.findall(r'<script src="([^"]+)" defer></script>', html)
    assert scripts[0] == "page/common.js" and scripts[-1] == "page/app.js" and len(scripts) == 6


def test_the_package_ships_the_page():
    data = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    patterns = data["zerocopy.serve.page"]
    assert all(any(fnmatch(name, p) for p in patterns) for name, _ in FILES.values())


def scope(path: str, auth: bytes | None = None, host: bytes = b"localhost") -> dict:
    headers = [(b"host", host)] + ([(b"authorization", auth)] if auth is not None else [])
    return {"headers": headers, "server": ("127.0.0.1", 8737), "path": path}


def test_the_gate_serves_the_page_without_the_token_and_nothing_else():
    gate = Gate({"localhost"}, TOKEN, PAGE_PATHS)
    for path in PAGE_PATHS:
        assert gate.refuse(scope(path)) is None, path
        assert gate.refuse(scope(path, host=b"evil.example")).status == 421, path  # the Host check still applies
    for path in ("/api/cameras", "/health", "/metrics", "/page/", "/page/other.js", "/api/events", "//"):
        assert gate.refuse(scope(path)).status == 401, path
    assert gate.refuse(scope("/api/cameras", f"Bearer {TOKEN}".encode())) is None
    assert Gate({"localhost"}, TOKEN).refuse(scope("/")).status == 401  # no open path unless given
