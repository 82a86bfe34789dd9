"""The contracts between a path's own stages and the shared run loop.

A `Front` is what differs between paths: how an input is opened, decoded and prepared into model
inputs (a `FrameStream` of `PreparedFrame`s), how those inputs are handed to a request, and what this
machine must offer for the path to run at all. Everything after it (model, requests, postprocessing,
sinks) is shared.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from zerocopy.config import RunConfig
from zerocopy.decode.base import VideoDecoder
from zerocopy.decode.damage import DamageReport
from zerocopy.decode.gate import Demand
from zerocopy.decode.pyav import PyAVDecoder
from zerocopy.frames import Geometry, PreparedFrame
from zerocopy.motion.gate import Gated, MotionGate, MotionSpec
from zerocopy.paths.rate import DetectRate
from zerocopy.track.times import frame_time

if TYPE_CHECKING:
    from zerocopy.decode.vaapi import VASession
    from zerocopy.infer.model import WrappedModel
    from zerocopy.infer.queue import Handoff
    from zerocopy.probe import Facts
    from zerocopy.resize.regions import RoiFeed

@dataclass(frozen=True, kw_only=True, slots=True)
class Prepared:
    """What a path's `prepare(picture)` makes of a decoded picture."""

    inputs: dict[str, Any]  # the model's inputs by name (empty on zero-copy: the surface is bound at hand-off)
    geometry: Geometry  # where the picture sits in the model input, and the way back to source pixels
    keepalive: Any = None  # what must stay alive until inference ends (the scaled VA surface)
    shown: Any = None  # the picture to draw on (`OpenRequest.keep_images`), else None
    source: Any = None  # the decoded frame region models crop from (`OpenRequest.keep_source`), else None


Prepare = Callable[[Any], Prepared]
INFER = Gated(True, None, None)  # every frame, without --detect-fps or --motion
NOT_DUE = Gated(False, None, "detect_fps")  # a frame --detect-fps leaves out, without --motion


@dataclass(frozen=True, kw_only=True)
class OpenRequest:
    """What a front needs to open an input: the wrapped model it feeds (input names and size, resize
    mode, batch, OpenVINO core), the run's resolved configuration (decoding threads, realtime, the
    live policy), the run's VA session (VA paths), whether the decoded pictures are wanted, and
    `unbound`: how many prepared frames may exist at once before their request copies them (a
    resizer that reuses its output buffers needs at least that many), the run's stop,
    `keep_source`: whether region models will crop from each decoded frame (`PreparedFrame.source`), and
    `busy`: with `--motion`, whether a tracked object of this input is moving (the motion stage's
    `busy(input)`; None: never), which makes the motion gate infer. With `keep_images`, `every_picture` says that
    each frame's picture is wanted (drawn into --output; the decode gate is then off); False: the pictures of the
    frames decoded will do (serve's latest.jpg), so the decode gate may leave frames undecoded, without one."""

    model: WrappedModel
    config: RunConfig
    va: VASession
    keep_images: bool = False
    every_picture: bool = True
    unbound: int = 3
    stop: threading.Event | None = None  # the run's: an open it catches waiting on a source is abandoned
    keep_source: bool = False
    busy: Callable[[float], bool] | None = None
    settle: Callable[[int], None] | None = None  # a file's motion gate waits on it (`pipeline.delivered`)
    ends_due: Callable[[], float] | None = None  # the stages' `ends_due(input)`

    def motion(self, luma: Callable[[Any], Any]) -> MotionSpec | None:
        """The input's motion gate settings (`config.motion`), with the path's `luma(frame)`; None without."""
        return MotionSpec.of(self.config, luma, self.busy, every_picture=self.keep_images and self.every_picture,
                             settle=self.settle, ends_due=self.ends_due)


class FrameStream(Protocol):
    """One open input, prepared for the model."""

    rate: float
    expected_frames: int | None
    context: Any  # a remote context the model must be compiled with, or None
    live: bool  # frames come as they happen (a live source, a paced file), not as fast as they decode

    def __iter__(self) -> Iterator[PreparedFrame]: ...
    def frame_ready(self) -> bool: ...
    def damage_report(self) -> DamageReport: ...
    def interrupt(self) -> None: ...
    def close(self) -> None: ...


class Front(Protocol):
    """The path-specific stages."""

    name: str
    input_kind: str  # "nv12" | "bgr"
    roi_input_kind: str  # what its region crops feed region models (`roi_feed`): "nv12" | "bgr"
    memory_type: str | None  # "GPU_SURFACE" for remote tensors
    devices: tuple[str, ...]  # where this path may infer, best first
    nireq_cap: int | None  # requests in flight when --nireq is not given (None: the device's optimum)

    def refusals(self, facts: Callable[[], Facts], config: RunConfig) -> list[str]:
        """Why this machine cannot run the path at all (checked before any input is opened; `facts()`
        gathers what the machine offers, once per run); [] when it may."""
        ...

    def open(self, source: str | Path, req: OpenRequest) -> FrameStream: ...
    def handoff(self, model: WrappedModel, stream: FrameStream) -> Handoff: ...

    def roi_feed(self, model: WrappedModel, stream: FrameStream) -> RoiFeed:
        """How this path crops regions of its decoded frames into a region model's inputs (`--classify`),
        without leaving its memory; the model is wrapped for this path (`input_kind`, `memory_type`)."""
        ...


class PreparedStream:
    """A `FrameStream`: a decoder's frames prepared into model inputs by `prepare`.

    With `detect_fps` only the frames `DetectRate` takes are prepared; with `motion` (`MotionSpec`: the path's
    luma picture of each frame, and the gate's settings) only those the `MotionGate` picks among them. The others
    come out with `inferred=False`, `skipped_by` saying which, and no inputs, their picture (when one is drawn)
    from `show(picture)`. The first frame is always prepared (the path's trial). The motion stage's time (luma
    picture and detector) counts as the frame's preprocessing. With the decode gate (`motion.decode_gate`, on a PyAV
    decoder: `decode.gate`) the decoder leaves the frames the motion gate does not want undecoded: they come out not
    inferred, as the motion gate would have said (`MotionGate.passed`), with no picture; after each frame the motion
    gate's `wants_frames()` goes back to the decoder (`Demand`)."""

    context: Any = None  # set by a front that compiles on a remote context, once the first frame gave it

    def __init__(self, decoder: VideoDecoder, prepare: Prepare, bridge: Any = None, *,
                 detect_fps: float | None = None, show: Callable[[Any], Any] | None = None,
                 motion: MotionSpec | None = None):
        self.decoder, self.prepare = decoder, prepare
        self.bridge = bridge  # the native bridge, on the VA paths
        self.rate = decoder.rate
        self.expected_frames = decoder.expected_frames
        self.live = decoder.live or decoder.realtime
        self.sampler = DetectRate(detect_fps, decoder.rate) if detect_fps else None
        if motion is not None and self.live:  # frames come as they happen: the gate waits on no result
            motion = dataclasses.replace(motion, settle=None)
        self.gate = MotionGate(motion, decoder.rate, self.sampler) if motion is not None else None
        self.show = show or (lambda picture: None)
        self.demand: Demand | None = None
        if self.gate is not None and motion is not None and motion.decode_gate and isinstance(decoder, PyAVDecoder):
            self.demand = Demand()
            decoder.gate_decoding(self.demand)
        self._frames = self._generate()
        self._primed: list[PreparedFrame] = []

    def _choose(self, index: int, picture: Any, pts: float | None, arrived: float | None) -> Gated:
        """Whether this frame is inferred (and the motion seen on it)."""
        if self.gate is not None:
            return self.gate(index, pts, picture, arrived)
        if self.sampler is not None and not self.sampler.take(index, pts):
            return NOT_DUE
        return INFER

    def _generate(self) -> Iterator[PreparedFrame]:
        # closed here, not left to the garbage collector: an exception raised while the decoder's generator
        # closes (a second Ctrl-C in its `finally`) then reaches the caller instead of "Exception ignored"
        with contextlib.closing(self.decoder.frames()) as decoded_frames:
            yield from self._prepared(decoded_frames)

    def _prepared(self, decoded_frames: Iterator) -> Iterator[PreparedFrame]:
        g: Geometry | None = None
        for index, decoded in enumerate(decoded_frames):
            picture, decode_ms, pts = decoded.frame, decoded.decode_ms, decoded.pts
            if picture is None and g is not None:  # left undecoded by the decode gate
                yield self._undecoded(index, decoded, g)
                continue
            t0 = time.perf_counter()
            choice = self._choose(index, picture, pts, decoded.arrived)
            if self.demand is not None and self.gate is not None:
                wanted, wanted_from = self.gate.wants_frames()
                self.demand.judge(wanted, frame_time(index, pts, self.rate), wanted_from)
                if choice.infer:
                    self.demand.inferred()
            if g is not None and not choice.infer:
                yield PreparedFrame(index=index, pts=pts, width=g.src_w, height=g.src_h, geometry=g, inputs={},
                                    decode_ms=decode_ms, preprocess_ms=(time.perf_counter() - t0) * 1e3,
                                    picture=self.show(picture), arrived=decoded.arrived, inferred=False,
                                    motion=choice.motion, skipped_by=choice.skipped_by)
                continue
            made = self.prepare(picture)
            pre_ms = (time.perf_counter() - t0) * 1e3
            g = made.geometry
            yield PreparedFrame(index=index, pts=pts, width=g.src_w, height=g.src_h, geometry=g, inputs=made.inputs,
                                decode_ms=decode_ms, preprocess_ms=pre_ms, picture=made.shown, keepalive=made.keepalive,
                                arrived=decoded.arrived, source=made.source, motion=choice.motion)

    def _undecoded(self, index: int, decoded: Any, g: Geometry) -> PreparedFrame:
        assert self.gate is not None and self.demand is not None
        choice = self.gate.passed(index, decoded.pts, decoded.arrived)
        wanted, wanted_from = self.gate.wants_frames()
        self.demand.judge(wanted, frame_time(index, decoded.pts, self.rate), wanted_from)
        return PreparedFrame(index=index, pts=decoded.pts, width=g.src_w, height=g.src_h, geometry=g, inputs={},
                             decode_ms=decoded.decode_ms, preprocess_ms=0.0, picture=None, arrived=decoded.arrived,
                             inferred=False, motion=choice.motion, skipped_by=choice.skipped_by)

    def prime(self) -> PreparedFrame | None:
        """Prepare the first frame now, so that a path that cannot handle the input fails at open."""
        if not self._primed:
            first = next(self._frames, None)
            if first is None:
                return None
            self._primed.append(first)
        return self._primed[0]

    def __iter__(self) -> Iterator[PreparedFrame]:
        return self  # not a generator: one dropped unfinished would close `_frames` from the garbage collector

    def __next__(self) -> PreparedFrame:
        if self._primed:
            return self._primed.pop(0)
        return next(self._frames)

    def damage_report(self) -> DamageReport:
        """Complete once the stream is closed (FFmpeg's messages are gathered at close)."""
        return self.decoder.damage

    def frame_ready(self) -> bool:
        """Whether the next frame is decoded already (False: it must still come from the source)."""
        return bool(self._primed) or self.decoder.frames_ready > 0

    def interrupt(self) -> None:
        """Stop reading, from any thread: a live source's wait for data or for a reconnection ends now."""
        self.decoder.interrupt()

    def close(self) -> None:
        self.decoder.close()
        self._frames.close()
