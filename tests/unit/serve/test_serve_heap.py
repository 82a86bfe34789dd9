"""zerocopy.serve.heap: once pinned, glibc's mmap threshold stays where it starts, whatever large block is freed.

Each case runs in a fresh interpreter: in a test worker the arenas may hold free space from earlier tests' arrays,
from which glibc serves a block before it thinks of mapping one."""

from __future__ import annotations

import subprocess
import sys

import pytest

from zerocopy.serve import heap

# slow: an interpreter each (about 0.1 s)
pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    heap._glibc() is None,
    reason="this C library is not glibc: pin_thresholds does nothing there (mallopt's parameters are glibc's)")]

# a large block freed (FFmpeg's MPEG-TS seekback is 5 MB), then a block under it (a 4K picture) that a fresh
# interpreter's arenas have no room for: glibc maps it apart, or grows an arena for it; the answer is the block's
# chunk's IS_MMAPPED bit (the word before the block)
PROGRAM = """
import ctypes, sys
from zerocopy.serve import heap
pinned = heap.pin_thresholds() if sys.argv[1] == "pin" else None
c = ctypes.CDLL(None)
c.malloc.restype, c.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
c.free.argtypes = [ctypes.c_void_p]
c.free(c.malloc(30 << 20))
block = c.malloc(16 << 20)
print(pinned, bool(ctypes.c_size_t.from_address(block - ctypes.sizeof(ctypes.c_size_t)).value & 0x2))
"""


def mapped_apart(how: str) -> str:
    return subprocess.run([sys.executable, "-c", PROGRAM, how], capture_output=True, text=True, check=True,
                          timeout=60).stdout.strip()


def test_a_large_block_freed_leaves_the_next_large_one_mapped_apart_once_pinned():
    assert mapped_apart("pin") == "True True"  # given back whole when freed, never a hole in an arena


def test_unpinned_glibc_moves_its_threshold_past_a_large_block_freed():
    assert mapped_apart("as is") == "None False"  # what serve's arenas did: the soak's RSS climbing
