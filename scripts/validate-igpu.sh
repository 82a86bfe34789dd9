#!/usr/bin/env bash
# For a person with an Intel iGPU: set up, check the machine, run the hardware tests and every path,
# and write ONE report file to send back (igpu-report-<host>-<time>.json in the project folder).
#
#   scripts/validate-igpu.sh [--frames N]
#
# Before running: a PyAV built with VA-API, and the FFmpeg headers of that same FFmpeg (see
# docs/hardware.md). If PyAV is not the one in .venv, run with ZEROCOPY_PYTHON=/path/to/python.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${ZEROCOPY_PYTHON:-}
if [ -z "$PY" ]; then
  make setup
  PY=.venv/bin/python
fi
"$PY" -m zerocopy.bridge build
"$PY" -m zerocopy doctor
"$PY" scripts/igpu_report.py "$@"
