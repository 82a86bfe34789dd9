"""Inputs one after the other, on the calling thread: open, (compile and try the first frame), then
submit and deliver in order until the input ends, a stop, or `max_frames`."""

from __future__ import annotations

import time
from collections.abc import Iterator

from zerocopy.decode.live import OpenAbandoned
from zerocopy.errors import InferenceError, InputError, PathUnavailable
from zerocopy.frames import PreparedFrame
from zerocopy.infer.queue import InferenceScheduler
from zerocopy.pipeline.events import Event, FrameDone, InputBegin, InputEnd, InputOutcome
from zerocopy.pipeline.loop import RunLoop
from zerocopy.redaction import redact, redact_text


def sequential_events(p: RunLoop, sources: list[str], max_frames: int | None) -> Iterator[Event]:
    for index, source in enumerate(sources):
        if p.stop_event.is_set():
            break
        outcome = InputOutcome(source=redact(source))  # what is shown of it: the events, the report, errors
        p.outcomes.append(outcome)
        begun = False
        try:
            for event in _input_events(p, source, outcome, max_frames, index):
                begun = begun or isinstance(event, InputBegin)
                yield event
        except InputError as e:
            outcome.error = redact_text(str(e))
        except OpenAbandoned:  # stopped while it was being opened: interrupted, not an input's failure
            outcome.interrupted = True
        except (InferenceError, PathUnavailable) as e:
            if not p.committed:
                raise
            outcome.error = redact_text(f"{source}: {e}")
        outcome.interrupted = outcome.interrupted or (p.stop_event.is_set() and not outcome.error)
        p.note_no_frame(outcome)
        yield InputEnd(source=outcome.source, outcome=outcome, began=begun, input=index, events=p.end_input(index))


def _input_events(p: RunLoop, source: str, outcome: InputOutcome, max_frames: int | None,
                  index: int) -> Iterator[Event]:
    stream = p.open(source, index)
    scheduler: InferenceScheduler | None = None
    try:
        scheduler = p.activate(stream)
        begin = p.begin(index, outcome.source, stream)
        frames = iter(stream)
        ready: list[FrameDone] = []
        taken = 0
        if not p.committed:
            first = next(frames, None)
            if first is not None:
                results = p.trial(scheduler, first)
                outcome.started = time.perf_counter()
                ready = [p.done(r, outcome, index) for r in results]  # region models too, before commit
                taken = 1
                p.committed = True
        outcome.started = outcome.started or time.perf_counter()
        yield begin
        yield from ready
        batch = p.model.batch
        pending: list[PreparedFrame] = []
        for n, item in enumerate(frames, start=taken):
            if p.stop_event.is_set() or (max_frames is not None and n >= max_frames):
                break
            if not item.inferred:  # --detect-fps left it out: it keeps its place in the order
                if pending:
                    scheduler.submit(pending)
                    pending = []
                scheduler.pass_through(item)
            else:
                pending.append(item)
                if len(pending) == batch:
                    scheduler.submit(pending)
                    pending = []
            # A live input's next frame is not there yet: deliver what is in flight when it is done,
            # not when that frame comes (a source's frame interval later).
            idle = not pending and stream.live and not stream.frame_ready()
            for r in scheduler.results(wait=idle):
                yield p.done(r, outcome, index)
        if pending and not p.stop_event.is_set():
            scheduler.submit(pending)
        for r in scheduler.results(wait=True):  # what is in flight: stopping keeps it
            yield p.done(r, outcome, index)
    finally:
        try:
            if scheduler is not None:
                scheduler.wait_all()  # after an error or an early close: let OpenVINO finish
        finally:
            if scheduler is not None:
                scheduler.discard()  # results nobody will take (the input ended early)
                if scheduler.failed:
                    p.drop_scheduler()
            stream.close()
            p.forget(stream)
            outcome.damage = stream.damage_report()
