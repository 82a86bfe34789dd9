"""What every decoder yields (`Decoded`), and what the rest of the code may use on a decoder
(`VideoDecoder`): `PyAVDecoder`, `OpenCVDecoder` and `Paced` each have all of it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from zerocopy.decode.damage import DamageReport


GUESSED_RATE = 25.0  # frames per second of a stream whose container does not say


@dataclass(frozen=True, slots=True)
class Decoded:
    """What a decoder's `frames()` yields: the decoded `frame` (None: left undecoded by the decode gate of a
    `PyAVDecoder` told to gate, `decode.gate`), the time it took to decode (`decode_ms`),
    its timestamp in seconds (`pts`, None if it has none) and `arrived`, the `time.perf_counter()` at
    which the frame came out of the decoder (after realtime pacing): where its arrival→result latency
    starts. `arrived` is None for a file read as fast as it decodes (its frames do not arrive, they are
    pulled)."""

    frame: Any
    decode_ms: float
    pts: float | None
    arrived: float | None = None


@runtime_checkable
class VideoDecoder(Protocol):
    """A decoder, as the paths, the pipeline and the bench use it."""

    rate: float  # frames per second (the container's, or a guess: 25)
    expected_frames: int | None  # the frame count the container announces, if any
    damage: DamageReport  # what went wrong while reading (complete once closed)
    live: bool  # a network URL or a camera: frames come at the source's pace
    realtime: bool  # frames held back until their timestamps are due
    frames_ready: int  # decoded frames waiting for the consumer (0: the next must still come)

    def frames(self) -> Iterator[Decoded]:
        """Each frame in decode order; one iteration per decoder."""
        ...

    def interrupt(self) -> None:
        """From any thread: the iteration ends soon (after the frames already decoded)."""
        ...

    def close(self) -> None:
        """Release the input (from the iterating thread, or once it stopped)."""
        ...

