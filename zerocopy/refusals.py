"""Why a path cannot run, as data: each reason carries a stable `Code`, which the CLI's one-line
summary and `doctor` map to a few words, so rewording a message never breaks them.

A `Reason` is the full message (a `str`, so reports and joins keep working) with its code.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from zerocopy.redaction import redact_text


class Code(enum.Enum):
    """Stable names of the reasons a path is refused (used in the short summary and `doctor`)."""

    PYAV_TOO_OLD = "pyav-too-old"
    NO_VAAPI = "no-vaapi-in-pyav"
    NO_VA_FILTER = "no-va-filter"
    NO_GPU = "no-gpu"
    NO_RENDER_NODE = "no-render-node"
    NO_SUCH_RENDER_NODE = "no-such-render-node"
    VA_DEVICE = "va-device-cannot-open"
    CODEC = "gpu-cannot-decode"
    NO_BRIDGE = "no-native-bridge"
    CPU_ASKED = "cpu-asked"
    BATCH = "batch-on-surfaces"
    NO_DEVICE = "no-such-device"
    COMPILE = "compile-failed"
    BIND = "bind-failed"
    FIRST_INFERENCE = "first-inference-failed"
    VA_FIRST_FRAME = "va-first-frame-failed"
    NO_SURFACE_SHARING = "no-surface-sharing"
    NO_OPENCV = "no-opencv"
    ROI_CROP = "region-crop-failed"
    OTHER = "other"


# Most fundamental first: the summary names the first one or two.
SHORT: dict[Code, str] = {
    Code.PYAV_TOO_OLD: "PyAV too old for VA-API",
    Code.NO_VAAPI: "no VA-API in PyAV",
    Code.NO_VA_FILTER: "no VA-API filters in PyAV's FFmpeg",
    Code.NO_GPU: "no GPU",
    Code.NO_RENDER_NODE: "no render node",
    Code.NO_SUCH_RENDER_NODE: "no such render node",
    Code.VA_DEVICE: "the VA device cannot be opened",
    Code.CODEC: "the GPU cannot decode this codec",
    Code.NO_BRIDGE: "no native bridge",
    Code.CPU_ASKED: "--device CPU asked for",
    Code.BATCH: "batch > 1 on surfaces",
    Code.NO_DEVICE: "device not available",
    Code.COMPILE: "the model does not compile there",
    Code.BIND: "binding the first frame failed",
    Code.FIRST_INFERENCE: "the first inference failed",
    Code.ROI_CROP: "cropping regions there failed",
    Code.VA_FIRST_FRAME: "the VA pipeline failed on the first frame",
    Code.NO_SURFACE_SHARING: "OpenVINO cannot share the VA display",
    Code.NO_OPENCV: "OpenCV is not installed",
}


class Reason(str):
    """A refusal's message, with its `code`."""

    code: Code

    def __new__(cls, code: Code, message: str) -> Reason:
        self = super().__new__(cls, message)
        self.code = code
        return self

    def __reduce__(self):  # pickles (and copies) with its code
        return (Reason, (self.code, str(self)))


def redacted(reason: str) -> str:
    """`reason` with any URL in it redacted (`redaction.redact`), keeping its code."""
    text = redact_text(reason)
    return Reason(code_of(reason), text) if isinstance(reason, Reason) else text


def code_of(reason: str) -> Code:
    return reason.code if isinstance(reason, Reason) else Code.OTHER


def short_text(reason: str) -> str:
    """A few words for one reason: its code's, or (no code) the message's first clause."""
    code = code_of(reason)
    return SHORT[code] if code in SHORT else reason.split(": ")[0][:80]


def summary(reasons: dict[str, list[str]], most: int = 2) -> str:
    """The one or two reasons that matter, each once, most fundamental first: "no VA-API in PyAV; no GPU"."""
    rank = {code: i for i, code in enumerate(SHORT)}
    found: dict[str, int] = {}
    for why in (w for ws in reasons.values() for w in ws):
        found.setdefault(short_text(why), rank.get(code_of(why), len(rank)))
    return "; ".join(sorted(found, key=found.__getitem__)[:most])


@dataclass
class PathChoice:
    """The path that ran, and every reason each better one was refused (`refused`: joined, for reports)."""

    name: str
    reasons: dict[str, list[str]] = field(default_factory=dict)

    @property
    def refused(self) -> dict[str, str]:
        return {path: "; ".join(why) for path, why in self.reasons.items()}
