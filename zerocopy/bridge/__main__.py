"""`python -m zerocopy.bridge build|selftest`: used by `make setup` and by the native tests.

`build` exits 0 with a note when PyAV has no VA-API (PyPI's: nothing would use the bridge), 0 with a notice
when the bridge cannot be built here (no headers, or not those of PyAV's FFmpeg: the VA paths then say why
they refuse), and 1 when it should build and does not
(compiler or setuptools missing, compile error): that is a broken setup, and must not pass quietly.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from zerocopy.bridge.loader import (
    BridgeUnavailable,
    BuildFailed,
    NotNeeded,
    build,
    find_headers,
    import_module,
    load_bridge,
)
from zerocopy.bridge.selftest import run_selftest


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m zerocopy.bridge")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="build the bridge for the FFmpeg PyAV links (or, with --system, "
                       "for whatever FFmpeg pkg-config finds)")
    b.add_argument("--system", action="store_true")
    b.add_argument("--out", type=Path)
    s = sub.add_parser("selftest", help="run the self-test of a built module (prints JSON)")
    s.add_argument("folder", type=Path)
    args = ap.parse_args(argv)
    if args.cmd == "selftest":  # never imports PyAV: the module may link another FFmpeg
        try:
            module = import_module(args.folder)
        except BridgeUnavailable as e:
            print(f"native bridge: {e}", file=sys.stderr)
            return 1
        checks = run_selftest(module.ffi, module.lib)
        print(json.dumps([c.__dict__ for c in checks]))
        return 0 if all(c.ok for c in checks) else 1
    try:
        if args.system:
            print(build(find_headers(), args.out))
        else:
            load_bridge()
            print("native bridge: built and verified for the FFmpeg PyAV links")
    except BuildFailed as e:
        print(f"native bridge: {e}", file=sys.stderr)
        return 1
    except NotNeeded as e:  # PyPI's PyAV: an ordinary set-up, so a note on stdout, not a warning
        print(f"native bridge: {e}")
        return 0
    except BridgeUnavailable as e:
        print(f"native bridge: not built: {e}", file=sys.stderr)
        return 0 if not args.system else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
