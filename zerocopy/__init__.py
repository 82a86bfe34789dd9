"""zerocopy: run OpenVINO models over video with the fewest copies the machine allows.

    import zerocopy

    for r in zerocopy.detect("clip.mp4"):
        print(r.index, r.detections.xyxy)

`Detector`, `detect`, `FrameResult`, `Processor` (image-to-image models) and `RunConfig` (every setting
of a run, declared once) are loaded on first use, so `import zerocopy` stays light.
"""

import importlib

from zerocopy.detections import Attribute, Detections
from zerocopy.errors import ConfigError, InferenceError, InputError, ModelError, PathUnavailable, ZeroCopyError

__version__ = "0.1.0"
__all__ = ["Attribute", "ConfigError", "Detections", "Detector", "FrameResult", "InferenceError", "InputError",
           "ModelError", "PathUnavailable", "Processor", "RunConfig", "ZeroCopyError", "__version__", "detect"]

_LAZY = {"Detector": "zerocopy.api", "FrameResult": "zerocopy.results", "detect": "zerocopy.api",
         "RunConfig": "zerocopy.config", "Processor": "zerocopy.process"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'zerocopy' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY)
