"""A real MQTT broker for the tests: Debian's `mosquitto`, started on a free loopback port from a two-line
config, stopped (and restartable on the same port, for outages) by the test; and a subscriber that
collects what the broker delivers.

`scripts/install-system-deps.sh` installs `mosquitto`; where it is missing the tests that need it skip
with that reason (`.ci/run` has it).
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

LOOPBACK = "127.0.0.1"
MOSQUITTO = shutil.which("mosquitto") or next(
    (p for p in ("/usr/sbin/mosquitto", "/usr/bin/mosquitto") if Path(p).exists()), None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


class Broker:
    """`mosquitto` on 127.0.0.1:`port`: `start()`, `stop()` (an outage: clients lose the connection) and
    `start()` again on the same port; `url(prefix)` is the `--publish` URL."""

    def __init__(self, port: int | None = None, tls: tuple[str, str, str] | None = None, persistent: bool = False):
        """`tls`: (CA file, certificate file, key file): the listener speaks TLS only (`mqtts://`).
        `persistent`: sessions (a `Subscriber(session=…)`'s subscriptions and queued messages) outlive a
        `stop()`/`start()`, as a broker with persistence does."""
        if MOSQUITTO is None:
            raise RuntimeError("mosquitto is not installed (scripts/install-system-deps.sh installs it)")
        self.port = port or free_port()
        self.tls = tls is not None
        self._dir = Path(tempfile.mkdtemp(prefix="zc-mosquitto-"))
        self._dir.chmod(0o755)  # run as root, mosquitto drops to its own user: it must read what is here
        lines = [f"listener {self.port} {LOOPBACK}", "allow_anonymous true", "log_dest stderr", "log_type error"]
        if tls is not None:
            for key, source in zip(("cafile", "certfile", "keyfile"), tls, strict=True):
                copy = self._dir / f"{key}.pem"
                shutil.copyfile(source, copy)
                copy.chmod(0o644)
                lines.append(f"{key} {copy}")
        if persistent:
            store = self._dir / "store"
            store.mkdir()
            store.chmod(0o777)  # written by mosquitto's user
            lines += ["persistence true", f"persistence_location {store}/"]
        else:
            lines.append("persistence false")
        self._conf = self._dir / "mosquitto.conf"
        self._conf.write_text("\n".join(lines) + "\n")
        self._conf.chmod(0o644)
        self.proc: subprocess.Popen | None = None

    def url(self, prefix: str = "zerocopy", scheme: str | None = None) -> str:
        return f"{scheme or ('mqtts' if self.tls else 'mqtt')}://{LOOPBACK}:{self.port}/{prefix}"

    def start(self, timeout: float = 10.0) -> Broker:
        self.proc = subprocess.Popen([MOSQUITTO, "-c", str(self._conf)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mosquitto exited: {self.proc.stderr.read().decode(errors='replace')[-400:]}")
            with socket.socket() as s:
                if s.connect_ex((LOOPBACK, self.port)) == 0:
                    return self
            time.sleep(0.05)
        raise RuntimeError(f"mosquitto did not listen on {LOOPBACK}:{self.port} within {timeout} s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> Broker:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()


class Subscriber:
    """A paho client subscribed to `topic` (wildcards allowed) that keeps every message: `messages` holds
    (topic, payload as JSON or text, retained) in arrival order, `qos` each one's QoS (same order).

    `session`: a persistent session under that client id (clean_session off): on a `persistent` broker
    the messages published while this subscriber is away (closed, or the broker restarting) are kept for it
    and delivered when a `Subscriber` with the same session connects. `ca`: the CA file of a TLS broker."""

    def __init__(self, broker: Broker, topic: str = "#", session: str | None = None, ca: str | None = None):
        import paho.mqtt.client as mqtt

        self.messages: list[tuple[str, Any, bool]] = []
        self.raw: list[tuple[str, bytes]] = []  # (topic, payload bytes): a JPEG is not text
        self.qos: list[int] = []
        self._lock = threading.Lock()
        self._subscribed = threading.Event()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, clean_session=session is None,
                                  client_id=session or f"zc-test-sub-{time.monotonic_ns()}")
        self.client.on_connect = lambda c, u, f, rc, p: c.subscribe(topic, qos=1)
        self.client.on_subscribe = lambda c, u, mid, rc, p: self._subscribed.set()
        self.client.on_disconnect = lambda c, u, f, rc, p: self._subscribed.clear()
        self.client.on_message = self._on_message
        self.client.reconnect_delay_set(0.2, 1)
        if ca is not None:
            self.client.tls_set(ca_certs=ca)
        self.client.connect(LOOPBACK, broker.port)
        self.client.loop_start()
        if not self.wait_subscribed(10):
            raise RuntimeError("the test subscriber could not subscribe")

    def wait_subscribed(self, timeout: float = 30.0) -> bool:
        """Whether the subscriber is (again, after an outage) connected and subscribed within `timeout` s."""
        return self._subscribed.wait(timeout)

    def _on_message(self, client, userdata, msg) -> None:
        text = msg.payload.decode(errors="replace")
        try:
            payload: Any = json.loads(text)
        except ValueError:
            payload = text
        with self._lock:
            self.messages.append((msg.topic, payload, bool(msg.retain)))
            self.raw.append((msg.topic, bytes(msg.payload)))
            self.qos.append(msg.qos)

    def on(self, suffix: str) -> list[Any]:
        """The payloads of the messages whose topic ends with `suffix`."""
        with self._lock:
            return [p for t, p, _ in self.messages if t.endswith(suffix)]

    def close(self) -> None:
        self.client.disconnect()  # first: the network thread ends once DISCONNECT is out, not at its next poll
        self.client.loop_stop()

    def __enter__(self) -> Subscriber:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
