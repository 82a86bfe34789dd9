"""What a secret looks like wherever zerocopy shows or writes something: a URL's password, its query values and
`key=value` parts of its path (`redact`), URLs inside any text (`redact_text`), and the values this process filled in
from the environment or files (`masking`), masked wherever they appear."""

from __future__ import annotations

import contextlib
import re
import threading
from collections import Counter
from collections.abc import Iterable, Iterator

_URL = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")
# Keys whose values are plainly harmless to show: which channel or stream, its size, rate, codec and transport. Every
# other key's value is masked, by shape rather than by name: vendors spell credentials every way (Foscam's `loginuse`
# and `loginpas`, `usr`, `pwd`, `sig`, `auth`, `code`, `id`), and a key no list knows is the one that leaks. Written
# lower case without `_` or `-` (`rtsp_transport` is `rtsptransport`).
HARMLESS_KEYS = frozenset({
    "channel", "channels", "chn", "ch", "camera", "cam", "subtype", "substream", "stream", "streamtype", "profile",
    "resolution", "fps", "framerate", "rate", "width", "height", "codec", "videocodec", "audiocodec", "audio",
    "transport", "rtsptransport", "protocol", "format", "quality", "compression", "bitrate", "latency", "mode", "page",
    "timeout", "rwtimeout", "pktsize", "buffersize", "fifosize", "reuse", "localport"})  # (FFmpeg's network options)
# a query's `key=value` (after `?`, `&`, `;` or, but in SRT's URLs, a fragment's `#`)
_PARAM = re.compile(r"(?P<sep>[?&;#])(?P<key>[^=&;#?/]+)=(?P<value>[^&;#]*)")
_SRT_PARAM = re.compile(r"(?P<sep>[?&;])(?P<key>[^=&;?/]+)=(?P<value>[^&;]*)")  # SRT's stream id begins with #
# a path's `key=value`, at a segment's start or after `_`, `&`, `;` or `,` (XMEye's
# `/user=admin_password=…_channel=1_stream=0.sdp`); its value ends where the next such pair begins
_PATH_PAIR = re.compile(r"(?P<sep>^|[/_&;,])(?P<key>[A-Za-z][A-Za-z0-9.-]*)=(?P<value>.*?)"
                        r"(?=[_&;,][A-Za-z][A-Za-z0-9.-]*=|[/&;,]|$)")
# a whole path segment `key_value` with no `=` and no `.` (not a file's name): `/password_secret`, `/user_admin`
_PATH_UNDERSCORED = re.compile(r"(?<=/)(?P<key>[A-Za-z][A-Za-z0-9-]*)_(?P<value>[^/=.]+)(?=/|$)")
# a query's part without `=` (a bare value: `?YWRtaW46c2VjcmV0`, `&token`)
_BARE = re.compile(r"(?P<sep>[?&;])(?P<value>[^=&;#]+)(?=[&;#]|$)")
_SRT_ACCESS = re.compile(r"(?P<sep>^#!::|,)(?P<key>[^=,]+)=(?P<value>[^,]*)")  # streamid=#!::r=live,u=name,p=secret
_SRT_SHOWN = frozenset({"r", "m", "t", "h", "u"})  # resource, mode, type, host, user: the rest (`p`, `s`) masked
_URL_IN_TEXT = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>]+")
MASK = "***"
MIN_MASKED = 3  # a secret value at least this long is masked wherever it appears (shorter ones would mask words)

# Values this process filled in from the environment or from files (`zerocopy serve`'s `${NAME}`, `${file:PATH}`),
# by how many `masking()` blocks hold each: `redact` and `redact_text` mask every one of them wherever it appears.
_secret_holds: Counter[str] = Counter()
_secrets: tuple[str, ...] = ()  # the same values, longest first (one masked inside another is masked whole)
_secrets_lock = threading.Lock()


@contextlib.contextmanager
def masking(values: Iterable[str]) -> Iterator[None]:
    """While the block runs, every value of `values` (`MIN_MASKED` characters or more) is masked (`***`) in all
    that `redact` and `redact_text` show: the events' and the report's `source`, `/api/*`, errors, the log. For
    secrets filled in anywhere in a source (a user, a password, a path, a query) or elsewhere, which no rule of
    `redact` could tell from the rest."""
    global _secrets
    held = [v for v in set(values) if len(v) >= MIN_MASKED]
    with _secrets_lock:
        _secret_holds.update(held)
        _secrets = tuple(sorted(_secret_holds, key=len, reverse=True))
    try:
        yield
    finally:
        with _secrets_lock:
            _secret_holds.subtract(held)
            for value in [v for v, n in _secret_holds.items() if n <= 0]:  # held by no block any more
                del _secret_holds[value]
            _secrets = tuple(sorted(_secret_holds, key=len, reverse=True))


def mask_secrets(text: str) -> str:
    """`text` with every value held by `masking` replaced by `***`."""
    for value in _secrets:
        text = text.replace(value, MASK)
    return text


def redact(source: str) -> str:
    """`source` as it may be shown or written anywhere: a URL's password (or a bare token before the `@`, even one
    holding an unencoded `/` or `@`), every query value (a bare one too) and every `key=value` part or `key_value`
    segment of its path (`;password=…`, XMEye's `/user=…_password=…_channel=1`, `/password_…`; not a file's name)
    masked unless its key is in `HARMLESS_KEYS` (`channel=1`, `subtype=0` stay; `_named`: `/av_stream`); an SRT
    stream id's `p=` masked; anything else unchanged. The real source is still what gets opened. This is the one place
    that decides what a secret in a source looks like; values held by `masking` (filled in from the environment or
    files) are masked wherever they are in it."""
    source = mask_secrets(source)
    m = _URL.match(source)
    if m is None:
        return source
    scheme, rest = source[: m.end()], source[m.end():]
    # the authority ends at the first / ? # after the last @ (a password may hold an unencoded / or @); an @
    # right after a / begins a path segment (npm's /@scope/name), never ends a password
    at = min((i for i in (rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    while (at := rest.rfind("@", 0, at)) > 0 and rest[at - 1] == "/":
        pass
    cut = min((i for i in (rest.find("/", at + 1), rest.find("?", at + 1), rest.find("#", at + 1)) if i >= 0),
              default=len(rest))
    authority, tail = rest[:cut], rest[cut:]
    userinfo, at_sign, host = authority.rpartition("@")
    if at_sign:
        user, colon, _ = userinfo.partition(":")
        authority = f"{user}:{MASK}@{host}" if colon else f"{MASK}@{host}"
    end = min((i for i in (tail.find("?"), tail.find("#")) if i >= 0), default=len(tail))
    path, query = tail[:end], tail[end:]
    srt = m.group(1).lower() == "srt"
    path = _PATH_UNDERSCORED.sub(lambda p: p[0] if _named(p[0]) else f"{p['key']}_{MASK}",
                                 _PATH_PAIR.sub(_pair, path))
    if srt:
        return scheme + authority + path + _SRT_PARAM.sub(_srt_param, query)
    return scheme + authority + path + _BARE.sub(lambda p: p[0] if _named(p["value"]) else f"{p['sep']}{MASK}",
                                                 _PARAM.sub(_pair, query))


def _shown(key: str) -> bool:
    return key.lower().replace("_", "").replace("-", "") in HARMLESS_KEYS


def _named(text: str) -> bool:
    """Whether a `key_value` path segment or a bare query value is a name, not a secret: a part of it before or after
    its first `_` is a harmless key (Hikvision's `/av_stream`, XMEye's `?real_stream`)."""
    key, _, value = text.partition("_")
    return bool(value) and (_shown(key) or _shown(value))


def _pair(p: re.Match) -> str:
    """A `key=value` with its value masked unless its key is harmless (an empty value hides nothing)."""
    return p[0] if not p["value"] or _shown(p["key"]) else f"{p['sep']}{p['key']}={MASK}"


def _srt_param(p: re.Match) -> str:
    """An SRT URL's parameter: its `streamid` in the access control syntax (`#!::r=live,u=name,p=secret`) shows its
    resource, mode, type, host and user, any other stream id is masked whole; the rest as `_pair` does."""
    if p["key"].lower() != "streamid" or not p["value"].startswith("#!::"):
        return _pair(p)
    access = _SRT_ACCESS.sub(lambda a: a[0] if a["key"] in _SRT_SHOWN or not a["value"]
                             else f"{a['sep']}{a['key']}={MASK}", p["value"])
    return f"{p['sep']}{p['key']}={access}"


def redact_text(text: str) -> str:
    """Every URL inside `text` (an error message, FFmpeg's log line) redacted as `redact` does, and every value
    held by `masking` masked wherever it is."""
    def one(m: re.Match) -> str:
        url = m.group(0).rstrip(":,.;)]")  # the punctuation of the sentence around it
        return redact(url) + m.group(0)[len(url):]

    text = mask_secrets(text)
    return _URL_IN_TEXT.sub(one, text) if "://" in text else text
