"""`--publish mqtt://…`: object events (and, if asked, each inferred frame's detections) to an MQTT broker.

The publisher never blocks the run (publish/mqtt.py: a bounded queue, reconnection in the background);
what it could not deliver is counted in `stats()`, which the report and `/metrics` show."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame
from zerocopy.sinks import NullSink
from zerocopy.stages.records import Record
from zerocopy.track import ObjectEvent


class MqttSink(NullSink):
    """Events to `PREFIX/CAMERA/events` in a Frigate-like envelope (`ObjectEvent.to_mqtt`), line crossings there
    and on `PREFIX/CAMERA/lines/LINE`, counts retained on `PREFIX/CAMERA/LABEL` and `PREFIX/CAMERA/ZONE/LABEL`,
    snapshots on `PREFIX/CAMERA/LABEL/snapshot`, motion on `PREFIX/CAMERA/motion` (the table in `stages.records`);
    with `detections`, per-frame detections to `PREFIX/CAMERA/detections`. `cameras` names each input."""

    def __init__(self, publisher: Any, names: Sequence[str], cameras: Sequence[str], detections: bool = False,
                 clips: Sequence[bool] = ()):
        self.publisher, self.names, self.cameras = publisher, list(names), list(cameras)
        self.with_detections = detections
        self.clips = list(clips)  # per input: it records, so each object will have a clip (`has_clip`, serve)
        self._last: dict[str, Any] = {}  # event id → its previous event (the envelope's `before`)

    def _camera(self, input: int) -> str:
        return self.cameras[input] if input < len(self.cameras) else f"input-{input}"

    def write(self, frame: PreparedFrame, detections: Detections, input: int = 0) -> None:
        if not self.with_detections or not frame.inferred:
            return
        camera = self._camera(input)
        self.publisher.detections(camera, {
            "node": self.publisher.node, "camera": camera, "frame": frame.index,
            "pts": None if frame.pts is None else round(frame.pts, 6), "frame_time": round(time.time(), 3),
            "detections": detections.to_records(self.names or None)})

    def on_events(self, events: Sequence[Any], input: int = 0) -> None:
        """Each record as its protocol says (`stages.records`): an event on its camera's events topic, and on its
        own topic if it has one (retained if it is a state); a tracked object's with its previous event."""
        for event in events:
            if isinstance(event, ObjectEvent):
                self._object(event, input)
                continue
            if not isinstance(event, Record):
                raise TypeError(f"MqttSink: a {type(event).__name__} is not a record (stages.records)")
            payload = event.to_mqtt()
            if event.logged:
                self.publisher.event(event.camera, payload)
            if event.topic is not None:
                self.publisher.send(event.topic, payload, retain=event.retained)

    def _object(self, event: ObjectEvent, input: int) -> None:
        """A tracked object's event on the events topic, with Frigate's `before` (its previous event)."""
        if input < len(self.clips) and self.clips[input]:
            event = dataclasses.replace(event, has_clip=True)
        before = self._last.get(event.id)
        self.publisher.event(event.camera, event.to_mqtt(before))
        if event.type == "end":
            self._last.pop(event.id, None)
        else:
            self._last[event.id] = event

    # close(): nothing; the publisher outlives the sink: its owner closes it (and reads its stats first)
