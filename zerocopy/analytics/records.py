"""The records zones, lines and counts add to a run's events, beside the tracked objects' `ObjectEvent`s:

- `LineCrossing`: an object crossed a line (`type` "cross"): an event, written to `--events` and published;
- `Occupancy`: how many objects of a label are in view, or in a zone, changed (`type` "count"): a state, not an
  event (`retained`): published retained on its own topic (Frigate's `CAMERA/LABEL` and `CAMERA/ZONE/LABEL`), not
  written to `--events`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from zerocopy.publish.topics import count_topic
from zerocopy.stages.figures import Family, Figures
from zerocopy.stages.records import RecordBase

IN_VIEW = Family(kind="gauge", name="zerocopy_objects", help="tracked objects in view now", labels=("label",))
IN_ZONE = Family(kind="gauge", name="zerocopy_zone_objects", help="objects in a zone now", labels=("zone", "label"))
CROSSINGS = Family(kind="counter", name="zerocopy_line_crossings", help="objects that crossed a line since the start",
                   labels=("line", "direction", "label"))


@dataclass(frozen=True, kw_only=True)
class LineCrossing(RecordBase):
    """Tracked object `id` (its events' id; `tracker_id` in its input) crossed `line`: `direction` "in" from the
    line's right-hand side to its left (looking from its first point to its second), "out" the other way."""

    type: ClassVar[str] = "cross"
    logged: ClassVar[bool] = True

    id: str
    tracker_id: int
    node: str
    camera: str
    source: str
    line: str
    direction: str
    label: str
    frame_time: float  # Unix time of the frame where it was first seen across
    pts: float  # the same frame's media time
    box: tuple[float, float, float, float]

    def to_record(self) -> dict:
        return {"type": self.type, "id": self.id, "tracker_id": self.tracker_id, "node": self.node,
                "camera": self.camera, "source": self.source, "line": self.line, "direction": self.direction,
                "label": self.label, "frame_time": round(self.frame_time, 3), "pts": round(self.pts, 3),
                "box": [round(v, 1) for v in self.box]}

    def to_mqtt(self, before: object = None) -> dict:
        return {**self.to_record(), "label": self.label.lower()}

    @property
    def topic(self) -> str:
        """Where it is also published, under the run's prefix: `CAMERA/lines/LINE`."""
        return f"{self.camera}/lines/{self.line}"

    def measure(self, figures: Figures) -> None:
        figures.add(CROSSINGS, (self.line, self.direction, self.label))


@dataclass(frozen=True, kw_only=True)
class Occupancy(RecordBase):
    """`count` objects of `label` are now in view of `camera` (`zone` None) or in `zone`."""

    type: ClassVar[str] = "count"
    retained: ClassVar[bool] = True

    camera: str
    zone: str | None
    label: str
    count: int
    frame_time: float
    before: int = 0  # the count it replaces

    @property
    def id(self) -> str:
        return self.topic

    @property
    def topic(self) -> str:
        """Its retained topic under the run's prefix (its label made one topic level: `publish.topics`)."""
        return count_topic(self.camera, self.zone, self.label)

    def to_record(self) -> dict:
        return {"type": self.type, "camera": self.camera, "zone": self.zone, "label": self.label,
                "count": self.count, "frame_time": round(self.frame_time, 3)}

    def to_mqtt(self, before: object = None) -> int:
        return self.count

    def measure(self, figures: Figures) -> None:
        if self.zone is None:
            figures.set(IN_VIEW, (self.label,), self.count)
        else:
            figures.set(IN_ZONE, (self.zone, self.label), self.count)
