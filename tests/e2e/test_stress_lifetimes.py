"""scripts/stress_lifetimes.py, bounded to seconds: Detector, Processor and serve engines opened, broken off with
requests in flight and closed from several threads, and request queues let go while a completion callback still
runs (issue 41), with faulthandler on and glibc filling freed memory (MALLOC_PERTURB_), so a use after free
crashes the child rather than passing by chance. The longer run: `python scripts/stress_lifetimes.py --seconds 600`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_lifetimes_under_stress_never_crash(face_model_path):
    env = {**os.environ, "MALLOC_PERTURB_": "165", "PYTHONFAULTHANDLER": "1"}
    proc = subprocess.run([sys.executable, "scripts/stress_lifetimes.py", "--seconds", "6"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr[-6000:]}"
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("survived:") and " 0 " not in f" {last} ", proc.stdout  # every kind of cycle ran
