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

    def __init__(self, port: int | None = None):
        if MOSQUITTO is None:
            raise RuntimeError("mosquitto is not installed (scripts/install-system-deps.sh installs it)")
        self.port = port or free_port()
        self._dir = Path(tempfile.mkdtemp(prefix="zc-mosquitto-"))
        self._conf = self._dir / "mosquitto.conf"
        self._conf.write_text(f"listener {self.port} {LOOPBACK}\nallow_anonymous true\npersistence false\n"
                              "log_dest stderr\nlog_type error\n")
        self._dir.chmod(0o755)
        self._conf.chmod(0o644)
        self.proc: subprocess.Popen | None = None

    def url(self, prefix: str = "zerocopy", scheme: str = "mqtt") -> str:
        return f"{scheme}://{LOOPBACK}:{self.port}/{prefix}"

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
    (topic, payload as JSON or text, retained) in arrival order."""

    def __init__(self, broker: Broker, topic: str = "#"):
        import paho.mqtt.client as mqtt

        self.messages: list[tuple[str, Any, bool]] = []
        self._lock = threading.Lock()
        self._subscribed = threading.Event()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"zc-test-sub-{time.monotonic_ns()}")
        self.client.on_connect = lambda c, u, f, rc, p: c.subscribe(topic, qos=1)
        self.client.on_subscribe = lambda c, u, mid, rc, p: self._subscribed.set()
        self.client.on_message = self._on_message
        self.client.reconnect_delay_set(0.2, 1)
        self.client.connect(LOOPBACK, broker.port)
        self.client.loop_start()
        if not self._subscribed.wait(10):
            raise RuntimeError("the test subscriber could not subscribe")

    def _on_message(self, client, userdata, msg) -> None:
        text = msg.payload.decode(errors="replace")
        try:
            payload: Any = json.loads(text)
        except ValueError:
            payload = text
        with self._lock:
            self.messages.append((msg.topic, payload, bool(msg.retain)))

    def on(self, suffix: str) -> list[Any]:
        """The payloads of the messages whose topic ends with `suffix`."""
        with self._lock:
            return [p for t, p, _ in self.messages if t.endswith(suffix)]

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()

    def __enter__(self) -> Subscriber:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
