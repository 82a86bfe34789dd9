"""Why an MP4 read over HTTP opens but yields nothing: its index (the `moov` box) comes after its media
data (`mdat`), as every recorder and FFmpeg itself write it unless told `+faststart`, and the server
cannot seek (it ignores byte ranges, like `python -m http.server`). FFmpeg then reads the whole file to
find the index and cannot go back to the first frame ("Stream ends prematurely at 48").

`explain()` asks the server once, only after such a failure: one ranged request for the file's first
bytes, which tells both facts apart from anything else (a dropped connection, a server that does seek)."""

from __future__ import annotations

import base64
import struct
import urllib.error
import urllib.request
from urllib.parse import unquote, urlsplit, urlunsplit

HEAD_BYTES = 4096  # the top-level boxes before the media data are small (ftyp, free, wide, moov if first)
ASK_TIMEOUT_S = 5.0
MP4_FORMATS = {"mov", "mp4", "m4a", "3gp", "3g2", "mj2"}  # FFmpeg's mov demuxer's names
FIX = ("remux it with the index first (`ffmpeg -i clip.mp4 -c copy -movflags +faststart fixed.mp4`), "
       "or serve it as MKV or MPEG-TS, which need no index")


def is_mp4(format_name: str) -> bool:
    """Whether FFmpeg's demuxer `format_name` ("mov,mp4,m4a,3gp,3g2,mj2") is the MP4/MOV one."""
    return bool(MP4_FORMATS & set(format_name.split(",")))


def top_level_boxes(head: bytes) -> list[str]:
    """The types of the top-level boxes that start within `head` (the file's first bytes), in order."""
    types, offset = [], 0
    while offset + 8 <= len(head):
        size, kind = struct.unpack_from(">I4s", head, offset)
        types.append(kind.decode("latin-1"))
        if size == 1:  # a 64-bit size follows the type
            if offset + 16 > len(head):
                break
            (size,) = struct.unpack_from(">Q", head, offset + 8)
        if size < 8:  # 0: to the end of the file; anything else: not a box
            break
        offset += size
    return types


def ask(url: str, timeout: float = ASK_TIMEOUT_S) -> tuple[bool, list[str]] | None:
    """(whether the server serves byte ranges, the top-level boxes at the start of the file), or None
    when the server cannot be asked (refused, an error status, TLS, a timeout)."""
    parts = urlsplit(url)
    headers = {"Range": f"bytes=0-{HEAD_BYTES - 1}"}
    if parts.username is not None:  # FFmpeg sends the URL's user:password as basic authentication too
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        host = parts.hostname or ""
        host = f"[{host}]" if ":" in host else host  # an IPv6 address keeps its brackets
        parts = parts._replace(netloc=host + (f":{parts.port}" if parts.port else ""))
    request = urllib.request.Request(urlunsplit(parts), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            ranged = answer.status == 206
            head = answer.read(HEAD_BYTES)
    except (urllib.error.URLError, OSError, ValueError):
        return None
    return ranged, top_level_boxes(head)


def explain(url: str, format_name: str) -> str | None:
    """What to add to the error of an MP4 over HTTP(S) whose first read failed, or None if this is
    not why."""
    if urlsplit(url).scheme not in ("http", "https") or not is_mp4(format_name):
        return None
    answer = ask(url)
    if answer is None:
        return None
    ranged, boxes = answer
    if ranged or "mdat" not in boxes or ("moov" in boxes and boxes.index("moov") < boxes.index("mdat")):
        return None
    return ("an MP4 whose index (moov) is at its end, after the media data, read from a server that cannot "
            f"seek (it does not serve byte ranges): {FIX}")
