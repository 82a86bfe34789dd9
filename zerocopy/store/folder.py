"""The storage folder's files, reached only under it (issue 36): a path an event's row names is relative to the
folder (`StorageFolder.relative`), and each is opened, measured and removed by walking its components from the
folder with `O_NOFOLLOW` (a `..`, an absolute path outside the folder or a symbolic link anywhere on the way is
`PathRefused`: never followed, never served, never removed). Everything made here is private whatever the
umask: folders 0700, files 0600 (`make_private_dirs`, `create_private`)."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

FILE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")  # a name of its own: no folder, no dot first
PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # (a planted FIFO never blocks the open)


class PathRefused(FileNotFoundError):
    """A path that is not a file of the storage folder: outside it, with `..`, or through a symbolic link."""


def make_private_dirs(path: str | Path) -> None:
    """`path` made with every missing parent, each 0700 whatever the umask (existing ones left as they are)."""
    path = Path(path)
    if path.is_dir():
        return
    if path.parent != path:
        make_private_dirs(path.parent)
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, PRIVATE_DIR)
        os.chmod(path, PRIVATE_DIR)  # (mkdir's mode goes through the umask)


def open_private_dir(path: str | Path) -> int:
    """A descriptor of the folder `path` (made 0700 if missing; its last component never a link)."""
    make_private_dirs(path)
    return os.open(path, _DIR)


def create_private(name: str, dir_fd: int) -> int:
    """A descriptor of the file `name` made new (0600) in the folder `dir_fd`: `O_CREAT|O_EXCL|O_NOFOLLOW`, so
    nothing that already has the name (a file, a planted link) is written through."""
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, PRIVATE_FILE,
                 dir_fd=dir_fd)
    os.fchmod(fd, PRIVATE_FILE)
    return fd


def make_private(fd: int, mode: int = PRIVATE_FILE) -> None:
    """The file or folder `fd` made `mode` if anyone but its owner may read it."""
    if os.fstat(fd).st_mode & 0o077:
        os.fchmod(fd, mode)


def make_private_folder(path: Path) -> None:
    """The folder made (0700), or made 0700 if others could read it (whoever opens it next says why it cannot)."""
    with contextlib.suppress(OSError):
        make_private_dirs(path)
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            make_private(fd, PRIVATE_DIR)
        finally:
            os.close(fd)


def is_temporary(name: str) -> bool:
    """A file being written, or left by a kill: a snapshot's `NAME.part`, a clip's `.NAME.zerocopy-PID-X.tmp`."""
    return name.endswith(".part") or (name.startswith(".") and ".zerocopy-" in name and name.endswith(".tmp"))


def _parts(rel: str) -> list[str]:
    parts = rel.split("/")
    if not rel or rel.startswith("/") or "\0" in rel or any(p in ("", ".", "..") for p in parts):
        raise PathRefused(f"{rel!r} is not a path inside the storage folder")
    return parts


class StorageFolder:
    """The folder `path` (its own name trusted, links and all) and the files under it."""

    def __init__(self, path: str | Path):
        self.path = Path(os.path.abspath(path))
        self.prefixes = tuple(dict.fromkeys(f"{p.rstrip('/')}/" for p in (str(self.path),
                                                                           os.path.realpath(self.path))))

    def relative(self, path: str | os.PathLike) -> str:
        """`path` as a row keeps it: relative to the folder (an absolute one must lie inside it, by its own name or
        by the folder's real one). Raises `PathRefused`."""
        given = os.fspath(path) if isinstance(path, str | os.PathLike) else None
        if not isinstance(given, str):
            raise PathRefused(f"{str(path)[:40]!r} is not a path")
        if given.startswith("/"):
            normal = os.path.normpath(given)
            inside = next((normal[len(p):] for p in self.prefixes if normal.startswith(p)), None)
            if inside is None:
                raise PathRefused(f"{given} is outside the storage folder {self.path}")
            given = inside
        _parts(given)
        return given

    def inside(self, paths: Iterable[str | os.PathLike]) -> Iterator[str]:
        """Each of `paths` (absolute, or relative to the working folder) that lies inside the folder, relative to it."""
        for path in paths:
            with contextlib.suppress(PathRefused):
                yield self.relative(os.path.abspath(path))

    @contextlib.contextmanager
    def _parent(self, rel: str) -> Iterator[tuple[int, str]]:
        """(a descriptor of the folder holding `rel`, its last name), each folder on the way opened with
        `O_NOFOLLOW`: a link is `PathRefused`."""
        *folders, name = _parts(self.relative(rel))
        fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        for folder in folders:
            fd = _step(fd, folder, rel)  # (closes the one before, even when it raises)
        try:
            yield fd, name
        finally:
            os.close(fd)

    def open(self, rel: str) -> int:
        """A read-only descriptor of the plain file `rel`. Raises `PathRefused` (a link, a special file, outside),
        `FileNotFoundError`."""
        with self._parent(rel) as (parent, name):
            try:
                fd = os.open(name, _FILE, dir_fd=parent)
            except OSError as e:
                _refuse_link(e, rel)
                raise
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise PathRefused(f"{rel} is not a plain file")
        return fd

    def size(self, rel: str) -> int:
        """Bytes of the plain file `rel` (0 if it is missing). Raises `PathRefused`."""
        try:
            return self._lstat(rel).st_size
        except FileNotFoundError as e:
            if isinstance(e, PathRefused):
                raise
            return 0

    def remove(self, rel: str) -> int:
        """The plain file `rel` removed (never what a link points at, nor the link); its bytes (0 if it was
        missing). Raises `PathRefused`, `OSError`."""
        with self._parent(rel) as (parent, name):
            try:
                found = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                return 0
            if not stat.S_ISREG(found.st_mode):
                raise PathRefused(f"{rel} is not a plain file (a link?): never removed")
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=parent)
                return found.st_size
        return 0

    def remove_each(self, paths: Iterable[str], refused: Callable[[PathRefused], None],
                    failed: Callable[[OSError], None]) -> int:
        """Each of `paths` removed as `remove` does; one refused told to `refused`, one that fails to `failed`; the
        bytes freed."""
        freed = 0
        for path in paths:
            try:
                freed += self.remove(path)
            except PathRefused as e:
                refused(e)
            except OSError as e:
                failed(e)
        return freed

    def _lstat(self, rel: str) -> os.stat_result:
        with self._parent(rel) as (parent, name):
            found = os.stat(name, dir_fd=parent, follow_symlinks=False)
        if not stat.S_ISREG(found.st_mode):
            raise PathRefused(f"{rel} is not a plain file")
        return found

    def walk(self, top: str) -> Iterator[tuple[str, os.stat_result]]:
        """(relative path, `lstat`) of every plain file under the folder `top` (relative), links never followed,
        each folder and file on the way made private (0700, 0600) if it was not. Nothing if `top` is missing."""
        try:
            with self._parent(top) as (parent, name):
                fd = _step(os.dup(parent), name, top)
        except (FileNotFoundError, NotADirectoryError):
            return
        yield from _walk(fd, top)


def _step(fd: int, folder: str, rel: str) -> int:
    """The folder `folder` in `fd` opened (`fd` closed), never through a link."""
    try:
        return os.open(folder, _DIR, dir_fd=fd)
    except OSError as e:
        _refuse_link(e, rel)
        raise
    finally:
        os.close(fd)


def _refuse_link(e: OSError, rel: str) -> None:
    if e.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENXIO):
        raise PathRefused(f"{rel} goes through a link or a special file: never followed") from None


def _walk(fd: int, rel: str) -> Iterator[tuple[str, os.stat_result]]:
    """(closes `fd`)"""
    try:
        make_private(fd, PRIVATE_DIR)
        with os.scandir(fd) as entries:
            found = [(e.name, e.stat(follow_symlinks=False)) for e in entries]
        for name, info in found:
            if stat.S_ISDIR(info.st_mode):
                with contextlib.suppress(OSError):
                    yield from _walk(os.open(name, _DIR, dir_fd=fd), f"{rel}/{name}")
            elif stat.S_ISREG(info.st_mode):
                if info.st_mode & 0o077:
                    with contextlib.suppress(OSError):
                        _tighten(name, fd)
                yield f"{rel}/{name}", info
    finally:
        os.close(fd)


def _tighten(name: str, dir_fd: int) -> None:
    fd = os.open(name, _FILE, dir_fd=dir_fd)
    try:
        make_private(fd)
    finally:
        os.close(fd)
