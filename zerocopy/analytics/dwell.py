"""`--dwell`: how long each tracked object stayed in each zone — seconds of the input's media time from the event
that put the zone in its `current_zones` to the one that took it out (or its `end`), summed over its visits. Said
three ways when the object ends: in its `end` event (`dwell`: zone → seconds, `{}` if it entered none), a histogram per
zone and label (`zerocopy_zone_dwell_seconds` on serve's `/metrics`), and retained beside the zone's count on MQTT
(`CAMERA/ZONE/LABEL/dwell`: the seconds of the last object of that label to leave).

Frigate's `loitering_time` says once that an object stayed long; this says how long each one did. It reads only the
tracked objects' events after the zones have added theirs (`stages.assemble.declared_stages`), so it costs nothing
per box. A frame's media time is the clock: a file gives the same seconds however fast it is read."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from zerocopy.config import RunConfig
from zerocopy.publish.topics import count_topic
from zerocopy.stages.base import InputInfo, StageBase
from zerocopy.stages.figures import Family, Figures
from zerocopy.stages.records import RecordBase
from zerocopy.track import ObjectEvent

DWELL = Family(kind="histogram", name="zerocopy_zone_dwell_seconds", help="seconds each tracked object stayed in a "
               "zone (summed over its visits), counted when it ends", labels=("zone", "label"),
               buckets=(1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0))
log = logging.getLogger("zerocopy")


@dataclass(frozen=True, kw_only=True)
class Dwelled(RecordBase):
    """Object `id` of `label` stayed `seconds` in `zone` of `camera` in all (a record, `stages.records`)."""

    type: ClassVar[str] = "dwell"
    retained: ClassVar[bool] = True

    id: str
    camera: str
    zone: str
    label: str
    seconds: float
    frame_time: float

    @property
    def topic(self) -> str:
        return f"{count_topic(self.camera, self.zone, self.label)}/dwell"

    def to_record(self) -> dict:
        return {"type": self.type, "id": self.id, "camera": self.camera, "zone": self.zone, "label": self.label,
                "seconds": round(self.seconds, 2), "frame_time": round(self.frame_time, 3)}

    def to_mqtt(self, before: object = None) -> float:
        return round(self.seconds, 1)

    def measure(self, figures: Figures) -> None:
        figures.observe(DWELL, (self.zone, self.label), self.seconds)


@dataclass(kw_only=True)
class _Stay:
    since: dict[str, float] = field(default_factory=dict)  # zone → media time it entered (while it is in)
    total: dict[str, float] = field(default_factory=dict)  # zone → seconds of its visits that ended

    def move(self, zones: Sequence[str], t: float) -> None:
        """Its zones now, at media time `t`: the visits that ended are added up, the new ones begin."""
        for zone in [z for z in self.since if z not in zones]:
            self.total[zone] = self.total.get(zone, 0.0) + max(0.0, t - self.since.pop(zone))
        for zone in zones:
            self.since.setdefault(zone, t)


class Dwell(StageBase):
    """Per input, each open object's visits to its zones (by event id), from the events the stages before made; an
    input with no zone (neither the run's nor its own) is said once, as it measures nothing."""

    name = "dwell"

    def __init__(self, config: RunConfig, names: Sequence[str] | None = None):
        self._stays: dict[int, dict[str, _Stay]] = {}
        self._zoned = bool(config.zones)  # the run has zones (an input may have its own instead)

    def begin(self, input: InputInfo) -> None:
        self._stays[input.index] = {}
        if not self._zoned and not input.settings.zones:
            log.warning("%s: dwell measures how long objects stay in zones, and this input has none: give it zones "
                        "(--zone, or the camera's zones)", input.camera)

    def amend(self, events: list, input: int) -> list:
        stays = self._stays.get(input)
        if stays is None:
            return events
        out: list = []
        for e in events:
            if isinstance(e, ObjectEvent):
                stay = stays.setdefault(e.id, _Stay())
                stay.move(e.current_zones if e.type != "end" else (), e.last_pts)
                if e.type == "end":
                    del stays[e.id]
                    e = dataclasses.replace(e, extra={**e.extra, "dwell": {z: round(s, 2) for z, s in
                                                                           stay.total.items()}})
                    out += [e] + [Dwelled(id=e.id, camera=e.camera, zone=zone, label=e.label, seconds=seconds,
                                          frame_time=e.frame_time) for zone, seconds in stay.total.items()]
                    continue
            out.append(e)
        return out

    def end(self, input: int) -> list:
        self._stays.pop(input, None)  # (its objects' `end`s came through `amend` already)
        return []
