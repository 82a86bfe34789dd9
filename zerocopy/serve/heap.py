"""glibc's malloc held to the thresholds it starts with, for a service that runs for months (`zerocopy serve`).

glibc moves two thresholds as a program runs (mallopt(3), *M_MMAP_THRESHOLD*): each time a block it had mapped
on its own (128 KiB and more at first) is freed, the mmap threshold rises to that block's size (up to 32 MiB)
and the trim threshold to twice that. FFmpeg's MPEG-TS demuxer takes a 5 MB buffer at each opening (its seekback,
`probesize` long) and frees it at the closing: from a camera's first reconnection on, every block under 5 MB
(pictures, JPEGs, arrays) comes from the arenas (8 per core, one a thread), and each arena keeps up to 10 MB free
at its top instead of giving it back. In the soak (scripts/soak_serve.py) that was serve's RSS climbing by about
0.2 MiB/s while what it held stayed flat (glibc's `malloc_info`: the arenas' free space +28 MiB in 75 s, in use
unchanged). Setting the thresholds once stops them moving: a block of `MMAP_THRESHOLD` or more is mapped and given
back whole when freed, and an arena gives back what is free at its top past `TRIM_THRESHOLD`."""

from __future__ import annotations

import ctypes

M_TRIM_THRESHOLD = -1  # mallopt's parameters (malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = TRIM_THRESHOLD = 128 * 1024  # where glibc starts them (its defaults)


def _glibc() -> ctypes.CDLL | None:
    """The C library of this process if it is glibc (mallopt's parameters are glibc's), else None."""
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 (glibc's own symbol: musl and macOS have none)
        return libc
    except (OSError, AttributeError):
        return None


def pin_thresholds() -> bool:
    """Hold glibc's mmap and trim thresholds at `MMAP_THRESHOLD` and `TRIM_THRESHOLD` for the process's life (glibc
    no longer moves them once set); whether they were (False off glibc: nothing done)."""
    libc = _glibc()
    if libc is None:
        return False
    return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(libc.mallopt(M_TRIM_THRESHOLD,
                                                                                      TRIM_THRESHOLD))
