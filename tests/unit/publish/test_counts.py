"""The publisher's counts: each message in exactly one of published, queued and dropped, whatever order
paho settles them in. Real paho message records stand in the queue; no broker is needed (the publisher
connects in the background to a loopback port nobody listens on)."""

import socket

import pytest

pytest.importorskip("paho.mqtt")

from paho.mqtt.client import MQTT_ERR_CONN_LOST, MQTTMessageInfo  # noqa: E402

from zerocopy.errors import ConfigError  # noqa: E402
from zerocopy.publish import MqttPublisher, MqttTarget  # noqa: E402


@pytest.fixture
def publisher():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    pub = MqttPublisher(MqttTarget.parse(f"mqtt://127.0.0.1:{port}/t"), "node1")
    yield pub
    pub.close(0)


def test_a_lost_message_behind_one_still_waiting_counts_as_dropped(publisher):
    waiting, lost, sent = MQTTMessageInfo(1), MQTTMessageInfo(2), MQTTMessageInfo(3)
    lost.rc = MQTT_ERR_CONN_LOST  # what paho's reconnect() marks the unwritten QoS 0 messages
    sent._set_as_published()
    with publisher._lock:
        publisher._ledger.pending["detections"].extend([waiting, lost, sent])
    counts = publisher.stats()["detections"]
    assert counts == {"published": 1, "queued": 1, "dropped": 1}
    publisher.close(0)  # the waiting one is not delivered in time: dropped, once
    assert publisher.stats()["detections"] == {"published": 1, "queued": 0, "dropped": 2}


def test_messages_settled_at_the_head_are_counted_once(publisher):
    first, second = MQTTMessageInfo(1), MQTTMessageInfo(2)
    with publisher._lock:
        publisher._ledger.pending["events"].extend([first, second])
    second._set_as_published()  # acknowledged out of order: counted, but stays queued behind the first
    assert publisher.stats()["events"] == {"published": 1, "queued": 1, "dropped": 0}
    first._set_as_published()
    assert publisher.stats()["events"] == {"published": 2, "queued": 0, "dropped": 0}
    assert publisher.stats()["events"] == {"published": 2, "queued": 0, "dropped": 0}


@pytest.mark.parametrize("node", ["", "a/b", "door+", "#", "box.local", "wohnzimmer ost"])
def test_a_node_that_is_not_a_name_is_refused(node):
    with pytest.raises(ConfigError, match="node must be a name of letters, digits, - and _"):
        MqttPublisher(MqttTarget.parse("mqtt://127.0.0.1:1/t"), node)
