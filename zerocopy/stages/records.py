"""What the stages make of a frame, beside its detections: records, one type per kind, and the protocol every one
speaks, so that each sink takes any of them without knowing its type:

| record | `type` | an event (`logged`) | its own topic | retained |
|---|---|---|---|---|
| `track.ObjectEvent` | new, update, loiter, end | yes | – | no |
| `analytics.records.LineCrossing` | cross | yes | `CAMERA/lines/LINE` | no |
| `analytics.records.Occupancy` | count | no | `CAMERA/LABEL`, `CAMERA/ZONE/LABEL` | yes |
| `snapshots.stage.SnapshotSaved` | snapshot | no | `CAMERA/LABEL/snapshot` (the JPEG) | yes |
| `stages.motion.MotionState` | motion | no | `CAMERA/motion` (ON, OFF after `motion_off_delay`) | no |
| `roi.region_state.RegionState` | regions | no | – | no |

- `logged`: an event (what happened once): a line of `--events`, a message on `PREFIX/CAMERA/events`, one of
  serve's `events` figure. Otherwise a state, a file or a figure.
- `topic`: where it is also published under the run's prefix (None: nowhere else), `retained` there or not, with
  `to_mqtt(before)` as its payload (`before`: the same object's previous event, for Frigate's envelope).
- `to_record()`: the record as JSON.
- `measure(figures)`: what it adds to its camera's figures (`stages.figures`): serve's `/metrics` and `/api/cameras`
  come from these, not from a count of their own.

`RecordBase` gives the defaults (a state published nowhere that measures nothing); a sink dispatches on the type only
where it does more than the protocol says (the MQTT sink keeps each object's previous event; the store keeps the
objects and their files)."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from zerocopy.stages.figures import Figures


@runtime_checkable
class Record(Protocol):
    """See the module."""

    logged: ClassVar[bool]
    retained: ClassVar[bool]

    @property
    def type(self) -> str: ...

    @property
    def camera(self) -> str: ...

    @property
    def topic(self) -> str | None: ...

    def to_record(self) -> dict: ...

    def to_mqtt(self, before: Any = None) -> Any: ...

    def measure(self, figures: Figures) -> None: ...


class RecordBase:
    """The protocol's defaults: not an event, published nowhere, measuring nothing."""

    logged: ClassVar[bool] = False
    retained: ClassVar[bool] = False

    @property
    def topic(self) -> str | None:
        return None

    def measure(self, figures: Figures) -> None:
        pass
