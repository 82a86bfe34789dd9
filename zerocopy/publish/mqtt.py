"""The MQTT publisher behind `--publish` and `zerocopy serve`.

paho-mqtt's network thread connects, reconnects (1 s doubling to 30 s) and delivers in the background;
`event()` and `detections()` only hand a message to it and return, whatever the broker does. Each message
ends in exactly one count of `stats()`: `published` (QoS 1: acknowledged by the broker; QoS 0: written to
the connection), `dropped` (never delivered: the offline queue was full, a detection came while
disconnected, or it was still unacknowledged at `close`) or, until then, `queued`.

What paho 2.2 does that this relies on (checked against mosquitto, tests/e2e/test_publish.py):
- a QoS 1 message published while disconnected returns MQTT_ERR_NO_CONN but is kept and sent after the
  next CONNACK; one sent but not acknowledged when the connection drops is sent again (DUP) on the next:
  events are delivered at least once, a duplicate is possible after an outage;
- a QoS 0 message is never kept: MQTT_ERR_NO_CONN while disconnected, and those not yet written when the
  connection drops are marked MQTT_ERR_CONN_LOST (and "published") by the next reconnect();
- `max_queued_messages_set` bounds every QoS 1 message, ours and the availability ones alike: after an
  outage that filled it, the `online` of the reconnection would be refused. The bound is kept here instead,
  on events only.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any

from zerocopy.errors import ConfigError, ZeroCopyError, clipped
from zerocopy.names import NAME_RULE, is_name
from zerocopy.publish.ledger import Ledger
from zerocopy.publish.retained import Retained
from zerocopy.publish.target import MqttTarget
from zerocopy.redaction import mask_secrets, redact_text

RECONNECT_MIN, RECONNECT_MAX = 1, 30  # seconds: paho doubles the wait after each failed attempt
KEEPALIVE = 30  # seconds: a broker gone silent is noticed within 1.5× this
# seconds a peer may take to answer CONNECT (a broker answers at once): one silent longer is said to be no MQTT
# broker (or a TLS port spoken to without TLS); paho itself only drops it after KEEPALIVE, then tries again
CONNACK_TIMEOUT = 5.0
ONLINE, OFFLINE = "online", "offline"


class MqttPublisher:
    """Events (QoS 1) and detections (QoS 0) of the runs of this process to `target`, as node `node`.
    Thread-safe; never blocks on the broker; `close()` it once every run has ended."""

    def __init__(self, target: MqttTarget, node: str, queue_size: int = 1000):
        try:
            import paho.mqtt.client as mqtt
        except ImportError:
            raise ZeroCopyError("--publish needs paho-mqtt: pip install 'zerocopy[serve]'") from None
        if not is_name(node):
            raise ConfigError("node", f"node must be {NAME_RULE} (it becomes an MQTT topic level), not {node!r}")
        if queue_size < 1:
            raise ConfigError("queue_size", f"the MQTT offline queue holds at least 1 message, not {queue_size}")
        self._mqtt = mqtt
        self.target, self.node, self.queue_size = target, node, queue_size
        self._availability = target.availability_topic(node)
        self._lock = threading.Lock()  # guards the ledger (queues and counts); never held by paho's thread
        self._ledger = Ledger(mqtt.MQTT_ERR_CONN_LOST)
        self._closed = False
        self._progress = threading.Event()  # set at each acknowledgement while close() waits
        # written only by paho's thread (and by close(), once that thread is stopping):
        self._connected = False
        self._connects = 0
        self._errors = 0
        self._last_error: str | None = None
        # monotonic times: of the connection attempt under way (the first is due at once), and of the connection
        # made whose CONNECT is still unanswered
        self._attempt_since: float | None = time.monotonic()
        self._unanswered_since: float | None = None
        self._retained = Retained(mqtt.topic_matches_sub)  # kept on the broker across connections (`retain`)

        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv311, clean_session=True,
                             client_id=f"zerocopy-{node}-{os.getpid()}-{secrets.token_hex(3)}")
        if target.user is not None:
            client.username_pw_set(target.user, target.password)
        if target.tls:
            try:
                client.tls_set(ca_certs=target.ca)
            except (OSError, ValueError) as e:  # ssl.SSLError: a CA file that is not a PEM certificate
                raise ConfigError("publish", f"MQTT CA certificate {target.ca}: {e}") from None
        client.will_set(self._availability, OFFLINE, qos=1, retain=True)
        client.reconnect_delay_set(RECONNECT_MIN, RECONNECT_MAX)
        client.on_connect = self._on_connect
        client.on_pre_connect = self._on_pre_connect
        client.on_socket_open = self._on_socket_open
        client.on_connect_fail = self._on_connect_fail
        client.on_disconnect = self._on_disconnect
        client.on_message = self._retained.on_message  # only the owned filter is subscribed
        self._client = client
        client.connect_async(target.host, target.port, keepalive=KEEPALIVE)  # resolves nothing, sends nothing
        client.loop_start()

    # --- called by the runs ---

    def event(self, camera: str, payload: dict) -> None:
        """`payload` as JSON to PREFIX/CAMERA/events, QoS 1, not retained; queued while disconnected."""
        self._send(self.target.events_topic(camera), payload, retain=False, kind="events")

    def send(self, suffix: str, payload: Any, retain: bool = False) -> None:
        """`payload` (JSON; a number as its text; bytes as they are) to PREFIX/`suffix` as events are sent (QoS 1,
        queued while disconnected), counted apart as `extras`: a crossing's copy on `CAMERA/lines/LINE`, a
        retained count's `CAMERA/LABEL`, a snapshot's `CAMERA/LABEL/snapshot`."""
        self._send(f"{self.target.prefix}/{suffix}", payload, retain, kind="extras")

    def _send(self, topic: str, payload: Any, retain: bool, kind: str) -> None:
        data = payload if isinstance(payload, bytes) else str(payload) if isinstance(payload, int | float) \
            else json.dumps(payload, separators=(",", ":"))
        mqtt = self._mqtt
        ledger = self._ledger
        with self._lock:
            ledger.settle()
            # The offline queue is full: the NEW event is dropped. paho offers no way to withdraw a message
            # it holds, and the oldest may already be on the wire; keeping the first events of an outage
            # also keeps each object's `start`.
            if self._closed or len(ledger.pending[kind]) >= self.queue_size:
                ledger.dropped[kind] += 1
                return
            info = self._client.publish(topic, data, qos=1, retain=retain)
            if info.rc == mqtt.MQTT_ERR_NO_CONN:
                # kept by paho and sent on the next connection; paho leaves rc at NO_CONN even once it is
                # delivered, and is_published() would then raise for ever
                info.rc = mqtt.MQTT_ERR_SUCCESS
            elif info.rc != mqtt.MQTT_ERR_SUCCESS:  # MQTT_ERR_QUEUE_SIZE: no free message id
                ledger.dropped[kind] += 1
                return
            ledger.pending[kind].append(info)

    def retain(self, messages: Mapping[str, bytes | str], owned: str | None = None) -> None:
        """Keep `messages` (topic → payload, any topic) retained on the broker: QoS 1, now and again at every
        (re)connection, not counted in `stats()` (like `online`); `owned`: a topic filter only this publisher writes
        under, where any other retained message is cleared at every connection. Replaces the set given before."""
        if not self._closed:
            self._retained.replace(messages, owned, self._client, lambda: self._connected)

    def detections(self, camera: str, payload: dict) -> None:
        """`payload` as JSON to PREFIX/CAMERA/detections. QoS 0 and never queued: a per-frame stream is
        stale by the next frame, and holding it through an outage (or a slow broker) would only back the
        events up behind it; what cannot go out now is dropped and counted."""
        ledger = self._ledger
        if not self._connected:
            with self._lock:
                ledger.dropped["detections"] += 1
            return
        data = json.dumps(payload, separators=(",", ":"))
        with self._lock:
            ledger.settle()
            pending = ledger.pending["detections"]
            if self._closed or len(pending) >= self.queue_size:  # connected, but the socket is full
                ledger.dropped["detections"] += 1
                return
            info = self._client.publish(self.target.detections_topic(camera), data, qos=0)
            if info.rc != self._mqtt.MQTT_ERR_SUCCESS:  # MQTT_ERR_NO_CONN: the connection just went
                ledger.dropped["detections"] += 1
                return
            pending.append(info)

    def stats(self) -> dict[str, Any]:
        """JSON-ready counts (see the module's docstring for what each means). A connection whose CONNECT has
        gone unanswered for `CONNACK_TIMEOUT` s counts as an error, its reason the `last_error`."""
        errors, last_error = self._errors, self._last_error
        waited = self._unanswered_for()
        if waited is not None and waited >= CONNACK_TIMEOUT:
            errors, last_error = errors + 1, self._unanswered(waited, ended=False)
        with self._lock:
            kinds = self._ledger.counts()
        return {"target": mask_secrets(str(self.target)), "node": self.node, "connected": self._connected,
                **{key: sum(k[key] for k in kinds.values()) for key in ("published", "queued", "dropped")},
                "reconnects": max(0, self._connects - 1), "errors": errors,
                "last_error": mask_secrets(last_error) if last_error else None, **kinds}

    def close(self, timeout: float = 2.0) -> None:
        """Publish `offline`, wait up to `timeout` s for what is queued to be acknowledged (only while
        connected, or connecting: a broker that is down will not come back in time), disconnect and stop paho's
        thread. What is still unacknowledged is counted as dropped; a connection made whose CONNECT was never
        answered is said in `last_error`. Idempotent; never raises."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        deadline = time.monotonic() + max(0.0, timeout)
        while not self._connected and self._attempt_since is not None and time.monotonic() < deadline:
            self._progress.wait(min(deadline - time.monotonic(), 0.05))  # connecting: its outcome may be coming
            self._progress.clear()
        was_connected = self._connected
        attempt, unanswered = self._attempt_since, self._unanswered_for()  # (before disconnect() ends them)
        try:
            self._client.on_publish = lambda *_: self._progress.set()  # not before: it costs every message
            offline = None
            if was_connected:
                offline = self._client.publish(self._availability, OFFLINE, qos=1, retain=True)
            while self._connected and (self._unsettled() or (offline is not None and not self._ledger.state(offline))):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._progress.wait(min(remaining, 0.05))
                self._progress.clear()
            self._client.disconnect()
        except Exception:  # noqa: BLE001 (closing must not fail the run that is ending)
            pass
        # loop_stop() joins paho's thread. Connected, it ends as soon as DISCONNECT is written; otherwise it
        # may be in its back-off (it looks up every second) or inside a connect() (up to 5 s): it is a daemon
        # thread, left to end on its own after a short wait
        stopper = threading.Thread(target=self._client.loop_stop, name="mqtt-stop", daemon=True)
        stopper.start()
        stopper.join(max(0.0, deadline - time.monotonic()) + 0.2 if was_connected else 0.1)
        if not was_connected and attempt is not None:  # given up before paho would have: say why nothing went out
            self._errors += 1
            self._last_error = self._unanswered(unanswered, ended=False) if unanswered is not None else \
                f"cannot connect: no answer from {self.target.host}:{self.target.port} in " \
                f"{time.monotonic() - attempt:.1f} s"
        with self._lock:
            self._ledger.close()  # what is still unacknowledged: dropped

    def __enter__(self) -> MqttPublisher:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- bookkeeping (under self._lock) ---

    def _unsettled(self) -> bool:
        with self._lock:
            return self._ledger.unsettled()

    def _unanswered_for(self) -> float | None:
        """Seconds a connection made has waited for the answer to its CONNECT (None: none waits)."""
        since = self._unanswered_since
        return None if since is None or self._connected else time.monotonic() - since

    def _unanswered(self, waited: float, ended: bool) -> str:
        """Why nothing goes out when the peer took the connection but never answered CONNECT (CONNACK)."""
        what = "closed the connection" if ended else f"sent nothing for {waited:.1f} s"
        hint = "" if self.target.tls else ", or a TLS port (use mqtts://)"
        return f"no MQTT answer: {self.target.host}:{self.target.port} took the connection but {what} " \
               f"instead of answering CONNECT: not an MQTT broker{hint}?"

    # --- paho's thread ---

    def _on_pre_connect(self, client, userdata) -> None:
        self._attempt_since = time.monotonic()

    def _on_socket_open(self, client, userdata, sock) -> None:
        self._unanswered_since = time.monotonic()  # connected (TLS handshake included): CONNECT goes out now

    def _attempt_over(self) -> None:
        self._attempt_since = self._unanswered_since = None
        self._progress.set()  # close() may be waiting for this outcome

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        self._attempt_over()
        if self._closed:  # a connect() that was under way when close() came
            client.disconnect()
            return
        if reason_code.is_failure:  # e.g. "Not authorized": paho retries with its back-off
            self._errors += 1
            self._last_error = f"connection refused: {reason_code}"
            return
        self._connected = True
        self._connects += 1
        client.publish(self._availability, ONLINE, qos=1, retain=True)
        self._retained.connected(client)

    def _on_connect_fail(self, client, userdata) -> None:
        # paho calls this inside its `except OSError:` and passes no exception: the one being handled is it
        error = sys.exc_info()[1]
        self._attempt_over()
        self._errors += 1
        self._last_error = f"cannot connect: {_short(error)}" if error else "cannot connect"

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        was, waited = self._connected, self._unanswered_for()
        self._connected = False
        self._attempt_over()
        if was and not self._closed:
            self._errors += 1
            self._last_error = (f"disconnected by the broker: {reason_code}" if flags.is_disconnect_packet_from_server
                                else "connection lost")
        elif waited is not None and not self._closed:  # ended (by the peer, or by paho's keepalive) unanswered
            self._errors += 1
            self._last_error = self._unanswered(waited, ended=waited < KEEPALIVE)


def _short(error: BaseException) -> str:
    return clipped(redact_text(str(error) or type(error).__name__), 200)
