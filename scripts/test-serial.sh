#!/usr/bin/env bash
# The serial part of `make test` (tests/README.md, "Markers and tiers"): the tests that measure time or load, away
# from the parallel part's workers. Two runs side by side: the serve soak (`-m soak`, two minutes of one serve
# process, about a third of a core) and the other serial tests one after the other; the soak's output is printed
# when both are done. Both must pass. Usage: scripts/test-serial.sh PYTHON [PYTEST_ARGS...]
set -uo pipefail
python=$1; shift
log=$(mktemp)
soak=
# a background job ignores Ctrl-C: on any way out, stop it and what it started (serve, the broker), its own group
trap '[ -n "$soak" ] && kill -TERM -- "-$soak" 2>/dev/null; wait 2>/dev/null; rm -f "$log"' EXIT
trap 'exit 130' INT TERM
setsid "$python" -m pytest -q -rfEs -m soak -p no:cacheprovider "$@" >"$log" 2>&1 &
soak=$!
"$python" -m pytest -q -rfEs -m "serial and not soak" --durations=5 "$@"
rest=$?
wait "$soak"
soaked=$?
soak=
echo "--- the serve soak (-m soak), run beside them:"
cat "$log"
# a selection (PYTEST_ARGS="-k ...") may leave one of the two runs without tests (pytest's 5); not both
if [ "$#" -gt 0 ] && [ "$soaked" = 5 ] && [ "$rest" != 5 ]; then soaked=0; fi
if [ "$#" -gt 0 ] && [ "$rest" = 5 ] && [ "$soaked" = 0 ]; then rest=0; fi
[ "$rest" = 0 ] && [ "$soaked" = 0 ]
