"""Pointers behind PyAV's Cython objects, validated before they are trusted.

PyAV exposes no `AVFrame*`. In the Cython object layout `Frame.ptr` and `CodecContext.ptr` follow
PyObject_HEAD and the vtable pointer (both classes have cdef methods: offset 24 on 64-bit CPython)
and `FilterContext.ptr` follows PyObject_HEAD (offset 16). Those offsets are checked against fields
whose place is the same in every FFmpeg version: `AVFrame.data[0]`/`linesize[0]` (offsets 0 and
64) against PyAV's plane of a software frame, `AVFilterContext.av_class->class_name` and `.name`
against the filter's own name, and `AVCodecContext.av_class->class_name`. Reads go through
/proc/self/mem, so a wrong guess is an error, not a crash.
"""

from __future__ import annotations

import os
import struct
import sys
from collections.abc import Callable

FRAME_PTR_OFFSET = 24
FILTER_CTX_PTR_OFFSET = 16
CODEC_CTX_PTR_OFFSET = 24


class LayoutError(RuntimeError):
    """A PyAV object does not have the layout the bridge expects."""


_mem_fd: int | None = None


def read_memory(address: int, size: int) -> bytes:
    """Read this process's memory; an unmapped address raises LayoutError instead of crashing."""
    global _mem_fd
    if _mem_fd is None:
        _mem_fd = os.open("/proc/self/mem", os.O_RDONLY | os.O_CLOEXEC)
    try:
        data = os.pread(_mem_fd, size, address)
    except (OSError, OverflowError) as e:
        raise LayoutError(f"address {address:#x} is not readable") from e
    if len(data) != size:
        raise LayoutError(f"short read at {address:#x}")
    return data


def read_pointer(address: int) -> int:
    return struct.unpack("<Q", read_memory(address, 8))[0]


def read_cstring(address: int, limit: int = 64) -> str:
    raw = read_memory(address, limit)
    return raw.split(b"\0", 1)[0].decode("ascii", "replace")


def _check_platform() -> None:
    if sys.maxsize <= 2**32 or sys.byteorder != "little" or not os.path.exists("/proc/self/mem"):
        raise LayoutError("the bridge supports 64-bit little-endian Linux only")


def frame_pointer(frame, offset: int = FRAME_PTR_OFFSET,
                  matches: Callable[[int, int, int], bool] | None = None) -> int:
    """The `AVFrame*` behind an `av.VideoFrame`, validated.

    A software frame is checked through its first plane; a hardware frame has no planes, so the
    caller passes `matches(ptr, width, height)` (the native bridge's header-exact check).
    """
    import av

    _check_platform()
    if not isinstance(frame, av.VideoFrame):
        raise LayoutError(f"expected an av.VideoFrame, got {type(frame).__name__}")
    ptr = read_pointer(id(frame) + offset)
    if ptr == 0:
        raise LayoutError("the frame holds no AVFrame")
    planes = frame.planes
    if planes:
        data0 = read_pointer(ptr)
        (linesize0,) = struct.unpack("<i", read_memory(ptr + 64, 4))
        if data0 != planes[0].buffer_ptr or linesize0 != planes[0].line_size:
            raise LayoutError(f"offset {offset} of av.VideoFrame does not hold its AVFrame (PyAV layout changed?)")
        return ptr
    if matches is None:
        raise LayoutError("a hardware frame can only be validated by the native bridge")
    if not matches(ptr, frame.width, frame.height):
        raise LayoutError(f"offset {offset} of av.VideoFrame does not hold its AVFrame (size/format differ)")
    return ptr


def _classed_pointer(obj, cls, offset: int, struct: str, av_class: str) -> tuple[int, str]:
    """The pointer at `offset` of a PyAV object, to a struct whose first field is an AVClass pointer:
    that class's name must be `av_class`. Returns (pointer, the class name read)."""
    _check_platform()
    if not isinstance(obj, cls):
        raise LayoutError(f"expected an {cls.__module__}.{cls.__name__}, got {type(obj).__name__}")
    ptr = read_pointer(id(obj) + offset)
    if ptr == 0:
        raise LayoutError(f"the {cls.__name__} holds no {struct}")
    try:
        klass = read_cstring(read_pointer(read_pointer(ptr)))
    except LayoutError as e:
        raise LayoutError(f"offset {offset} of {cls.__name__} does not hold an {struct} ({e})") from None
    if klass != av_class:
        raise LayoutError(f"offset {offset} of {cls.__name__} does not hold an {struct} (class {klass!r})")
    return ptr, klass


def filter_context_pointer(ctx, offset: int = FILTER_CTX_PTR_OFFSET) -> int:
    """The `AVFilterContext*` behind a PyAV `FilterContext`, validated by its class and name."""
    from av.filter.context import FilterContext

    ptr, _ = _classed_pointer(ctx, FilterContext, offset, "AVFilterContext", "AVFilter")
    try:
        name = read_cstring(read_pointer(ptr + 16))
    except LayoutError as e:
        raise LayoutError(f"offset {offset} of FilterContext does not hold an AVFilterContext ({e})") from None
    if name != ctx.name:
        raise LayoutError(f"offset {offset} of FilterContext does not hold an AVFilterContext (name {name!r})")
    return ptr


def codec_context_pointer(cc, offset: int = CODEC_CTX_PTR_OFFSET,
                          matches: Callable[[int, int, int, int], bool] | None = None) -> int:
    """The `AVCodecContext*` behind a PyAV `CodecContext`, validated.

    Its av_class must name "AVCodecContext" (read safely); `matches(ptr, codec_id, width, height)`,
    the native bridge's header-exact check, then confirms it is this context (-1: not a video one).
    """
    from av.codec.context import CodecContext

    ptr, _ = _classed_pointer(cc, CodecContext, offset, "AVCodecContext", "AVCodecContext")
    if matches is not None:
        video = cc.type == "video"
        if not matches(ptr, cc.codec.id, cc.width if video else -1, cc.height if video else -1):
            raise LayoutError(f"offset {offset} of CodecContext does not hold its AVCodecContext "
                              f"(codec, size or class differ)")
    return ptr
