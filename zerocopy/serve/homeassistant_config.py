"""`zerocopy serve`'s `[homeassistant]` table: Home Assistant's MQTT discovery (docs/homeassistant.md), checked like
the rest of the config (every problem one line)."""

from __future__ import annotations

from collections.abc import Callable

from zerocopy.publish.homeassistant import DEFAULT_PREFIX, HomeAssistantConfig
from zerocopy.publish.target import topic_level_problem
from zerocopy.serve.checks import bool_value, unknown_keys

HA_KEYS = ("enabled", "prefix")


def check_homeassistant(table: dict | None, broker: bool, problem: Callable[[str, str], None]) \
        -> HomeAssistantConfig | None:
    """`[homeassistant]` checked (None: there is none); `broker`: whether there is a `[publish]` table."""
    if table is None:
        return None
    where = "homeassistant"
    unknown_keys(where, sorted(set(table) - set(HA_KEYS)), list(HA_KEYS), problem,
                 f"[homeassistant] takes {', '.join(HA_KEYS)}", frigate="homeassistant")
    enabled = bool_value(table, "enabled", where, True, problem)
    prefix = table.get("prefix", DEFAULT_PREFIX)
    if not isinstance(prefix, str):
        problem(where, f"prefix must be Home Assistant's discovery prefix (a topic, e.g. \"{DEFAULT_PREFIX}\"), not a "
                f"{type(prefix).__name__}")
        prefix = DEFAULT_PREFIX
    elif why := next((w for w in map(topic_level_problem, prefix.strip("/").split("/")) if w), None):
        problem(where, f"prefix {prefix!r} has {why}")
    if not broker:
        problem(where, "needs a [publish] table: the discovery configs go to its broker")
    return HomeAssistantConfig(enabled=enabled, prefix=prefix.strip("/"))
