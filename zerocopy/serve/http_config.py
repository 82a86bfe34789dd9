"""`zerocopy serve`'s `[http]` table: where the status server listens, who may ask it (`hosts`, `token`,
`allow_anonymous`), and what `/health` requires; checked whole like the rest of the config (docs/serve.md)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from zerocopy.serve.checks import bool_value, unknown_keys

DEFAULT_LISTEN = "127.0.0.1:8737"
HTTP_KEYS = ("listen", "latest", "hosts", "token", "allow_anonymous", "health_requires_broker")
MIN_TOKEN = 16  # characters of an HTTP token (`openssl rand -hex 16` gives 32)
HOST_NAME = re.compile(r"[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?")


@dataclass(frozen=True, kw_only=True)
class HttpConfig:
    listen: str = DEFAULT_LISTEN
    # each camera's last picture kept for latest.jpg: free on the software path (the decoded frame), a
    # full-size download of every frame on the VA paths (`snapshots` before: checks.RENAMED)
    latest: bool = True
    hosts: tuple[str, ...] = ()  # Host names served besides the loopback names and the listen address
    token: str | None = field(default=None, repr=False)  # bearer token or basic-auth password; None: no auth
    allow_anonymous: bool = False  # listening beyond the loopback without a token, on purpose
    health_requires_broker: bool = False  # /health answers 503 (not 200) while the broker is down or behind


class ListenAddress(NamedTuple):
    """Where the status server listens (`parse_listen`)."""

    host: str  # a name or an IP address (IPv6 without brackets)
    port: int  # 0: a free one, picked when bound


def parse_listen(listen: str) -> ListenAddress:
    """`host:port` (`[v6]:port`; a bare `port` or `:port` listens on the loopback, never on every
    address) → its address; ValueError naming what is wrong."""
    text = listen.strip()
    if text.startswith("["):
        host, sep, port = text[1:].partition("]:")
        if not sep:
            raise ValueError("an IPv6 address is written [ADDRESS]:PORT")
    else:
        host, _, port = text.rpartition(":")
    host = host or "127.0.0.1"
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"expected HOST:PORT with a port from 0 to 65535, not {listen!r}")
    return ListenAddress(host, int(port))


def is_loopback(host: str) -> bool:
    """`host` (a listen address) reaches this box only: `localhost`, 127.0.0.0/8, ::1."""
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_name(text: str) -> str | None:
    """A Host allow-list entry normalised (lower case, IPv6 without brackets), or None if it is not a host
    name or an IP address."""
    name = text.strip().lower().rstrip(".")
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        return name if HOST_NAME.fullmatch(name) else None


def check_http(table: dict | None, given: dict, problem: Callable[[str, str], None]) -> HttpConfig:
    """`[http]` checked (`given`: the table before its secrets were filled in, so that a token that could not
    be filled in, already said, is not said missing again)."""
    if table is None:
        return HttpConfig()
    unknown_keys("http", sorted(set(table) - set(HTTP_KEYS)), list(HTTP_KEYS), problem,
                 f"[http] takes {', '.join(HTTP_KEYS)} (listen = \"HOST:PORT\")")
    ok = True
    listen = table.get("listen", DEFAULT_LISTEN)
    if not isinstance(listen, str):
        problem("http", f"listen must be a string \"HOST:PORT\", not a {type(listen).__name__}")
        ok, listen = False, DEFAULT_LISTEN
    else:
        try:
            parse_listen(listen)
        except ValueError as e:
            problem("http", f"listen: {e}")
            ok, listen = False, DEFAULT_LISTEN
    latest = bool_value(table, "latest", "http", True, problem)
    anonymous = bool_value(table, "allow_anonymous", "http", False, problem)
    requires_broker = bool_value(table, "health_requires_broker", "http", False, problem)
    hosts: list[str] = []
    given_hosts = table.get("hosts", [])
    if not isinstance(given_hosts, list) or not all(isinstance(h, str) for h in given_hosts):
        problem("http", "hosts must be a list of host names (e.g. hosts = [\"box1.lan\"])")
        ok = False
    else:
        for text in given_hosts:
            name = host_name(text)
            if name is None:
                problem("http", f"hosts: {text!r} is not a host name or an IP address (no scheme, no port)")
                ok = False
            else:
                hosts.append(name)
    token = table.get("token")
    if token is not None and (not isinstance(token, str) or len(token) < MIN_TOKEN
                              or not all(33 <= ord(c) < 127 for c in token)):
        problem("http", f"token must be at least {MIN_TOKEN} printable ASCII characters without spaces "
                "(e.g. `openssl rand -hex 16`, given as token = \"${file:PATH}\" or \"${NAME}\")")
        ok, token = False, None
    if token is not None and anonymous:
        problem("http", "allow_anonymous = true and a token: the token would be required; keep one of them")
        ok = False
    if ok and token is None and "token" not in given and not anonymous and not is_loopback(parse_listen(listen).host):
        problem("http", f"listen: {listen} reaches beyond the loopback: set token (a bearer token or basic-auth "
                "password, e.g. token = \"${file:/run/secrets/zerocopy-http}\") or allow_anonymous = true")
        ok = False
    if not ok:
        return HttpConfig()
    return HttpConfig(listen=listen, latest=latest, hosts=tuple(hosts), token=token,
                      allow_anonymous=anonymous, health_requires_broker=requires_broker)
