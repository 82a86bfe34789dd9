"""What a secret looks like wherever zerocopy shows or writes something: a URL's password and credential-like
query values (`redact`), URLs inside any text (`redact_text`), and the values this process filled in from the
environment or files (`masking`), masked wherever they appear."""

from __future__ import annotations

import contextlib
import re
import threading
from collections import Counter
from collections.abc import Iterable, Iterator

_URL = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")
_SECRET_KEY = re.compile(r"pass|pwd|token|secret|key|auth|sig|session|credential|jwt|ticket", re.IGNORECASE)
_PARAM = re.compile(r"(?P<sep>[?&;])(?P<key>[^=&;#?/]+)=(?P<value>[^&;#]*)")
_SRT_PASSWORD = re.compile(r"([,:])p=[^,&#]*")
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
    """`source` as it may be shown or written anywhere: a URL's password (or a bare token before the
    `@`, even one holding an unencoded `/` or `@`), the values of credential-like parameters in its
    query or path (`?token=…`, `;password=…`: `token`, `password`, `key`, `auth`, …) and an SRT
    stream id's `p=` masked; anything else unchanged. The real source is still what gets opened. This
    is the one place that decides what a secret in a source looks like; values held by `masking` (filled
    in from the environment or files) are masked wherever they are in it."""
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
    tail = _PARAM.sub(lambda p: f"{p['sep']}{p['key']}={MASK}" if _SECRET_KEY.search(p["key"]) else p[0], tail)
    if m.group(1).lower() == "srt":  # streamid=#!::u=name,p=secret (the SRT access control syntax)
        tail = _SRT_PASSWORD.sub(rf"\g<1>p={MASK}", tail)
    return scheme + authority + tail


def redact_text(text: str) -> str:
    """Every URL inside `text` (an error message, FFmpeg's log line) redacted as `redact` does, and every value
    held by `masking` masked wherever it is."""
    def one(m: re.Match) -> str:
        url = m.group(0).rstrip(":,.;)]")  # the punctuation of the sentence around it
        return redact(url) + m.group(0)[len(url):]

    text = mask_secrets(text)
    return _URL_IN_TEXT.sub(one, text) if "://" in text else text
