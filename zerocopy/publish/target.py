"""Where `--publish` sends: the broker, the credentials and the topic prefix of an `mqtt://` or `mqtts://` URL.

The password never leaves this object in text: `str()`, `repr()` and every error show `***` instead."""

from __future__ import annotations

import os
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from zerocopy.errors import ConfigError
from zerocopy.redaction import MASK, redact

PASSWORD_ENV = "ZEROCOPY_MQTT_PASSWORD"  # the password when the URL names a user but gives none
DEFAULT_PORTS = {"mqtt": 1883, "mqtts": 8883}
DEFAULT_PREFIX = "zerocopy"


def topic_level_problem(level: str) -> str | None:
    """Why `level` cannot be one level of a topic name (None if it can)."""
    if not level:
        return "an empty level"
    if "+" in level or "#" in level:
        return f"a wildcard in {level!r}"
    if "/" in level or "\0" in level:
        return f"{level!r} holds / or NUL"
    return None


@dataclass(frozen=True, kw_only=True)
class MqttTarget:
    """A broker and a topic prefix; `parse` makes one from the `--publish` URL."""

    scheme: str  # "mqtt" or "mqtts" (TLS)
    host: str
    port: int
    prefix: str = DEFAULT_PREFIX  # topic levels joined by "/", no slash at either end
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    ca: str | None = None  # CA certificate file for mqtts (None: the system's trust store)
    frigate_events: bool = False  # every event on PREFIX/events, Frigate's one topic (not PREFIX/CAMERA/events)

    @property
    def tls(self) -> bool:
        return self.scheme == "mqtts"

    def events_topic(self, camera: str) -> str:
        return f"{self.prefix}/events" if self.frigate_events else f"{self.prefix}/{camera}/events"

    def detections_topic(self, camera: str) -> str:
        return f"{self.prefix}/{camera}/detections"

    def availability_topic(self, node: str) -> str:
        return f"{self.prefix}/available/{node}"

    def __str__(self) -> str:
        user = "" if self.user is None else f"{self.user}:{MASK}@" if self.password else f"{self.user}@"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{user}{host}:{self.port}/{self.prefix}"

    @classmethod
    def parse(cls, url: str, ca: str | None = None, frigate_events: bool = False) -> MqttTarget:
        """`mqtt[s]://[user[:password]@]host[:port][/prefix]`; user and password percent-decoded; a user
        without a password takes it from $ZEROCOPY_MQTT_PASSWORD (if set). Raises ConfigError (one line,
        the password masked) for anything else."""
        def bad(problem: str) -> ConfigError:
            return ConfigError("publish", f"MQTT URL {redact(url)}: {problem}")

        try:
            parts = urlsplit(url.strip())
            port = parts.port
        except ValueError as e:  # a port that is not a number or out of range
            problem = _port_problem(e)
            if "@" in url and "range" not in problem:  # a password holding / or : reads as host:port
                problem += " (percent-encode / @ : in the user or password)"
            raise bad(problem) from None
        scheme = parts.scheme.lower()
        if scheme not in DEFAULT_PORTS:
            raise bad("use mqtt://host[:port]/prefix or mqtts://… (TLS)")
        if not parts.hostname:
            raise bad("no host")
        if port == 0:
            raise bad("port 0")
        if parts.query or parts.fragment or url.rstrip().endswith(("?", "#")):
            raise bad("no ? or # allowed (no query, fragment or topic wildcard)")
        prefix = unquote(parts.path).strip("/") or DEFAULT_PREFIX
        for level in prefix.split("/"):
            problem = topic_level_problem(level)
            if problem:
                raise bad(f"the topic prefix {prefix!r} has {problem}")
        user = unquote(parts.username or "") or None
        password = unquote(parts.password) if parts.password is not None else None
        if user is None and password:
            raise bad("a password needs a user (mqtt://user:password@host)")
        if user is not None and password is None:
            password = os.environ.get(PASSWORD_ENV) or None
        if ca is not None:
            if scheme != "mqtts":
                raise bad("a CA certificate goes with mqtts:// (TLS)")
            if (why := ca_problem(ca)) is not None:
                raise ConfigError("publish", f"MQTT CA certificate {ca}: {why}")
        return cls(scheme=scheme, host=parts.hostname, port=port or DEFAULT_PORTS[scheme], prefix=prefix, user=user,
                   password=password or None, ca=ca, frigate_events=frigate_events)


def ca_problem(ca: str) -> str | None:
    """Why the file `ca` cannot verify a broker's certificate (None if it can): missing, unreadable, or holding no
    PEM certificate. Read as the TLS connection will read it (`ssl` loads it), so a file that passes is usable."""
    if not Path(ca).is_file():
        return "no such file"
    try:
        ssl.create_default_context(cafile=ca)
    except ssl.SSLError as e:
        # NO_CERTIFICATE_OR_CRL_FOUND, or "[X509] PEM lib (_ssl.c:4154)" for a cut one
        why = e.reason.replace("_", " ").lower() if e.reason else str(e).split(" (_ssl.c")[0]
        return f"not a PEM CA certificate ({why})"
    except OSError as e:
        return f"cannot read it: {e.strerror or e}"
    return None


def _port_problem(e: ValueError) -> str:
    text = str(e)
    return "port out of range (1-65535)" if "range" in text else "the port is not a number"
