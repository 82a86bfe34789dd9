"""Who may ask `zerocopy serve`'s HTTP side: the Host allow-list (loopback names, the listen address, the address a
request arrived on, `[http] hosts`: a DNS-rebinding page is refused) and the token (bearer, or basic auth's password),
checked in that order on every request."""

from __future__ import annotations

import base64
import binascii
import hmac
import ipaddress
from http import HTTPStatus

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
