"""zerocopy: run OpenVINO models over video with the fewest copies the machine allows."""

from zerocopy.detections import Detections
from zerocopy.errors import InputError, ModelError, PathUnavailable, ZeroCopyError

__version__ = "0.1.0"
__all__ = ["Detections", "InputError", "ModelError", "PathUnavailable", "ZeroCopyError", "__version__"]
