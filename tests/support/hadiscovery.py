"""What Home Assistant requires of an MQTT discovery config, as data, and a check of one config against it (and
against what zerocopy's configs promise besides: docs/homeassistant.md).

Where the table comes from: Home Assistant's documentation, home-assistant.io's source/_integrations/
binary_sensor.mqtt.markdown, sensor.mqtt.markdown and image.mqtt.markdown (each option's `required:`), and
mqtt.markdown's "MQTT Discovery" section (the topic's form, `origin`, `device`). `platform` is marked required there
too, but "only allowed and required in device discovery messages" (PREFIX/device/…/config), which zerocopy does not
send: it sends one config per entity (PREFIX/COMPONENT/NODE_ID/OBJECT_ID/config)."""

from __future__ import annotations

import re

# component → the options documented `required: true` (single-entity discovery)
REQUIRED = {
    "binary_sensor": {"state_topic"},
    "sensor": {"state_topic"},
    "image": set(),
}
# component → options documented `required: exclusive`: exactly one of them
EXCLUSIVE = {"image": {"image_topic", "url_topic"}}
# component → every option the documentation lists (HA ignores an unknown key in a discovery config: a misspelt
# option would be lost without a word, so the test refuses any other)
COMMON = {"availability", "availability_mode", "availability_template", "availability_topic", "device",
          "default_entity_id", "enabled_by_default", "encoding", "entity_category", "entity_picture", "icon",
          "json_attributes_template", "json_attributes_topic", "name", "object_id", "origin", "payload_available",
          "payload_not_available", "qos", "unique_id"}
KNOWN = {
    "binary_sensor": COMMON | {"device_class", "expire_after", "force_update", "off_delay", "payload_off", "payload_on",
                               "state_topic", "value_template"},
    "sensor": COMMON | {"device_class", "expire_after", "force_update", "last_reset_value_template", "options",
                        "suggested_display_precision", "state_class", "state_topic", "unit_of_measurement",
                        "value_template"},
    "image": COMMON | {"content_type", "image_encoding", "image_topic", "url_template", "url_topic"},
}
DEVICE_KEYS = {"configuration_url", "connections", "hw_version", "identifiers", "manufacturer", "model", "model_id",
               "name", "serial_number", "suggested_area", "sw_version", "via_device"}
# the discovery topic: <discovery_prefix>/<component>/[<node_id>/]<object_id>/config, ids of [a-zA-Z0-9_-]
TOPIC = re.compile(r"(?P<prefix>.+)/(?P<component>[a-z_]+)/(?P<node_id>[a-zA-Z0-9_-]+)/(?P<object_id>[a-zA-Z0-9_-]+)"
                   r"/config")


def problems(topic: str, config: dict, availability: str) -> list[str]:
    """What is wrong with `config` published on `topic` (empty: nothing). `availability`: the box's
    `PREFIX/available/NODE`, which every entity but the box's own connectivity sensor must follow."""
    m = TOPIC.fullmatch(topic)
    if m is None:
        return [f"{topic}: not a discovery topic"]
    component = m["component"]
    if component not in REQUIRED:
        return [f"{topic}: unexpected component {component}"]
    where = f"{topic}: "
    out = [where + f"required {k} missing" for k in sorted(REQUIRED[component] - set(config))]
    if component in EXCLUSIVE and len(EXCLUSIVE[component] & set(config)) != 1:
        out.append(where + f"exactly one of {sorted(EXCLUSIVE[component])} required")
    out += [where + f"unknown option {k}" for k in sorted(set(config) - KNOWN[component])]
    device = config.get("device", {})
    out += [where + f"unknown device key {k}" for k in sorted(set(device) - DEVICE_KEYS)]
    if not device.get("identifiers") or not device.get("name"):
        out.append(where + "a device needs identifiers (or connections) and a name")
    if config.get("unique_id") != m["object_id"] or not config.get("name"):
        out.append(where + "unique_id must be the topic's object_id, and a name is needed")
    if not str(config.get("default_entity_id", "")).startswith(component + "."):
        out.append(where + "default_entity_id must be COMPONENT.OBJECT")
    if not config.get("origin", {}).get("name"):
        out.append(where + "origin needs its name")
    if config.get("state_topic") == availability:  # the box's own connectivity: it is the availability
        return out
    if (config.get("availability_topic"), config.get("payload_available"),
            config.get("payload_not_available")) != (availability, "online", "offline"):
        out.append(where + f"availability must be {availability} online/offline")
    if component == "binary_sensor" and (config.get("device_class"), config.get("payload_on"),
                                         config.get("payload_off")) != ("occupancy", "ON", "OFF"):
        out.append(where + "an occupancy sensor has device_class occupancy and payloads ON/OFF")
    if component == "sensor" and config.get("state_class") != "measurement":
        out.append(where + "a count has state_class measurement")
    if component == "image" and config.get("content_type") != "image/jpeg":
        out.append(where + "a snapshot is image/jpeg")
    return out
