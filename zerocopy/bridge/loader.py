"""Find the FFmpeg headers, build the native module with them, load it, and verify it.

The module is only used when it was compiled against the headers of the very FFmpeg that PyAV
has loaded, and links those same libraries: struct offsets differ between FFmpeg versions, and a
second libavutil or libavcodec in one process would hand out objects the other copy cannot read.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.machinery
import importlib.util
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from zerocopy.bridge.layout import LayoutError, codec_context_pointer, filter_context_pointer, frame_pointer
from zerocopy.bridge.libraries import (  # noqa: F401  (loaded_libavutil_files: imported from here by tests)
    loaded_libavutil_files,
    loaded_library_files,
    pyav_bundles_ffmpeg,
    pyav_pkgconfig_dir,
)
from zerocopy.catalog.fetch import cache_dir

PREFIX_ENV = "ZEROCOPY_FFMPEG_PREFIX"
NATIVE_DIR = Path(__file__).resolve().parents[2] / "native"
MODULE = "_zerocopy_vabridge"
_ERRORS = {-1: "not a VA-API frame", -2: "the frame has no hw_frames_ctx", -3: "the frame's device is not VA-API",
           -4: "out of memory",
           -5: "the decoder is already open (its device can only change before the first decode)",
           -6: "the decoder has no hardware device (it was not opened with a hwaccel)",
           -7: "the decoder's device is not VA-API", -8: "the device to share is not VA-API",
           -9: "the decoder has its own hw_frames_ctx, which would override the device",
           -10: "the region is empty or not inside the frame's picture", -11: "FFmpeg refused the frame"}
LIBRARIES = ("libavutil", "libavfilter", "libavcodec")


class BridgeUnavailable(RuntimeError):
    """The native bridge cannot be used here; the message says why, in one line."""


class BuildFailed(BridgeUnavailable):
    """Headers were found, but compiling or loading the module failed: a broken setup, not a missing one."""


class NotNeeded(BridgeUnavailable):
    """PyAV has no VA-API, so no path could use the bridge: nothing is wrong (the VA paths say why they refuse)."""


@dataclass(frozen=True, kw_only=True)
class Headers:
    include_dirs: tuple[str, ...]
    library_dirs: tuple[str, ...]
    avutil: tuple[int, int, int]
    avfilter: tuple[int, int, int]
    avcodec: tuple[int, int, int]
    origin: str

    def version(self, library: str) -> tuple[int, int, int]:
        return getattr(self, library.removeprefix("lib"))

    def tag(self) -> str:
        sources = b"".join((NATIVE_DIR / n).read_bytes() for n in ("vabridge.c", "vabridge.h", "build.py"))
        digest = hashlib.sha256(sources + repr(self).encode()).hexdigest()[:10]
        return "-".join(f"{n[3:]}{'.'.join(map(str, self.version(n)))}" for n in LIBRARIES) + f"-{digest}"


def _version(text: str) -> tuple[int, int, int]:
    parts = [int(p) for p in re.findall(r"\d+", text)[:3]]
    return tuple(parts + [0] * (3 - len(parts)))  # type: ignore[return-value]


def _pkg_config(*args: str, env: dict[str, str]) -> str:
    return subprocess.run(["pkg-config", *args], capture_output=True, text=True, check=True, env=env).stdout


def find_headers(pkgconfig_dir: str | None = None) -> Headers:
    """FFmpeg (libavutil, libavfilter, libavcodec) and libva headers: from $ZEROCOPY_FFMPEG_PREFIX, else from
    the .pc files in `pkgconfig_dir` (see `pyav_pkgconfig_dir`), else pkg-config's own search path."""
    env = dict(os.environ)
    origin = "pkg-config"
    prefix = os.environ.get(PREFIX_ENV)
    if prefix:
        dirs = [f"{prefix}/{d}/pkgconfig" for d in ("lib", "lib64", "share", "lib/x86_64-linux-gnu")]
        env["PKG_CONFIG_PATH"] = ":".join(dirs + [env.get("PKG_CONFIG_PATH", "")]).rstrip(":")
        origin = f"${PREFIX_ENV}={prefix}"
    elif pkgconfig_dir:
        env["PKG_CONFIG_PATH"] = ":".join([pkgconfig_dir, env.get("PKG_CONFIG_PATH", "")]).rstrip(":")
        origin = f"pkg-config beside PyAV's FFmpeg ({pkgconfig_dir})"
    if shutil.which("pkg-config") is None:
        raise BridgeUnavailable("pkg-config is not installed, so no FFmpeg headers can be found")
    try:
        versions = {n: _version(_pkg_config("--modversion", n, env=env)) for n in LIBRARIES}
        cflags = _pkg_config("--cflags-only-I", *LIBRARIES, "libva", env=env).split()
        libs = _pkg_config("--libs-only-L", *LIBRARIES, env=env).split()
        libdir = _pkg_config("--variable=libdir", "libavutil", env=env).strip()
        includedir = _pkg_config("--variable=includedir", "libavutil", env=env).strip()
    except subprocess.CalledProcessError as e:
        missing = (e.stderr or "").strip().splitlines()[:1]
        raise BridgeUnavailable(f"no FFmpeg/libva development headers via {origin} "
                                f"({missing[0] if missing else 'not found'})") from None
    includes = tuple(dict.fromkeys([f[2:] for f in cflags] + [includedir]))
    libdirs = tuple(dict.fromkeys([f[2:] for f in libs] + [libdir]))
    return Headers(include_dirs=includes, library_dirs=libdirs, avutil=versions["libavutil"],
                   avfilter=versions["libavfilter"], avcodec=versions["libavcodec"], origin=origin)


def build_dir() -> Path:
    return cache_dir() / "native"


def build(headers: Headers, out: Path | None = None) -> Path:
    """Compile the module against `headers` (once per headers + sources); returns its folder.

    A failed compile raises BuildFailed: the headers are there, so the setup is broken, not absent."""
    if not (NATIVE_DIR / "vabridge.c").is_file():
        raise BridgeUnavailable(f"the native sources are not at {NATIVE_DIR} (install from a source checkout)")
    out = out or build_dir() / headers.tag()
    if not list(out.glob(f"{MODULE}*.so")):
        spec = importlib.util.spec_from_file_location("zerocopy_native_build", NATIVE_DIR / "build.py")
        assert spec and spec.loader
        builder = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(builder)
        try:
            builder.build(out, list(headers.include_dirs), list(headers.library_dirs))
        except Exception as e:  # compiler or setuptools missing, header error, unwritable folder…
            last = (str(e).strip().splitlines() or [type(e).__name__])[-1]
            raise BuildFailed(f"build failed in {out}: {last}") from None
    return out


def import_module(folder: Path):
    """Import the built module from `folder` (returns the cffi module: .ffi, .lib)."""
    so = next(iter(sorted(folder.glob(f"{MODULE}*.so"))), None)
    if so is None:
        raise BridgeUnavailable(f"the native bridge is not built in {folder}")
    loader = importlib.machinery.ExtensionFileLoader(MODULE, str(so))
    spec = importlib.util.spec_from_file_location(MODULE, so, loader=loader)
    assert spec
    try:
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    except ImportError as e:  # e.g. a library it links is gone: a broken build
        raise BuildFailed(f"the build in {folder} cannot be loaded: {e}") from None
    return module


def _int_version(v: tuple[int, int, int]) -> int:
    return (v[0] << 16) | (v[1] << 8) | v[2]


def _show(v: int) -> str:
    return f"{v >> 16}.{(v >> 8) & 0xFF}.{v & 0xFF}"


class Bridge:
    """The verified native module, with PyAV-facing methods."""

    def __init__(self, module):
        self.ffi, self.lib = module.ffi, module.lib
        self._vaapi = self.lib.zcva_pix_fmt_vaapi()

    def _frame(self, frame):
        ptr = frame_pointer(frame, matches=lambda p, w, h: bool(
            self.lib.zcva_frame_matches(self.ffi.cast("AVFrame *", p), w, h, self._vaapi)))
        return self.ffi.cast("AVFrame *", ptr)

    def _check(self, rc: int, what: str) -> None:
        if rc != 0:
            raise BridgeUnavailable(f"{what}: {_ERRORS.get(rc, f'FFmpeg error {rc}')}")

    def surface_id(self, frame) -> int:
        out = self.ffi.new("uint32_t *")
        self._check(self.lib.zcva_surface_id(self._frame(frame), out), "VASurfaceID")
        return int(out[0])

    def display(self, frame) -> int:
        out = self.ffi.new("void **")
        self._check(self.lib.zcva_display(self._frame(frame), out), "VADisplay")
        return int(self.ffi.cast("uintptr_t", out[0]))

    def display_capsule(self, frame):
        """The frame's VADisplay as the PyCapsule `openvino.VAContext` takes."""
        return make_capsule(self.display(frame))

    def attach_hw_frames(self, buffersrc, frame) -> None:
        ctx = self.ffi.cast("AVFilterContext *", filter_context_pointer(buffersrc))
        self._check(self.lib.zcva_attach_hw_frames(ctx, self._frame(frame)), "attach hw_frames_ctx")

    def push_region(self, buffersrc, frame, crop_fields: tuple[int, int, int, int]) -> None:
        """A new reference to `frame` whose crop fields (left, top, right, bottom, added to its own) leave
        the region, into the buffer source (which owns it); `frame` itself is not touched."""
        ctx = self.ffi.cast("AVFilterContext *", filter_context_pointer(buffersrc))
        averror, text = self.ffi.new("int *"), self.ffi.new("char[128]")
        rc = self.lib.zcva_buffersrc_push_region(ctx, self._frame(frame), *crop_fields, averror)
        if rc == -11:  # its AVERROR comes in averror
            self.lib.zcva_error_text(averror[0], text, 128)
        self._check(rc, "push a region" + (f" ({self.ffi.string(text).decode(errors='replace')})" if rc == -11 else ""))

    def crop_fields(self, frame) -> tuple[int, int, int, int]:
        out = self.ffi.new("uint64_t[4]")
        self.lib.zcva_frame_crop(self._frame(frame), out)
        return int(out[0]), int(out[1]), int(out[2]), int(out[3])

    def frames_context_id(self, frame) -> int:
        """Which frames context (decoder's surface pool) a VA-API frame comes from."""
        out = self.ffi.new("uintptr_t *")
        self._check(self.lib.zcva_frames_context_id(self._frame(frame), out), "frames context")
        return int(out[0])

    def codec_context(self, cc):
        """The validated `AVCodecContext*` behind a PyAV CodecContext (as a cffi pointer)."""
        ptr = codec_context_pointer(cc, matches=lambda p, codec_id, w, h: bool(
            self.lib.zcva_codec_matches(self.ffi.cast("AVCodecContext *", p), codec_id, w, h)))
        return self.ffi.cast("AVCodecContext *", ptr)

    def device_of(self, frame) -> Device:
        """The VA device the frame was decoded on, held until the Device is closed: decoders of
        later inputs can then decode on it (one VADisplay, so one OpenVINO remote context, per run)."""
        out = self.ffi.new("AVBufferRef **")
        self._check(self.lib.zcva_device_ref(self._frame(frame), out), "VA device")
        return Device(self, out[0])

    def use_device(self, codec_context, device: Device) -> None:
        """Make a PyAV decoder opened with a VA-API hwaccel decode on `device`. Only before its first
        decode: PyAV opens the codec (avcodec_open2) then, and FFmpeg fixes hw_device_ctx from there."""
        ctx = self.codec_context(codec_context)
        self._check(self.lib.zcva_codec_use_device(ctx, device.ref), "share the VA device")


class Device:
    """One reference to a VA-API AVHWDeviceContext, released exactly once: by `close()` (idempotent)
    or, failing that, when garbage-collected. While it is held the device's VADisplay stays open."""

    def __init__(self, bridge: Bridge, ref):
        self._bridge = bridge
        self._ref = bridge.ffi.gc(ref, bridge.lib.zcva_device_unref)

    @property
    def ref(self):
        if self._ref is None:
            raise BridgeUnavailable("the VA device reference was closed")
        return self._ref

    @property
    def closed(self) -> bool:
        return self._ref is None

    def display(self) -> int:
        out = self._bridge.ffi.new("void **")
        self._bridge._check(self._bridge.lib.zcva_device_display(self.ref, out), "VADisplay")
        return int(self._bridge.ffi.cast("uintptr_t", out[0]))

    def display_capsule(self):
        """The device's VADisplay as the PyCapsule `openvino.VAContext` takes."""
        return make_capsule(self.display())

    def close(self) -> None:
        ref, self._ref = self._ref, None
        if ref is not None:
            self._bridge.ffi.release(ref)  # runs the gc destructor now, and never again

    def __enter__(self) -> Device:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def make_capsule(pointer: int):
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    if not pointer:
        raise BridgeUnavailable("the VADisplay is NULL")
    return new(pointer, None, None)


def verify(module, pyav_versions: dict[str, tuple[int, int, int]]) -> None:
    """Refuse a module whose headers or linked libraries are not the FFmpeg PyAV loaded."""
    lib = module.lib
    for name in LIBRARIES:
        short = name[3:]
        header = getattr(lib, f"zcva_header_{short}_version")()
        linked = getattr(lib, f"zcva_linked_{short}_version")()
        want = _int_version(pyav_versions[name])
        if header != want or linked != want:
            raise BridgeUnavailable(f"the native bridge was built for {name} {_show(header)} and links "
                                    f"{_show(linked)}, but PyAV loaded {_show(want)}")
    for name in ("libavutil", "libavcodec"):  # the two whose objects cross between PyAV and the bridge
        files = loaded_library_files(name)
        if len(files) > 1:
            raise BridgeUnavailable(f"two copies of {name} are loaded ({', '.join(sorted(files))})")


@lru_cache(maxsize=1)
def load_bridge() -> Bridge:
    """Build if needed, load and verify the bridge for the FFmpeg that PyAV links, or say why not."""
    import av
    import av.codec.hwaccel

    pyav = {k: tuple(v) for k, v in av.library_versions.items()}
    # PyPI's wheels ship FFmpeg without headers and without VA-API: nothing could use a bridge next to them
    pypi = pyav_bundles_ffmpeg()
    not_needed = NotNeeded("not needed with PyPI's PyAV (no VA-API; `make setup-gpu` builds both)")
    try:
        headers = find_headers(pyav_pkgconfig_dir())
    except BridgeUnavailable:
        if pypi and "vaapi" not in av.codec.hwaccel.hwdevices_available():
            raise not_needed from None
        raise
    for name in LIBRARIES:
        have = headers.version(name)
        if have != pyav[name]:
            mismatch = (f"the FFmpeg headers found ({name} {'.'.join(map(str, have))}, via {headers.origin}) are "
                        f"not those of the FFmpeg PyAV links ({name} {'.'.join(map(str, pyav[name]))})")
            if pypi:  # no prefix would help
                if "vaapi" not in av.codec.hwaccel.hwdevices_available():
                    raise not_needed
                raise BridgeUnavailable(f"{mismatch}, and PyPI's PyAV bundles its FFmpeg without headers "
                                        "(make setup-gpu builds PyAV against an FFmpeg with its headers)")
            raise BridgeUnavailable(f"{mismatch}: set {PREFIX_ENV} to that FFmpeg's install prefix")
    module = import_module(build(headers))
    verify(module, pyav)
    bridge = Bridge(module)
    try:  # the layout of PyAV's objects, once, on objects whose FFmpeg side is known
        frame_pointer(av.VideoFrame(16, 16, "yuv420p"))
        bridge.codec_context(av.CodecContext.create("rawvideo", "r"))
    except LayoutError as e:
        raise BridgeUnavailable(str(e)) from None
    return bridge


def bridge_status() -> tuple[Bridge | None, str]:
    """(bridge, "ok") or (None, reason)."""
    try:
        return load_bridge(), "ok"
    except BridgeUnavailable as e:
        return None, str(e)
