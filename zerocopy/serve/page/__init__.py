"""The page `zerocopy serve` answers `/` with (docs/serve.md, *The page*): plain HTML, JS and CSS shipped in this
folder, served as they are (no build step, no outside URL). They hold no data: the page reads the API with the
token its user gives it, so they are the only paths served without the token (the Host check still applies)."""

from __future__ import annotations

import functools
import hashlib
from http import HTTPStatus
from pathlib import Path

from zerocopy.serve.answers import Answer

HERE = Path(__file__).parent
FILES = {  # path → (file, content type)
    "/": ("index.html", "text/html; charset=utf-8"),
    "/page/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/page/common.js": ("common.js", "text/javascript; charset=utf-8"),
    "/page/live.js": ("live.js", "text/javascript; charset=utf-8"),
    "/page/detail.js": ("detail.js", "text/javascript; charset=utf-8"),
    "/page/events.js": ("events.js", "text/javascript; charset=utf-8"),
    "/page/timeline.js": ("timeline.js", "text/javascript; charset=utf-8"),
    "/page/app.css": ("app.css", "text/css; charset=utf-8"),
    "/page/icon.svg": ("icon.svg", "image/svg+xml"),
}
PAGE_PATHS = frozenset(FILES)  # served without the token (`Gate`)
# The page's own files and the API only: no outside URL can load, nor can the page be framed; pictures and clips
# are shown from blobs (fetched with the token)
POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; media-src 'self' blob:; "
          "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


@functools.cache
def _read(name: str) -> tuple[bytes, bytes]:
    """The file's bytes and its entity tag (a hash of them), read once."""
    body = (HERE / name).read_bytes()
    return body, b'"' + hashlib.sha256(body).hexdigest()[:20].encode() + b'"'


def page_answer(path: str, if_none_match: str | None = None) -> Answer | None:
    """The page's file at `path` (None: not one of them). Cached by the browser but checked at every use
    (`no-cache` and an ETag: 304 when it has it), so a new version is taken as soon as serve runs it."""
    if path not in FILES:
        return None
    name, content_type = FILES[path]
    body, etag = _read(name)
    headers = ((b"cache-control", b"no-cache"), (b"etag", etag), (b"content-security-policy", POLICY.encode()),
               (b"referrer-policy", b"no-referrer"))
    if if_none_match is not None and etag.decode() in (tag.strip() for tag in if_none_match.split(",")):
        return Answer(HTTPStatus.NOT_MODIFIED, content_type, b"", headers)
    return Answer(HTTPStatus.OK, content_type, body, headers)
