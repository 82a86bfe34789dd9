"""OpenVINO's usage telemetry, for zerocopy's own processes (the CLI and the bench workers).

`import openvino` sends a usage event to Google Analytics from a child process it starts on a
worker thread, unless the user opted out: OpenVINO takes a missing consent file
(`~/intel/openvino_telemetry`) as consent when it shows no dialog. zerocopy's processes send
nothing the user did not opt into, and the CLI's quick exit raced that child (on Python 3.14, whose
forkserver then printed a traceback on the way out). Without an explicit opt-in
(`opt_in_out --opt_in`), OpenVINO is given its own no-op stand-in: its import falls back to it when
the telemetry package cannot be imported. A program that imports zerocopy as a library keeps
OpenVINO's default.
"""

from __future__ import annotations

import sys


def opted_in() -> bool:
    """Whether the user accepted OpenVINO's telemetry (the consent file says so)."""
    try:
        from openvino_telemetry.utils.opt_in_checker import ConsentCheckResult, OptInChecker

        return OptInChecker().check(enable_opt_in_dialog=False) == ConsentCheckResult.ACCEPTED
    except Exception:  # not installed, unreadable, or a version that works otherwise
        return False


def keep_openvino_quiet() -> None:
    """Before OpenVINO is first imported: no telemetry unless the user opted in."""
    if "openvino" in sys.modules or opted_in():
        return
    sys.modules["openvino_telemetry"] = None  # type: ignore[assignment]  # import → ImportError → stub
