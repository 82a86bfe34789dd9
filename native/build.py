#!/usr/bin/env python3
"""cffi build of the VA bridge (`_zerocopy_vabridge`) against one FFmpeg's headers and libraries.

    python native/build.py --out DIR [--include DIR ...] [--libdir DIR ...]

The zerocopy package calls `build()` itself (`python -m zerocopy.bridge build`), after choosing
the headers that match the FFmpeg PyAV links. Run by hand only to build against a given FFmpeg.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from cffi import FFI

HERE = Path(__file__).resolve().parent
MODULE = "_zerocopy_vabridge"


def _cdef() -> str:
    text = (HERE / "vabridge.h").read_text()
    body = text.split("#include <stdint.h>", 1)[1].rsplit("#endif", 1)[0]
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    return re.sub(r"#define (\w+) .*", r"#define \1 ...", body)  # cffi takes the values from the C side


def build(out: Path, include_dirs: list[str], library_dirs: list[str]) -> Path:
    """Compile the module into `out`; returns the path of the shared object."""
    ffi = FFI()
    ffi.cdef(_cdef())
    ffi.set_source(
        MODULE,
        '#include "vabridge.h"',
        sources=[str(HERE / "vabridge.c")],
        include_dirs=[str(HERE), *include_dirs],
        library_dirs=library_dirs,
        libraries=["avcodec", "avfilter", "avutil"],
        runtime_library_dirs=library_dirs,
        extra_compile_args=["-O2", "-Wall", "-Werror=implicit-function-declaration"],
    )
    out.mkdir(parents=True, exist_ok=True)
    return Path(ffi.compile(tmpdir=str(out), verbose=False))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--include", action="append", default=[])
    ap.add_argument("--libdir", action="append", default=[])
    args = ap.parse_args()
    print(build(args.out, args.include, args.libdir))


if __name__ == "__main__":
    main()
