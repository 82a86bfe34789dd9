"""zerocopy: run OpenVINO models over video with the fewest copies the machine allows.

    import zerocopy

    for r in zerocopy.detect("clip.mp4"):
        print(r.index, r.detections.xyxy)

`Detector`, `detect` and `FrameResult` are loaded on first use, so `import zerocopy` stays light.
"""

from zerocopy.detections import Detections
from zerocopy.errors import InferenceError, InputError, ModelError, PathUnavailable, ZeroCopyError

__version__ = "0.1.0"
__all__ = ["Detections", "Detector", "FrameResult", "InferenceError", "InputError", "ModelError", "PathUnavailable",
           "ZeroCopyError", "__version__", "detect"]

_LAZY = {"Detector", "FrameResult", "detect"}


def __getattr__(name: str):
    if name in _LAZY:
        from zerocopy import api

        return getattr(api, name)
    raise AttributeError(f"module 'zerocopy' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY)
