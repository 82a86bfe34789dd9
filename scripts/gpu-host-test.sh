#!/usr/bin/env bash
# The VA stack on this machine's own system, not in a root: `make setup-gpu` into a venv of its own
# (GPU_VENV, default .venv-gpu, so that .venv keeps PyPI's PyAV for `make test`): on Debian 12 that builds
# FFmpeg 9 into the cache (scripts/ffmpeg-build.sh), PyAV against it and the native bridge. Then doctor and
# the tests marked vastack or native, there. A render node with no driver behind it is made with mknod in a
# folder of its own (root only; /dev is not touched) and named with --va-device and $ZEROCOPY_TEST_DEAD_NODE;
# it is removed on exit.
#
#   make test-gpu-host          # or: scripts/gpu-host-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${GPU_VENV:-.venv-gpu}
MAKE=${MAKE:-make}
took() { local s=$((SECONDS - $1)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }
header() { printf '\n===== %s =====\n' "$*"; }

t0=$SECONDS
header "make setup-gpu VENV=$VENV (this machine's own system)"
"$MAKE" --no-print-directory setup-gpu VENV="$VENV"
echo "gpu-host: setup-gpu took $(took "$t0")"

node_dir=$(mktemp -d "${TMPDIR:-/tmp}/zerocopy-dead-node.XXXXXX")
trap 'rm -rf "$node_dir"' EXIT
node="$node_dir/renderD128"
doctor_args=()
if mknod -m 666 "$node" c 226 128 2>/dev/null; then  # DRM's render node numbers; no driver behind it here
  export ZEROCOPY_TEST_DEAD_NODE="$node"
  doctor_args=(--va-device "$node")
  echo "gpu-host: a render node with no driver behind it: $node"
else
  echo "gpu-host: cannot mknod a render node here (not root?): the tests on a dead node skip"
fi

header "zerocopy doctor ${doctor_args[*]}"
"$VENV/bin/zerocopy" doctor "${doctor_args[@]}"

header "pytest -m 'vastack or native' (the VA stack's tests and tests/native, on this system)"
t=$SECONDS
rc=0
"$VENV/bin/python" -m pytest -q -rfEs -p no:cacheprovider -m "vastack or native" tests || rc=$?
echo "gpu-host: pytest took $(took "$t"); all of it $(took "$t0")"
exit "$rc"
