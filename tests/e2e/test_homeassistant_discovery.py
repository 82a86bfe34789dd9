"""Home Assistant discovery through a real mosquitto (tests/support/broker.py): every config retained and checked
against Home Assistant's documented required fields (tests/support/hadiscovery.py), the entities following the box's
availability, counts set to 0 at start, the configs back after the broker lost its store, and those of a camera
removed from the config cleared at the next start (in-process, and through `zerocopy serve` itself) without touching
another box's."""

from __future__ import annotations

from pathlib import Path

import pytest
from broker import MOSQUITTO, Broker, Subscriber
from conftest import wait_until
from hadiscovery import problems

from zerocopy.publish import MqttPublisher, MqttTarget
from zerocopy.publish.homeassistant import announce, discover
from zerocopy.serve.config import ServeConfig, load_config

pytestmark = [pytest.mark.timeout(180),
              pytest.mark.skipif(MOSQUITTO is None, reason="mosquitto is not installed (install-system-deps.sh)")]

PREFIX = "zc"


def write_config(tmp_path: Path, broker: Broker, cameras: dict[str, str], node: str = "box1",
                 homeassistant: str = "") -> Path:
    """A serve config whose cameras (name → extra TOML lines) point at a port nobody listens on."""
    text = f'node = "{node}"\n[publish]\nurl = "{broker.url(PREFIX)}"\n[http]\nlisten = "127.0.0.1:0"\n' \
           f'[homeassistant]\n{homeassistant}\n[defaults]\nmodel = "face"\n'
    for name, extra in cameras.items():
        text += f'[cameras.{name}]\nurl = "rtsp://127.0.0.1:9/{name}"\n{extra}\n'
    path = tmp_path / f"{node}.toml"
    path.write_text(text)
    return path


def retained(broker: Broker, topic: str = "homeassistant/#") -> dict[str, tuple[object, bool]]:
    """What the broker holds under `topic` now: topic → (payload, retained flag), read by a new subscriber. The
    broker hands a new subscription its retained messages at once; a message published after subscribing comes after
    them, so once it is back every retained one is in."""
    marker = topic.replace("#", "zz-test/marker")  # (a filter ending in #)
    with Subscriber(broker, topic) as sub:
        sub.client.publish(marker, "end", qos=1)
        wait_until(lambda: sub.on(marker), 30, "the marker behind the retained messages")
        with sub._lock:
            return {t: (p, r) for t, p, r in sub.messages if t != marker}


def start(broker: Broker, config: ServeConfig) -> MqttPublisher:
    """What `zerocopy serve` does at start: its publisher, then the discovery announced."""
    publisher = MqttPublisher(MqttTarget.parse(config.publish.url), config.node)
    announce(publisher, config.cameras, config.homeassistant)
    return publisher


def wait_for(broker: Broker, topics: set[str], what: str) -> dict[str, tuple[object, bool]]:
    held: dict = {}

    def there() -> bool:
        held.update(retained(broker))
        return topics <= set(held)
    wait_until(there, 30, what)
    return retained(broker)


def test_every_config_is_retained_valid_and_follows_the_box_availability(tmp_path):
    with Broker() as broker:
        config = load_config(write_config(tmp_path, broker, {
            "front": 'model = "objects"\n[cameras.front.zones.drive]\npoints = [[0, 0], [1, 0], [1, 1]]\n'
                     'labels = ["car"]', "door": ""}))
        expected = discover(config.cameras, "box1", PREFIX).configs
        publisher = start(broker, config)
        try:
            held = wait_for(broker, set(expected), "every config retained")
            counts = retained(broker, f"{PREFIX}/#")
        finally:
            publisher.close()
        after = retained(broker, f"{PREFIX}/available/#")
    assert set(held) == set(expected) and len(held) == 1 + 2 * 3 + 2 + 3  # the box; person, car; drive car; face
    assert all(flag for _, flag in held.values())
    assert {t: p for t, (p, _) in held.items()} == expected
    assert [p for t, (c, _) in held.items() for p in problems(t, c, f"{PREFIX}/available/box1")] == []
    # what every entity reads: the counts (0 until something is in view) and the box's availability
    assert {t: v for t, v in counts.items() if t != f"{PREFIX}/available/box1"} == {
        f"{PREFIX}/{t}": (0, True) for t in ("front/person", "front/car", "front/drive/car", "door/face")}
    assert counts[f"{PREFIX}/available/box1"] == ("online", True)
    assert after == {f"{PREFIX}/available/box1": ("offline", True)}  # closed: every entity unavailable


def test_a_camera_removed_from_the_config_loses_its_entities_at_the_next_start(tmp_path):
    with Broker() as broker:
        two = load_config(write_config(tmp_path, broker, {"front": "", "door": ""}))
        other = load_config(write_config(tmp_path, broker, {"front": ""}, node="box2"))
        first = discover(two.cameras, "box1", PREFIX).configs
        theirs = discover(other.cameras, "box2", PREFIX).configs
        for config, configs in ((two, first), (other, theirs)):  # two earlier runs, one per box
            publisher = start(broker, config)
            wait_for(broker, set(configs), f"{config.node}'s configs")
            publisher.close()
        one = load_config(write_config(tmp_path, broker, {"front": ""}))
        kept = discover(one.cameras, "box1", PREFIX).configs
        gone = set(first) - set(kept)
        assert gone and all("-door-" in t for t in gone)
        with Subscriber(broker, "homeassistant/#") as sub:
            publisher = start(broker, one)
            try:
                wait_until(lambda: all("" in sub.on(t) for t in gone), 30, "the removed camera's configs cleared")
            finally:
                publisher.close()
        held = retained(broker)
    assert set(held) == set(kept) | set(theirs)  # box2's own camera `front` untouched


def test_enabled_false_clears_the_box_entities(tmp_path):
    with Broker() as broker:
        config = load_config(write_config(tmp_path, broker, {"front": ""}))
        publisher = start(broker, config)
        wait_for(broker, set(discover(config.cameras, "box1", PREFIX).configs), "the configs")
        publisher.close()
        off = load_config(write_config(tmp_path, broker, {"front": ""}, homeassistant="enabled = false"))
        publisher = start(broker, off)
        try:
            wait_until(lambda: not retained(broker), 30, "every config cleared")
        finally:
            publisher.close()


def test_the_configs_come_back_after_the_broker_lost_its_store(tmp_path):
    with Broker() as broker:
        config = load_config(write_config(tmp_path, broker, {"front": ""}))
        expected = set(discover(config.cameras, "box1", PREFIX).configs)
        publisher = start(broker, config)
        try:
            wait_for(broker, expected, "the configs")
            broker.stop()  # no persistence: the retained configs are gone with it
            broker.start()
            held = wait_for(broker, expected, "the configs published again at the reconnection")
        finally:
            publisher.close()
    assert set(held) == expected


def test_serve_announces_at_start_and_clears_a_removed_camera_on_the_next(tmp_path, face_model_path):
    """`zerocopy serve` itself, twice (its cameras cannot be opened: discovery needs none of them)."""
    from test_serve import Serve, unstamped

    with Broker() as broker:
        two = write_config(tmp_path, broker, {"front": "", "door": ""})
        first = discover(load_config(two).cameras, "box1", PREFIX).configs
        serve = Serve(tmp_path, two.read_text())
        try:
            serve.started()
            wait_for(broker, set(first), "serve's configs")
            assert serve.terminate() < 10
        finally:
            serve.kill()
        assert f"zerocopy: Home Assistant: {len(first)} entities under homeassistant/ as device(s) of node box1" in \
            unstamped(serve.err), serve.err
        one = write_config(tmp_path, broker, {"front": ""})
        kept = set(discover(load_config(one).cameras, "box1", PREFIX).configs)
        serve = Serve(tmp_path, one.read_text())
        try:
            serve.started()
            wait_until(lambda: set(retained(broker)) == kept, 30, "only the kept camera's configs left")
        finally:
            serve.kill()
