"""The pipeline paths as compositions of stages, and `auto` with a reason for every refusal.

Every path ends in the same place: a `PreparedFrame` whose inputs fit the shared wrapped model.
Only decode, resize and hand-off differ between them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from zerocopy.decode.damage import DamageReport
from zerocopy.errors import PathUnavailable
from zerocopy.frames import PreparedFrame
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


# --- software path -------------------------------------------------------------------------


class _SoftwareStream:
    def __init__(self, source, input_names, width, height, resize, keep_pictures):
        from zerocopy.decode.software import SoftwareDecoder
        from zerocopy.resize.planes import PlaneResizer

        self.decoder = SoftwareDecoder(source)
        self.resizer = PlaneResizer(width, height, resize)
        self.y_name, self.uv_name = input_names
        self.keep = keep_pictures
        self.rate = self.decoder.rate
        self.expected_frames = self.decoder.expected_frames

    def __iter__(self) -> Iterator[PreparedFrame]:
        for index, (frame, decode_ms) in enumerate(self.decoder.frames()):
            t0 = time.perf_counter()
            y, uv, geometry = self.resizer(frame)
            pre_ms = (time.perf_counter() - t0) * 1e3
            yield PreparedFrame(index, float(frame.time) if frame.time is not None else None,
                                frame.width, frame.height, geometry, {self.y_name: y, self.uv_name: uv},
                                decode_ms, pre_ms, picture=frame if self.keep else None)

    def damage_report(self) -> DamageReport:
        return self.decoder.damage

    def close(self) -> None:
        self.decoder.close()


class SoftwareFront:
    """FFmpeg decode on the CPU (threaded) → bilinear resize of the planes → host NV12."""

    name = "software"
    input_kind = "nv12"

    def open(self, source, input_names, width, height, resize, keep_pictures) -> FrameStream:
        return _SoftwareStream(source, input_names, width, height, resize, keep_pictures)


# --- baseline path -------------------------------------------------------------------------


class _BaselineStream:
    def __init__(self, source, input_names, width, height, resize, keep_pictures):
        from zerocopy.decode.opencv import OpenCVDecoder
        from zerocopy.resize.bgr import BGRResizer

        self.decoder = OpenCVDecoder(source)
        self.resizer = BGRResizer(self.decoder.cv2, width, height, resize)
        (self.name,) = input_names
        self.keep = keep_pictures
        self.rate = self.decoder.rate
        self.expected_frames = self.decoder.expected_frames

    def __iter__(self) -> Iterator[PreparedFrame]:
        for index, (bgr, decode_ms, pts) in enumerate(self.decoder.frames()):
            t0 = time.perf_counter()
            tensor, geometry = self.resizer(bgr)
            pre_ms = (time.perf_counter() - t0) * 1e3
            picture = None
            if self.keep:
                import av

                picture = av.VideoFrame.from_ndarray(bgr, format="bgr24")
            yield PreparedFrame(index, pts, bgr.shape[1], bgr.shape[0], geometry, {self.name: tensor},
                                decode_ms, pre_ms, picture=picture)

    def damage_report(self) -> DamageReport:
        return self.decoder.damage

    def close(self) -> None:
        self.decoder.close()


class BaselineFront:
    """What the classic OpenVINO demo does: OpenCV decode to BGR, `cv2.resize`, BGR input."""

    name = "baseline"
    input_kind = "bgr"

    def open(self, source, input_names, width, height, resize, keep_pictures) -> FrameStream:
        return _BaselineStream(source, input_names, width, height, resize, keep_pictures)


def front_for(name: str) -> Front:
    if name == "software":
        return SoftwareFront()
    if name == "baseline":
        from zerocopy.decode.opencv import import_cv2

        import_cv2()
        return BaselineFront()
    raise PathUnavailable({name: "not available in this release"})
