"""The run loop shared by every path: `core.Pipeline` (compile, first-frame trial, results → events),
`inputs.py` (the one input loop: inputs one after the other or all at once into one model), `parallel.py`
(each input's feeder thread); `events.py` holds what a run yields and sums up to."""

from zerocopy.pipeline.core import Pipeline
from zerocopy.pipeline.events import Event, FrameDone, InputBegin, InputEnd, InputOutcome, RunResult

__all__ = ["Event", "FrameDone", "InputBegin", "InputEnd", "InputOutcome", "Pipeline", "RunResult"]
