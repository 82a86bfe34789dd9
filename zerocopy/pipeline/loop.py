"""What the input loop (`inputs.py`, inputs one after the other or all at once) and its feeders (`parallel.py`)
use of the run that drives them: the `Pipeline`'s half that opens inputs, compiles, tries the first frame and turns
results into events. A contract of its own, so that the loop does not depend on the pipeline that depends on it."""

from __future__ import annotations

import threading
from typing import Protocol

from zerocopy.frames import PreparedFrame
from zerocopy.infer.model import WrappedModel
from zerocopy.infer.queue import InferenceScheduler, Result
from zerocopy.paths.base import FrameStream
from zerocopy.pipeline.delivered import Delivered
from zerocopy.pipeline.events import FrameDone, InputBegin, InputOutcome


class RunLoop(Protocol):
    """The run the input loop serves (`Pipeline`)."""

    model: WrappedModel
    scheduler: InferenceScheduler | None
    committed: bool  # the first frame went through: events may leave
    outcomes: list[InputOutcome]  # each started input's, in the run's order
    stop_event: threading.Event  # a stop: read no more, let the frames in flight finish
    abandon: threading.Event  # opens still waiting give up
    feeder_depth: int  # frames each input's feeder may prepare ahead
    delivered: Delivered  # which frames the stages have seen (a file's feeder may wait on one)

    def open(self, source: str, input: int = 0) -> FrameStream: ...

    def forget(self, stream: FrameStream) -> None: ...

    def activate(self, stream: FrameStream) -> InferenceScheduler: ...

    def drop_scheduler(self) -> None: ...

    def begin(self, input: int, source: str, stream: FrameStream) -> InputBegin: ...

    def trial(self, scheduler: InferenceScheduler, first: PreparedFrame) -> list[Result]: ...

    def done(self, r: Result, outcome: InputOutcome, input: int = 0) -> FrameDone: ...

    def note_no_frame(self, outcome: InputOutcome) -> None: ...

    def end_input(self, input: int) -> tuple: ...
