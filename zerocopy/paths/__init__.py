"""The pipeline paths as compositions of stages, and the order `auto` tries them in.

Every path ends in the same place: a `PreparedFrame` whose inputs fit the shared wrapped model.
Only decode, resize and hand-off differ between them:

| path      | decode                 | preprocess                               | hand-off                         |
|-----------|------------------------|------------------------------------------|----------------------------------|
| zero-copy | VA-API, frames on GPU  | scale_vaapi (+ pad_vaapi)                | VA surface → remote NV12 tensors |
| copy      | VA-API, frames on GPU  | scale_vaapi, hwdownload (small)          | host NV12 arrays                 |
| software  | FFmpeg on the CPU      | swscale from the decoded planes          | host NV12 arrays                 |
| baseline  | OpenCV `grab()`        | full-size BGR (`retrieve()`), cv2.resize | host BGR array                   |

The contracts are in `base.py`; a new path is a `Front` (see docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import openvino as ov

from zerocopy.config import AUTO_ORDER, PATHS
from zerocopy.decode.opencv import import_cv2
from zerocopy.errors import ModelError
from zerocopy.infer.model import pick_device
from zerocopy.paths.base import FrameStream, Front, OpenRequest, PreparedStream
from zerocopy.paths.host import BaselineFront, SoftwareFront
from zerocopy.paths.vaapi import VA_NIREQ, CopyFront, ZeroCopyFront

GPU_DECODING = ("zero-copy", "copy")


def decode_infer(path: str, device: str) -> tuple[str, str]:
    """Where a path decodes and where `device` ("GPU.1", "CPU", …) infers: ("CPU", "GPU") for the software path
    on a GPU, the middle path most Intel boxes can have without VA-API (what `--device auto` picks there)."""
    return ("GPU" if path in GPU_DECODING else "CPU"), ("GPU" if device.split(".")[0] == "GPU" else "CPU")


def where_it_runs(path: str, device: str) -> str:
    """`decode_infer` in words: "decoding on the CPU, inferring on the GPU"."""
    decodes, infers = decode_infer(path, device)
    return (f"decoding and inferring on the {decodes}" if decodes == infers
            else f"decoding on the {decodes}, inferring on the {infers}")


def front_for(name: str) -> Front:
    """The front of a named path (`baseline` needs OpenCV: an `ImportError`-based refusal if missing)."""
    if name == "software":
        return SoftwareFront()
    if name == "copy":
        return CopyFront()
    if name == "zero-copy":
        return ZeroCopyFront()
    if name == "baseline":
        import_cv2()
        return BaselineFront()
    raise ValueError(f"unknown path {name!r}")


__all__ = ["AUTO_ORDER", "PATHS", "VA_NIREQ", "BaselineFront", "CopyFront", "FrameStream", "Front", "OpenRequest",
           "PreparedStream", "SoftwareFront", "ZeroCopyFront", "front_for"]


def candidates(wanted: str, fronts: Sequence[Front] | None = None) -> list[Front]:
    """The fronts to try, best first (`wanted` "auto"), or the one `wanted` names; `fronts` (`Detector(fronts=…)`)
    replaces the built-in ones."""
    if fronts is not None:
        if wanted == "auto":
            return list(fronts)
        named = [f for f in fronts if f.name == wanted]
        return named or [front_for(wanted)]
    return [front_for(name) for name in (AUTO_ORDER if wanted == "auto" else (wanted,))]


def devices_to_try(core: ov.Core, asked: str, front: Front) -> list[str]:
    """Where a path may infer, best first: with `auto`, a GPU that fails is followed by the CPU (if OpenVINO
    offers it)."""
    if asked.lower() != "auto":
        return [pick_device(core, asked, front.devices)]
    first = pick_device(core, "auto", front.devices)
    return [first] + [d for d in front.devices if d != first.split(".")[0] and _offered(core, d)]


def _offered(core: ov.Core, device: str) -> bool:
    try:
        pick_device(core, device)
        return True
    except ModelError:
        return False
