"""The publisher's account of its messages: those handed to paho and not yet counted, in order, and the counts of
those that were. Each message ends in exactly one count: `published`, `dropped` or, until then, queued (what
each means: zerocopy/publish/mqtt.py's docstring)."""

from __future__ import annotations

from collections import deque
from typing import Any

KINDS = ("events", "detections", "extras")  # extras: counts, snapshots, crossings on their line's topic


class Ledger:
    """The messages of each kind in `KINDS` waiting for their outcome, and the counts of those settled. Not
    thread-safe: the publisher calls it under its lock (never held by paho's thread). `conn_lost`: paho's
    MQTT_ERR_CONN_LOST (paho is imported only when a publisher is made)."""

    def __init__(self, conn_lost: int):
        self.conn_lost = conn_lost
        # MQTTMessageInfo of each message not yet counted, in order, by kind
        self.pending: dict[str, deque[Any]] = {kind: deque() for kind in KINDS}
        self.published = dict.fromkeys(KINDS, 0)
        self.dropped = dict.fromkeys(KINDS, 0)

    def state(self, info: Any) -> bool | None:
        """True: delivered (QoS 1: acknowledged; QoS 0: written); False: lost with its connection (QoS 0);
        None: not yet."""
        if info.rc == self.conn_lost:
            return False
        try:
            return True if info.is_published() else None
        except (RuntimeError, ValueError):  # its rc turned to an error meanwhile
            return False

    def tally(self, pending: deque[Any]) -> tuple[int, int]:
        """(delivered, lost) among all of `pending`, not only its head: acknowledgements may come out of order."""
        states = [self.state(info) for info in pending]
        return states.count(True), states.count(False)

    def settle(self) -> None:
        """Count the messages at the head of each queue that are done (cheap: called on every message)."""
        for kind, pending in self.pending.items():
            while pending:
                state = self.state(pending[0])
                if state is None:
                    break
                pending.popleft()
                (self.published if state else self.dropped)[kind] += 1

    def unsettled(self) -> bool:
        """Whether a message still waits for its outcome."""
        self.settle()
        return any(self.pending.values())

    def counts(self) -> dict[str, dict[str, int]]:
        """Published, queued and dropped by kind, the messages done behind one still waiting included."""
        self.settle()
        kinds = {}
        for kind, pending in self.pending.items():
            delivered, lost = self.tally(pending)
            kinds[kind] = {"published": self.published[kind] + delivered,
                           "queued": len(pending) - delivered - lost, "dropped": self.dropped[kind] + lost}
        return kinds

    def close(self) -> None:
        """Count every message: what is not delivered by now never will be."""
        self.settle()
        for kind, pending in self.pending.items():
            delivered, _ = self.tally(pending)
            self.published[kind] += delivered
            self.dropped[kind] += len(pending) - delivered  # lost, or not acknowledged in time
            pending.clear()
