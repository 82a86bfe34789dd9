"""Errors a user can act on. The CLI prints their message as one line and exits 1."""


class ZeroCopyError(Exception):
    """Base class for errors that are reported to the user without a traceback."""


class InputError(ZeroCopyError):
    """The input cannot be opened, holds no video, or no frame of it decodes."""


class ModelError(ZeroCopyError):
    """The model is missing, cannot be read, or has inputs/outputs the tool cannot feed or decode."""


class PathUnavailable(ZeroCopyError):
    """A pipeline path cannot run on this machine; `reasons` says why, one line per path."""

    def __init__(self, reasons: dict[str, str]):
        self.reasons = dict(reasons)
        super().__init__("; ".join(f"{path}: {why}" for path, why in self.reasons.items()))
