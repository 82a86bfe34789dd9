"""The run loop shared by every path: `core.Pipeline` (compile, first-frame trial, results → events),
`sequential.py` (inputs one after the other) and `parallel.py` (every input at once into one model);
`events.py` holds what a run yields and sums up to."""

from zerocopy.pipeline.core import Pipeline
from zerocopy.pipeline.events import Event, FrameDone, InputBegin, InputEnd, InputOutcome, RunResult

__all__ = ["Event", "FrameDone", "InputBegin", "InputEnd", "InputOutcome", "Pipeline", "RunResult"]
