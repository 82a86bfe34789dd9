"""What a run yields (`InputBegin`, `FrameDone`, `InputEnd`) and what it sums up to (`RunResult`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from zerocopy.decode.damage import DamageReport
from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame
from zerocopy.roi.stage import RoiTimes
from zerocopy.stages.base import StageReport
from zerocopy.stats import Distribution, RunClock, StepTimes


@dataclass(kw_only=True)
class InputOutcome:
    source: str
    frames: int = 0
    error: str | None = None
    damage: DamageReport = field(default_factory=DamageReport)
    started: float | None = None  # perf_counter when it began, and at its last result
    ended: float | None = None
    interrupted: bool = False  # a stop cut it short (while it was opened, too): not a failure of its own

    @property
    def fps(self) -> float:
        span = (self.ended or 0.0) - (self.started or 0.0)
        return round(self.frames / span, 2) if self.frames and span > 0 else 0.0


@dataclass(frozen=True)
class InputBegin:
    source: str
    rate: float
    expected_frames: int | None
    input: int = 0  # the input's place in the run's list


@dataclass(frozen=True, kw_only=True)
class FrameDone:
    """A frame's result. `events` (with `--track`): what its objects did (`track.ObjectEvent`: new,
    update, end). A frame `--detect-fps` left out is not `inferred`: its boxes are the tracks' predictions."""

    source: str
    frame: PreparedFrame
    detections: Detections
    input: int = 0
    events: tuple = ()

    @property
    def inferred(self) -> bool:
        return self.frame.inferred

    @property
    def output(self) -> np.ndarray | None:
        """An image-to-image model's map over the frame (`PreparedFrame.output`), or None."""
        return self.frame.output


@dataclass(frozen=True, kw_only=True)
class InputEnd:
    """Every input ends with one, `began` or not (an input that could not be opened did not); with
    `--track`, `events` ends every object still open in it."""

    source: str
    outcome: InputOutcome
    began: bool = True
    input: int = 0
    events: tuple = ()


Event = InputBegin | FrameDone | InputEnd


@dataclass(kw_only=True)
class RunResult:
    inputs: list[InputOutcome]
    steps: StepTimes  # decode, preprocess, inference, postprocess (the stages after inference counted in it
    # unless they time themselves)
    clock: RunClock
    detections: int = 0
    interrupted: bool = False
    setup_s: float = 0.0  # opening the first input and compiling the model, not in the clock
    sink_s: float = 0.0  # wall time spent in the sinks (the annotated MP4's encoder, mostly), in the clock
    latency: Distribution = field(default_factory=Distribution)  # arrival → result (ms), live or paced inputs
    skipped: int = 0  # frames --detect-fps left out (decoded, not inferred)
    # each stage after inference that sums itself up, by its name ("tiles", "rois", "tracking", …)
    reports: dict[str, StageReport] = field(default_factory=dict)

    @property
    def stages(self) -> StepTimes:
        """deprecated name of `steps`"""
        return self.steps

    @property
    def frames(self) -> int:
        return sum(i.frames for i in self.inputs)

    @property
    def rois(self) -> RoiTimes | None:
        """The second models' stage (`--classify`): per region, per frame."""
        return self.reports.get("rois")  # type: ignore[return-value]

    @property
    def tiles(self) -> RoiTimes | None:
        """The detector on tiles of each frame (`--tiles`): per tile, per frame."""
        return self.reports.get("tiles")  # type: ignore[return-value]

    @property
    def tracking(self) -> dict | None:
        """With --track: objects per label and their mean dwell."""
        tracks = self.reports.get("tracking")
        return tracks.summary() if tracks is not None else None
