"""The pipeline paths as compositions of stages, and `auto` with a reason for every refusal.

Every path ends in the same place: a `PreparedFrame` whose inputs fit the shared wrapped model.
Only decode, resize and hand-off differ between them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from zerocopy.decode.damage import DamageReport
from zerocopy.errors import PathUnavailable
from zerocopy.frames import Geometry, PreparedFrame
from zerocopy.probe import Facts, refusals

PATHS = ("zero-copy", "copy", "software", "baseline")
AUTO_ORDER = ("zero-copy", "copy", "software")


class FrameStream(Protocol):
    """One open input, yielding frames ready for the model."""

    rate: float
    expected_frames: int | None

    def __iter__(self) -> Iterator[PreparedFrame]: ...
    def damage_report(self) -> DamageReport: ...
    def close(self) -> None: ...


class Front(Protocol):
    """The path-specific stages: opens an input and prepares its frames for `input_names`."""

    name: str
    input_kind: str

    def open(self, source: str | Path, input_names: list[str], width: int, height: int,
             resize: str, keep_pictures: bool) -> FrameStream: ...


@dataclass
class PathChoice:
    name: str
    refused: dict[str, str] = field(default_factory=dict)


def choose(requested: str, facts: Facts) -> PathChoice:
    """Resolve `--path`: auto walks AUTO_ORDER; an explicit GPU path that cannot run raises."""
    refused = refusals(facts)
    if requested == "auto":
        for name in AUTO_ORDER:
            if name not in refused:
                return PathChoice(name, {k: v for k, v in refused.items() if AUTO_ORDER.index(k) <
                                         AUTO_ORDER.index(name)})
        raise AssertionError("the software path is always available")
    if requested in refused:
        raise PathUnavailable({requested: refused[requested]})
    return PathChoice(requested)


class _Stream:
    """One open input: a decoder's `(picture, decode_ms, pts)` prepared into model inputs."""

    def __init__(self, decoder, prepare: Callable[[Any], tuple[dict[str, Any], Geometry]],
                 keep: Callable[[Any], Any] | None):
        self.decoder, self.prepare, self.keep = decoder, prepare, keep
        self.rate = decoder.rate
        self.expected_frames = decoder.expected_frames

    def __iter__(self) -> Iterator[PreparedFrame]:
        for index, (picture, decode_ms, pts) in enumerate(self.decoder.frames()):
            t0 = time.perf_counter()
            inputs, g = self.prepare(picture)
            pre_ms = (time.perf_counter() - t0) * 1e3
            yield PreparedFrame(index, pts, g.src_w, g.src_h, g, inputs, decode_ms, pre_ms,
                                picture=self.keep(picture) if self.keep else None)

    def damage_report(self) -> DamageReport:
        return self.decoder.damage

    def close(self) -> None:
        self.decoder.close()


class SoftwareFront:
    """FFmpeg decode on the CPU (threaded) → bilinear resize of the planes → host NV12."""

    name = "software"
    input_kind = "nv12"

    def open(self, source, input_names, width, height, resize, keep_pictures) -> FrameStream:
        from zerocopy.decode.software import SoftwareDecoder
        from zerocopy.resize.planes import PlaneResizer

        resizer = PlaneResizer(width, height, resize)
        y_name, uv_name = input_names

        def prepare(frame):
            y, uv, g = resizer(frame)
            return {y_name: y, uv_name: uv}, g

        return _Stream(SoftwareDecoder(source), prepare, (lambda f: f) if keep_pictures else None)


class BaselineFront:
    """What the classic OpenVINO demo does: OpenCV decode to BGR, `cv2.resize`, BGR input."""

    name = "baseline"
    input_kind = "bgr"

    def open(self, source, input_names, width, height, resize, keep_pictures) -> FrameStream:
        import av

        from zerocopy.decode.opencv import OpenCVDecoder
        from zerocopy.resize.bgr import BGRResizer

        decoder = OpenCVDecoder(source)
        resizer = BGRResizer(decoder.cv2, width, height, resize)
        (name,) = input_names

        def prepare(bgr):
            tensor, g = resizer(bgr)
            return {name: tensor}, g

        def keep(bgr):
            return av.VideoFrame.from_ndarray(bgr, format="bgr24")

        return _Stream(decoder, prepare, keep if keep_pictures else None)


def front_for(name: str) -> Front:
    if name == "software":
        return SoftwareFront()
    if name == "baseline":
        from zerocopy.decode.opencv import import_cv2

        import_cv2()
        return BaselineFront()
    raise PathUnavailable({name: "not available in this release"})
