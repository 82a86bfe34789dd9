"""Find the FFmpeg headers, build the native module with them, load it, and verify it.

The module is only used when it was compiled against the headers of the very FFmpeg that PyAV
has loaded, and links that same libavutil: struct offsets differ between FFmpeg versions, and a
second libavutil in one process would hand out objects the other copy cannot read.
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

from zerocopy.bridge.layout import LayoutError, filter_context_pointer, frame_pointer

PREFIX_ENV = "ZEROCOPY_FFMPEG_PREFIX"
NATIVE_DIR = Path(__file__).resolve().parents[2] / "native"
MODULE = "_zerocopy_vabridge"
_ERRORS = {-1: "not a VA-API frame", -2: "the frame has no hw_frames_ctx", -3: "the frame's device is not VA-API",
           -4: "out of memory"}


class BridgeUnavailable(RuntimeError):
    """The native bridge cannot be used here; the message says why, in one line."""


@dataclass(frozen=True)
class Headers:
    include_dirs: tuple[str, ...]
    library_dirs: tuple[str, ...]
    avutil: tuple[int, int, int]
    avfilter: tuple[int, int, int]
    origin: str

    def tag(self) -> str:
        sources = b"".join((NATIVE_DIR / n).read_bytes() for n in ("vabridge.c", "vabridge.h", "build.py"))
        digest = hashlib.sha256(sources + repr(self).encode()).hexdigest()[:10]
        return f"avutil{'.'.join(map(str, self.avutil))}-avfilter{'.'.join(map(str, self.avfilter))}-{digest}"


def _version(text: str) -> tuple[int, int, int]:
    parts = [int(p) for p in re.findall(r"\d+", text)[:3]]
    return tuple(parts + [0] * (3 - len(parts)))  # type: ignore[return-value]


def _pkg_config(*args: str, env: dict[str, str]) -> str:
    return subprocess.run(["pkg-config", *args], capture_output=True, text=True, check=True, env=env).stdout


def find_headers() -> Headers:
    """FFmpeg (libavutil, libavfilter) and libva headers: from $ZEROCOPY_FFMPEG_PREFIX, else pkg-config."""
    env = dict(os.environ)
    origin = "pkg-config"
    prefix = os.environ.get(PREFIX_ENV)
    if prefix:
        dirs = [f"{prefix}/{d}/pkgconfig" for d in ("lib", "lib64", "share", "lib/x86_64-linux-gnu")]
        env["PKG_CONFIG_PATH"] = ":".join(dirs + [env.get("PKG_CONFIG_PATH", "")]).rstrip(":")
        origin = f"${PREFIX_ENV}={prefix}"
    if shutil.which("pkg-config") is None:
        raise BridgeUnavailable("pkg-config is not installed, so no FFmpeg headers can be found")
    try:
        avutil = _version(_pkg_config("--modversion", "libavutil", env=env))
        avfilter = _version(_pkg_config("--modversion", "libavfilter", env=env))
        cflags = _pkg_config("--cflags-only-I", "libavutil", "libavfilter", "libva", env=env).split()
        libs = _pkg_config("--libs-only-L", "libavutil", "libavfilter", env=env).split()
        libdir = _pkg_config("--variable=libdir", "libavutil", env=env).strip()
        includedir = _pkg_config("--variable=includedir", "libavutil", env=env).strip()
    except subprocess.CalledProcessError as e:
        missing = (e.stderr or "").strip().splitlines()[:1]
        raise BridgeUnavailable(f"no FFmpeg/libva development headers via {origin} "
                                f"({missing[0] if missing else 'not found'})") from None
    includes = tuple(dict.fromkeys([f[2:] for f in cflags] + [includedir]))
    libdirs = tuple(dict.fromkeys([f[2:] for f in libs] + [libdir]))
    return Headers(includes, libdirs, avutil, avfilter, origin)


def build_dir() -> Path:
    from zerocopy.catalog.fetch import cache_dir

    return cache_dir() / "native"


def build(headers: Headers, out: Path | None = None) -> Path:
    """Compile the module against `headers` (once per headers + sources); returns its folder."""
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
        except Exception as e:  # compiler missing, header error…
            first = (str(e).strip().splitlines() or [type(e).__name__])[-1]
            raise BridgeUnavailable(f"building the native bridge failed: {first}") from None
    return out


def import_module(folder: Path):
    """Import the built module from `folder` (returns the cffi module: .ffi, .lib)."""
    so = next(iter(sorted(folder.glob(f"{MODULE}*.so"))), None)
    if so is None:
        raise BridgeUnavailable(f"the native bridge is not built in {folder}")
    loader = importlib.machinery.ExtensionFileLoader(MODULE, str(so))
    spec = importlib.util.spec_from_file_location(MODULE, so, loader=loader)
    assert spec
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def loaded_libavutil_files() -> set[str]:
    """Distinct libavutil files mapped into this process."""
    files = set()
    with open("/proc/self/maps", encoding="utf-8") as f:
        for line in f:
            path = line.split(maxsplit=5)[-1].strip()
            if re.search(r"/libavutil(?:-[^/]*)?\.so", path):
                files.add(os.path.realpath(path))
    return files


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
    for name, header, linked in (("libavutil", lib.zcva_header_avutil_version(), lib.zcva_linked_avutil_version()),
                                 ("libavfilter", lib.zcva_header_avfilter_version(),
                                  lib.zcva_linked_avfilter_version())):
        want = _int_version(pyav_versions[name])
        if header != want or linked != want:
            raise BridgeUnavailable(f"the native bridge was built for {name} {_show(header)} and links "
                                    f"{_show(linked)}, but PyAV loaded {_show(want)}")
    files = loaded_libavutil_files()
    if len(files) > 1:
        raise BridgeUnavailable(f"two copies of libavutil are loaded ({', '.join(sorted(files))})")


@lru_cache(maxsize=1)
def load_bridge() -> Bridge:
    """Build if needed, load and verify the bridge for the FFmpeg that PyAV links, or say why not."""
    import av

    pyav = {k: tuple(v) for k, v in av.library_versions.items()}
    headers = find_headers()
    for name, have in (("libavutil", headers.avutil), ("libavfilter", headers.avfilter)):
        if have != pyav[name]:
            raise BridgeUnavailable(
                f"the FFmpeg headers found ({name} {'.'.join(map(str, have))}, via {headers.origin}) are not "
                f"those of the FFmpeg PyAV links ({name} {'.'.join(map(str, pyav[name]))}): "
                f"set {PREFIX_ENV} to that FFmpeg's install prefix")
    module = import_module(build(headers))
    verify(module, pyav)
    bridge = Bridge(module)
    try:  # the layout of PyAV's objects, once, on a frame whose AVFrame is known
        frame_pointer(av.VideoFrame(16, 16, "yuv420p"))
    except LayoutError as e:
        raise BridgeUnavailable(str(e)) from None
    return bridge


def bridge_status() -> tuple[Bridge | None, str]:
    """(bridge, "ok") or (None, reason)."""
    try:
        return load_bridge(), "ok"
    except BridgeUnavailable as e:
        return None, str(e)
