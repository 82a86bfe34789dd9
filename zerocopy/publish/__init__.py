"""`--publish mqtt://…`: object events (and, if asked, per-frame detections) to an MQTT broker.

`MqttTarget` (target.py) reads the URL; `MqttPublisher` (mqtt.py) delivers in the background. paho-mqtt,
an optional dependency (`zerocopy[serve]`), is imported only when a publisher is made."""

from zerocopy.publish.mqtt import MqttPublisher
from zerocopy.publish.target import PASSWORD_ENV, MqttTarget

__all__ = ["PASSWORD_ENV", "MqttPublisher", "MqttTarget"]
