"""Who may ask `zerocopy serve`'s HTTP side: the Host allow-list (loopback names, the listen address, the address a
request arrived on, `[http] hosts`: a DNS-rebinding page is refused) and the token (bearer, or basic auth's password),
checked in that order on every request; and, for a request that changes state, what a browser cannot be made to
send from another site (`Gate.refuse_change`)."""

from __future__ import annotations

import base64
import binascii
import hmac
import ipaddress
from http import HTTPStatus
from urllib.parse import urlsplit

from zerocopy.serve.answers import Answer, as_json
from zerocopy.serve.http_config import host_name

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


class Gate:
    """Who may ask: the Host header must name this server (`hosts`: normalised names; the address a request
    came in on is allowed too), against DNS rebinding; with a `token`, `Authorization` must carry it (bearer, or
    basic auth with any user and the token as password), except on `open_paths` (the page's files, which hold no
    data). `refuse(scope)`: None, or the answer instead."""

    def __init__(self, hosts: set[str], token: str | None, open_paths: frozenset[str] = frozenset()):
        self.hosts, self.token, self.open_paths = hosts, token, open_paths

    def refuse(self, scope: dict) -> Answer | None:
        headers = dict(scope["headers"])
        given = headers.get(b"host", b"").decode("latin-1")
        name = _host_of(given)
        if name is None:
            return as_json(HTTPStatus.BAD_REQUEST, {"error": "a request needs a Host header with a host name"})
        local = _local_address(scope)
        if name not in self.hosts and name != local:
            return as_json(HTTPStatus.MISDIRECTED_REQUEST, {"error": f"Host {given[:100]!r} is not served here; add "
                                                          "its name to [http] hosts"})
        if self.token is not None and scope.get("path") not in self.open_paths \
                and not self._authorised(headers.get(b"authorization", b"")):
            return as_json(HTTPStatus.UNAUTHORIZED, {"error": "a token is needed: Authorization: Bearer TOKEN, or "
                                                   "basic auth with the token as password"},
                           headers=((b"www-authenticate", b'Basic realm="zerocopy", charset="UTF-8"'),))
        return None

    def refuse_change(self, scope: dict) -> Answer | None:
        """A request that changes state (after `refuse`): refused unless a token is set, whatever `allow_anonymous`
        says and on the loopback too (403), and carried as a bearer token (401: basic auth, which a browser sends
        again by itself once the user gave it, is not taken); a browser's request from another origin (`Origin`
        naming another host or port, `Sec-Fetch-Site` other than same-origin) is refused too (403)."""
        headers = dict(scope["headers"])
        if self.token is None:
            return as_json(HTTPStatus.FORBIDDEN, {"error": "changing an event needs a token, on the loopback too: set "
                                                "[http] token (allow_anonymous does not apply to changes)"})
        scheme, _, value = headers.get(b"authorization", b"").strip().partition(b" ")
        if scheme.lower() != b"bearer" or not hmac.compare_digest(value.strip(), self.token.encode()):
            return as_json(HTTPStatus.UNAUTHORIZED, {"error": "a change needs the token as Authorization: Bearer "
                                                   "TOKEN (not basic auth, which a browser sends by itself)"})
        host = headers.get(b"host", b"").decode("latin-1")
        origin = headers.get(b"origin")
        if origin is not None and not _same_origin(origin.decode("latin-1"), host):
            return as_json(HTTPStatus.FORBIDDEN, {"error": f"a change from another origin is refused: Origin "
                                                f"{origin.decode('latin-1')[:100]!r} is not {host[:100]!r}"})
        site = headers.get(b"sec-fetch-site")
        if site is not None and site.lower() not in (b"same-origin", b"none"):
            return as_json(HTTPStatus.FORBIDDEN, {"error": f"a change from another site is refused (Sec-Fetch-Site: "
                                                f"{site.decode('latin-1')[:40]})"})
        return None

    def _authorised(self, header: bytes) -> bool:
        assert self.token is not None
        scheme, _, value = header.strip().partition(b" ")
        value = value.strip()
        if scheme.lower() == b"bearer":
            given = value
        elif scheme.lower() == b"basic":
            try:
                given = base64.b64decode(value, validate=True).partition(b":")[2]
            except (binascii.Error, ValueError):
                return False
        else:
            return False
        return hmac.compare_digest(given, self.token.encode())


def _local_address(scope: dict) -> str | None:
    """The address the request came in on, normalised (an IPv4 client of a dual-stack `[::]` listen arrives on
    `::ffff:A.B.C.D`: its Host says `A.B.C.D`)."""
    address = str((scope.get("server") or ("",))[0])
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return host_name(address)
    mapped = getattr(ip, "ipv4_mapped", None)
    return str(mapped or ip)


def _same_origin(origin: str, host: str) -> bool:
    """Whether `origin` (`scheme://name[:port]`) names the Host header `host` (a missing port: the scheme's)."""
    try:
        url = urlsplit(origin.strip())
        port = url.port or {"http": 80, "https": 443}.get(url.scheme.lower())
    except ValueError:
        return False
    text = host.strip()
    given = text.rpartition(":")[2] if ":" in text and not text.endswith("]") else ""
    return (url.hostname is not None and port is not None and _host_of(host) == host_name(url.hostname)
            and (int(given) if given.isdigit() else port) == port and url.path in ("", "/") and not url.query)


def _host_of(header: str) -> str | None:
    """The host name of a Host header (`name`, `name:port`, `[v6]:port`), normalised; None if malformed."""
    text = header.strip()
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep or (rest and not (rest.startswith(":") and rest[1:].isdigit())):
            return None
    else:
        host, sep, port = text.partition(":")
        if sep and not port.isdigit():
            return None
    return host_name(host) if host else None
