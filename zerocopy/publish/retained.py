"""Retained messages that a publisher keeps on the broker for as long as it runs (Home Assistant's discovery configs:
publish/homeassistant.py), and the topics it owns, where it clears what it no longer publishes.

Everything here runs on paho's network thread (at each connection, for each message of the owned filter) or, for
`replace`, on the caller's; it only calls the client (thread-safe) and never takes the publisher's lock: paho's
thread may hold paho's own locks while it calls in here, and the publisher's lock is held around paho's calls."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

CLEAR = b""  # a retained message with an empty payload removes the retained message of its topic


class Retained:
    """A set of retained messages (topic → payload), published (QoS 1, retained) at every connection, so that a
    broker that lost its store (restarted without persistence) gets them back; and `owned`, a topic filter only this
    publisher writes under: whatever retained message the broker hands over there that is not in the set (left by an
    earlier run whose config had more) is cleared, at every connection. The broker's store is the state; nothing is
    remembered on disk, so a restart, a lost volume or a config moved to another box leave nothing behind."""

    def __init__(self, topic_matches: Callable[[str, str], bool]):
        self._matches = topic_matches  # paho's topic_matches_sub(filter, topic)
        self.messages: dict[str, bytes | str] = {}
        self.owned: str | None = None

    def replace(self, messages: Mapping[str, bytes | str], owned: str | None, client: Any,
                connected: Callable[[], bool]) -> None:
        """Keep `messages` from now on instead of the set before (whose topics that are not in `messages` are
        cleared), and own `owned`; published at once if `connected()` (asked after the swap: a connection made
        meanwhile publishes the new set itself)."""
        before, before_owned = self.messages, self.owned
        self.messages, self.owned = dict(messages), owned
        if not connected():
            return  # the next connection publishes the set, and clears what is left under `owned`
        if before_owned is not None and before_owned != owned:
            client.unsubscribe(before_owned)
        for topic in before.keys() - self.messages.keys():
            client.publish(topic, CLEAR, qos=1, retain=True)
        self.connected(client)

    def connected(self, client: Any) -> None:
        """A connection was made (paho's thread): the set again, then the owned filter subscribed, whose retained
        messages then come to `on_message` (the session is clean: each connection subscribes anew)."""
        messages, owned = self.messages, self.owned
        for topic, payload in messages.items():
            client.publish(topic, payload, qos=1, retain=True)
        if owned is not None:
            client.subscribe(owned, qos=1)

    def on_message(self, client: Any, userdata: Any, message: Any) -> None:
        """A message under the owned filter (paho's thread): cleared unless it is one of the set (our own come back
        too) or already empty (a clearing)."""
        owned = self.owned
        if (message.payload and owned is not None and self._matches(owned, message.topic)
                and message.topic not in self.messages):
            client.publish(message.topic, CLEAR, qos=1, retain=True)
