"""Which FFmpeg libraries this process has mapped, and where: PyAV's own copy (PyPI's `av.libs/`), a
system's, or one installed with its headers in a prefix of its own (`make setup-gpu`'s build, a conda env)."""

from __future__ import annotations

import os
import re


def loaded_library_files(name: str) -> set[str]:
    """Distinct files of library `name` (e.g. "libavutil") mapped into this process, leaving out the
    private copies other wheels bundle (e.g. `opencv_python_headless.libs/libavcodec-<hash>.so`): those
    have names and symbols of their own, so they cannot be confused with PyAV's."""
    files = set()
    pattern = re.compile(rf"/{re.escape(name)}(?:-[^/]*)?\.so")
    with open("/proc/self/maps", encoding="utf-8") as f:
        for line in f:
            path = line.split(maxsplit=5)[-1].strip()
            if pattern.search(path):
                folder = os.path.basename(os.path.dirname(path))
                if folder.endswith(".libs") and folder != "av.libs":
                    continue
                files.add(os.path.realpath(path))
    return files


def pyav_bundles_ffmpeg() -> bool:
    """Whether PyAV runs on the FFmpeg copy its wheel bundles (`av.libs/`), which comes without headers."""
    import av  # noqa: F401  (maps PyAV's libraries)

    return any(os.path.basename(os.path.dirname(f)) == "av.libs" for f in loaded_library_files("libavutil"))


def loaded_libavutil_files() -> set[str]:
    return loaded_library_files("libavutil")


def pyav_pkgconfig_dir() -> str | None:
    """`<libdir>/pkgconfig` of the libavutil PyAV links, when it holds that FFmpeg's `libavutil.pc`: an FFmpeg
    installed with its headers in a prefix of its own (`make setup-gpu`'s build, a conda env) is found with no
    setting, as PyAV found it through its rpath. None for PyPI's wheels (`av.libs/` has no .pc files)."""
    import av  # noqa: F401  (maps PyAV's libraries)

    for path in sorted(loaded_libavutil_files()):
        candidate = os.path.join(os.path.dirname(path), "pkgconfig")
        if os.path.isfile(os.path.join(candidate, "libavutil.pc")):
            return candidate
    return None
