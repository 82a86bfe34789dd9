"""Home Assistant's MQTT discovery for `zerocopy serve` (`[homeassistant]`; docs/homeassistant.md).

One HA device per camera (and one for the box, `via_device` of the cameras'); per camera and label an occupancy
`binary_sensor` and a count `sensor` read from the retained count `PREFIX/CAMERA/LABEL`, and an `image` of the
label's latest snapshot (`PREFIX/CAMERA/LABEL/snapshot`); per zone and label the same pair from
`PREFIX/CAMERA/ZONE/LABEL`. Every entity is available while `PREFIX/available/NODE` says `online`.

The configs are JSON written through the service's own publisher (`MqttPublisher.retain`): retained, sent again at
every connection, and, under this box's discovery level (`HA_PREFIX/+/zerocopy-NODE/+/config`), whatever config the
broker still holds that the current config does not make is cleared: a camera removed from the config loses its
entities at the next start. docs/homeassistant.md says why not `ha-mqtt-discoverable`."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from zerocopy import __version__
from zerocopy.catalog import CATALOG
from zerocopy.config import RunConfig
from zerocopy.postprocess import UNNAMED
from zerocopy.publish.topics import count_topic, snapshot_topic, topic_label

if TYPE_CHECKING:
    from zerocopy.publish.mqtt import MqttPublisher

DEFAULT_PREFIX = "homeassistant"  # Home Assistant's own default discovery prefix
FEW_LABELS = 5  # a model with at most this many labels gets entities for each; past it, only `person` and the named
OCCUPIED = "{{ 'ON' if value | int(0) > 0 else 'OFF' }}"  # a count (its text) → the binary sensor's payload
ORIGIN = {"name": "zerocopy", "sw_version": __version__}
_NOT_SLUG = re.compile(r"[^a-z0-9_-]+")


class Camera(Protocol):
    """What is read of a camera: serve's `CameraConfig` (serve's config imports this module: no import back)."""

    name: str
    run: RunConfig  # its run settings, checked once (`serve.camera_config.CameraConfig.run`)
    enabled: bool
    publish: bool


@dataclass(frozen=True)
class HomeAssistantConfig:
    """serve's `[homeassistant]`: `enabled` false clears this box's entities; `prefix` is HA's discovery prefix."""

    enabled: bool = True
    prefix: str = DEFAULT_PREFIX


def owned_filter(discovery: str, node: str) -> str:
    """This box's discovery topics: their `node_id` level is the box's device id."""
    return f"{discovery}/+/{unique_id(node)}/+/config"


def unique_id(*parts: str) -> str:
    """`zerocopy-PART-PART…`, one-to-one: inside a part `_` is written `__` and `-` `_-`, so no two tuples of names
    (a camera `a-b` and a camera `a` with a zone `b`) give one id. Names need no more: they are letters, digits, - and
    _ (labels are made so by `label_slug`); the id is also the discovery topic's `object_id`."""
    return "-".join(["zerocopy", *(p.replace("_", "__").replace("-", "_-") for p in parts)])


def label_slug(label: str) -> str:
    """`label` in ids: its topic level (`topics.topic_label`) with only letters, digits, `_` and `-`."""
    return _NOT_SLUG.sub("_", topic_label(label)).strip("_") or "label"


def entity_labels(config: RunConfig) -> list[str]:
    """The labels (lower case, as in the count topics) a camera (its run settings) gets entities for: its `classes`
    if set; else every label of a model that has at most `FEW_LABELS`; else `person` (if the model has it) and the
    labels its zones and lines name. 80 COCO labels would make 160+ entities per camera, nearly all for what never
    passes by."""
    if config.classes:
        return _unique(config.classes)
    known = model_labels(config)
    if known is not None and len(known) <= FEW_LABELS:
        return _unique(known)
    named = [label for spec in [*config.zones, *config.lines] for label in spec.labels]
    return _unique([label for label in known or () if label.lower() == "person"] + named)


def model_labels(config: RunConfig) -> tuple[str, ...] | None:
    """The model's labels: its `labels` file, else the catalogue's; None when unknown (a model file of one's own)."""
    if config.labels:
        try:
            lines = Path(config.labels).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            return None
        return tuple(n for n in (line.strip() for line in lines) if n and n != UNNAMED)
    entry = CATALOG.get(config.model)
    return tuple(n for n in entry.labels if n != UNNAMED) if entry is not None and entry.labels else None


def _unique(labels: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(label.lower() for label in labels))


def zone_labels(config: RunConfig, labels: Sequence[str]) -> dict[str, list[str]]:
    """Zone → the labels it gets entities for: its own `labels` that the camera (its run settings) reports (all of
    the camera's when it names none)."""
    reported = {c.lower() for c in config.classes} if config.classes else None
    out = {}
    for zone in config.zones:
        own = _unique(zone.labels)
        out[zone.name] = [x for x in own if reported is None or x in reported] if own else list(labels)
    return out


class Discovery:
    """The discovery configs of one box (`configs`: topic → config): its device, and each camera's added; `counts`:
    the count topics they read (under the prefix, without it)."""

    def __init__(self, node: str, prefix: str, ha_prefix: str):
        self.node, self.prefix, self.ha_prefix = node, prefix, ha_prefix
        self.availability = f"{prefix}/available/{node}"
        self.box = {"identifiers": [unique_id(node)], "name": f"zerocopy {node}", "manufacturer": "zerocopy",
                    "model": "zerocopy serve", "sw_version": __version__}
        self.configs: dict[str, dict[str, Any]] = {}
        self.counts: list[str] = []
        self._add("binary_sensor", (node, "connected"), "Connected", f"zerocopy_{node}_connected", self.box,
                  available=False, state_topic=self.availability, payload_on="online", payload_off="offline",
                  device_class="connectivity", entity_category="diagnostic")

    def _add(self, component: str, parts: tuple[str, ...], name: str, entity: str, device: dict, available: bool = True,
             **fields: Any) -> None:
        uid = unique_id(*parts)
        config = {"name": name, "unique_id": uid, "default_entity_id": f"{component}.{_entity_slug(entity)}",
                  **fields, "device": device, "origin": ORIGIN}
        if available:
            config |= {"availability_topic": self.availability, "payload_available": "online",
                       "payload_not_available": "offline"}
        self.configs[f"{self.ha_prefix}/{component}/{unique_id(self.node)}/{uid}/config"] = config

    def camera(self, camera: Camera) -> None:
        labels = entity_labels(camera.run)
        device = {"identifiers": [unique_id(self.node, camera.name)], "name": camera.name, "manufacturer": "zerocopy",
                  "model": Path(camera.run.model).name,
                  "sw_version": __version__, "via_device": unique_id(self.node)}
        for label in labels:
            self._pair(camera.name, None, label, device)
            self._add("image", (self.node, camera.name, label_slug(label), "snapshot"),
                      f"{label.capitalize()} snapshot", f"{camera.name}_{label}_snapshot", device,
                      image_topic=f"{self.prefix}/{snapshot_topic(camera.name, label)}", content_type="image/jpeg")
        for zone, own in zone_labels(camera.run, labels).items():
            for label in own:
                self._pair(camera.name, zone, label, device)

    def _pair(self, camera: str, zone: str | None, label: str, device: dict) -> None:
        """The occupancy binary sensor and the count sensor of one count topic."""
        where = [camera, *([zone] if zone else [])]
        self.counts.append(count_topic(camera, zone, label))
        topic = f"{self.prefix}/{self.counts[-1]}"
        what = f"{zone} {label}" if zone else label
        parts = (self.node, *where, label_slug(label))
        self._add("binary_sensor", (*parts, "occupancy"), f"{what.capitalize()} occupancy",
                  "_".join([*where, label, "occupancy"]), device, state_topic=topic, value_template=OCCUPIED,
                  payload_on="ON", payload_off="OFF", device_class="occupancy")
        self._add("sensor", (*parts, "count"), f"{what.capitalize()} count", "_".join([*where, label, "count"]), device,
                  state_topic=topic, state_class="measurement")


def _entity_slug(text: str) -> str:
    return _NOT_SLUG.sub("_", text.lower()).replace("-", "_").strip("_")


def discover(cameras: Sequence[Camera], node: str, prefix: str, ha_prefix: str = DEFAULT_PREFIX) -> Discovery:
    """The configs of the cameras that run and publish (`prefix`: the broker URL's topic prefix; `ha_prefix`: Home
    Assistant's discovery prefix)."""
    found = Discovery(node, prefix, ha_prefix)
    for camera in cameras:
        if camera.enabled and camera.publish:
            found.camera(camera)
    return found


def announce(publisher: MqttPublisher, cameras: Sequence[Camera], ha: HomeAssistantConfig) -> str:
    """Keep the configs retained on the publisher's broker from now on (this box's others cleared) and set each
    count they read to 0 (nothing is in view yet: a count left by a run that was killed would stay stuck until that
    label's count next changed). Before the cameras start, so that their counts come after. A line to say."""
    node, prefix = publisher.node, publisher.target.prefix
    found = discover(cameras, node, prefix, ha.prefix)
    configs = found.configs if ha.enabled else {}
    for topic in found.counts if ha.enabled else ():
        publisher.send(topic, 0, retain=True)
    publisher.retain({t: json.dumps(c, separators=(",", ":")) for t, c in configs.items()},
                     owned=owned_filter(ha.prefix, node))
    if not ha.enabled:
        return f"Home Assistant: clearing node {node}'s entities under {ha.prefix}/ ([homeassistant] enabled = false)"
    bare = [c.name for c in cameras if c.enabled and c.publish and not entity_labels(c.run)]
    return (f"Home Assistant: {len(configs)} entities under {ha.prefix}/ as device(s) of node {node}" +
            (f"; no label chosen for camera(s) {', '.join(bare)}: set their classes" if bare else ""))
