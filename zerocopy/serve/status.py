"""One camera's status as `/api/cameras` and `/metrics` show it: a reading made when asked (and its state
alone, `CameraState`, for readers that need no figures)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, NamedTuple

from zerocopy.serve.decode_gate import GateFigures
from zerocopy.stages.figures import Figures

STATES = ("starting", "running", "reconnecting", "stopped", "failed")


class CameraState(NamedTuple):
    """A camera's state, path and error as its `CameraStatus` says them, without the figures: cheap to read
    (`/health`, the state log)."""

    name: str
    state: str
    path: str | None
    error: str | None


@dataclass(frozen=True, kw_only=True)
class CameraStatus:
    """`source` is redacted (no password); `path` is None until the camera's first frame; rates are over the
    last seconds (`serve.cameras.WINDOW_S`), latency (arrival → result, ms) over the last inferred frames;
    counters are since the start; `events_dropped` is the box's (the publisher's queue is shared)."""

    name: str
    source: str
    model: str
    path: str | None
    state: str
    fps: float
    inference_fps: float
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    frames: int
    inferences: int
    reconnects: int
    dropped_frames: int
    events: int
    events_dropped: int
    last_frame_time: float | None
    error: str | None
    decode_gate: GateFigures = dataclasses.field(default_factory=GateFigures)  # over its openings
    analytics: dict[str, Any] = dataclasses.field(default_factory=dict)  # `serve.tallies.Tallies.to_json()`
    figures: Figures = dataclasses.field(default_factory=Figures, repr=False, compare=False)  # `/metrics`' (a copy)

    def to_json(self) -> dict[str, Any]:
        """Its fields, and the analytics' at the top: `objects`, `zones`, `lines`, `motion`, `regions`."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        del out["figures"]
        out["decode_gate"] = self.decode_gate.to_json()
        analytics = out.pop("analytics")
        return {**out, **analytics}
