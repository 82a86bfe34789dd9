"""The contract of what runs on a frame after inference: tiles, the class filter, region models, anonymising,
tracking, and whatever analytic comes next (zones, lines, motion) — each a `Stage`.

The pipeline keeps an ordered list of stages and, for each inferred frame, hands the output decoding's
detections through them in turn (`StageChain`); it knows nothing of what any of them does. A stage:

- says what it is: `name` (its key in `RunResult.reports` and in the run report), `title` (how messages name
  it), whether it cuts regions out
  of the decoded frame (`crops`: the path keeps the decoded frame for it, and its failures before the path is
  committed are the path's), whether it times itself (`own_times`: it has a report of its own; else its time
  counts as postprocessing), whether it also sees the frames `--detect-fps` leaves out (`on_skipped`);
- is made ready on the path's device and VA context once the detector is compiled (`activate`), tried on the
  first frame during the path's trial (`prime`), and let go when the run ends (`release`);
- learns of each input as it begins (`begin`, with its frozen `InputInfo`) and ends (`end`, which may emit
  events, e.g. the end of every tracked object);
- on each frame (`__call__`) takes the detections so far (None, or a stage's guess such as the tracks'
  predictions, on a frame not inferred) and returns the detections after it and the events it made: records the
  event sinks write and publish, as `track.ObjectEvent` is (`to_record()` for JSON Lines; `id`, `camera`, `type`
  and `to_mqtt(before)` for the broker; `retained` True for a state rather than an event, as
  `analytics.records.Occupancy`);
- right after, and before `end`, sees the events the stages before it made (`amend`): it may add to them
  (zones add each object's zones) and add its own that need them (a zone's `update` names the object's event);
- may ask the motion gate for the input's next frames (`busy`, asked from the input's feeder thread);
- sums itself up (`report()`: an object with `summary()` and `reset()`, or None).

`StageBase` gives every method a default that does nothing, so a stage writes only what it does."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame
from zerocopy.input_settings import InputSettings

if TYPE_CHECKING:
    from zerocopy.infer.compiled import CompiledModels
    from zerocopy.infer.model import WrappedModel
    from zerocopy.resize.regions import RoiFeed


@dataclass(frozen=True, kw_only=True)
class InputInfo:
    """One input of a run, as its stages see it when it begins."""

    index: int  # its place in the run's list
    source: str  # what was opened (a URL with its password masked where shown)
    camera: str  # its name in events (serve's camera name, else from the source)
    rate: float  # the stream's frames per second (never 0: `decode.base.GUESSED_RATE` when its container does not say)
    detect_fps: float | None = None  # inferences per second asked of it (its own, else the run's; None: every frame)
    classes: tuple[int, ...] | None = None  # its own reported labels (label indices), None: the run's
    settings: InputSettings = field(default_factory=InputSettings)  # all of its own (`input_settings.INPUT_SETTINGS`)

    @property
    def inferred_rate(self) -> float:
        """Frames per second that are inferred: the stream's rate, or fewer with `detect_fps`."""
        fps, rate = self.detect_fps, self.rate
        return min(fps, rate) if fps and rate else (fps or rate)


@dataclass(frozen=True, kw_only=True)
class Activation:
    """Where a run's models run, given to each stage once the detector is compiled: the device, the VA remote
    context (zero-copy; else None), the OpenVINO properties, how the path feeds regions of its frames to a
    model (`feed(wrapped)`), and the owner of compiled models that outlive the run (None: the run's own)."""

    device: str
    context: Any
    ov_config: dict[str, Any]
    feed: Callable[[WrappedModel], RoiFeed]
    models: CompiledModels | None = None


class StageReport(Protocol):
    """What a stage sums up to: `summary()` for the run report, `reset()` to start measuring afresh (the bench
    after its warm-up)."""

    def summary(self) -> dict[str, Any]: ...

    def reset(self) -> None: ...


@runtime_checkable
class Stage(Protocol):
    """What runs on a frame after inference (see the module's docstring)."""

    name: str
    title: str
    crops: bool
    own_times: bool
    on_skipped: bool

    def activate(self, at: Activation) -> None: ...

    def prime(self, frame: PreparedFrame) -> None: ...

    def begin(self, input: InputInfo) -> None: ...

    def __call__(self, frame: PreparedFrame, detections: Detections | None, input: int) -> \
        tuple[Detections | None, list]: ...

    def amend(self, events: list, input: int) -> list: ...

    def busy(self, input: int, t: float | None = None) -> bool: ...

    def ends_due(self, input: int) -> float: ...

    def end(self, input: int) -> list: ...

    def release(self) -> None: ...

    def report(self) -> StageReport | None: ...


class StageBase:
    """Defaults for every `Stage` method: nothing to activate, prime, begin, end or release, no report; not
    called on frames left out (`on_skipped` False)."""

    name = "stage"
    crops = False
    own_times = False
    on_skipped = False

    @property
    def title(self) -> str:
        return self.name

    def activate(self, at: Activation) -> None:
        pass

    def prime(self, frame: PreparedFrame) -> None:
        pass

    def begin(self, input: InputInfo) -> None:
        pass

    def __call__(self, frame: PreparedFrame, detections: Detections | None, input: int) -> \
            tuple[Detections | None, list]:
        return detections, []

    def amend(self, events: list, input: int) -> list:
        """The events the stages before made of this frame (or at the input's end), with what this stage adds:
        unchanged by default."""
        return events

    def busy(self, input: int, t: float | None = None) -> bool:
        """Whether this input's frame at media time `t` (None: the last seen) must be inferred whatever the motion
        gate sees (a tracked object moving): asked from the input's feeder thread, so it reads only what a frame
        left behind. No by default."""
        return False

    def ends_due(self, input: int) -> float:
        """The media time from which an object of this input waits for an inferred frame to make its `end` (the
        motion gate infers the first keyframe from then on; any thread, as `busy`). Never by default."""
        return math.inf

    def end(self, input: int) -> list:
        return []

    def release(self) -> None:
        pass

    def report(self) -> StageReport | None:
        return None
