"""Every file a run writes, made safe in one place (docs/unattended.md, "Outputs").

- `check_writable`: an output that cannot be written is refused before any work.
- `claim`: the files a run will write (each option's file, `--output`'s per-input names, their
  temporaries) are checked against each other and against the inputs (through symlinks), and each is
  locked (an advisory `flock` on `.NAME.zerocopy.lock` beside it) for as long as the run lasts, so a
  second zerocopy writing the same file is refused instead of interleaving with the first. The lock file
  is opened with `O_NOFOLLOW` and must be a plain file of its own (`lstat`): a planted symbolic or hard link
  is refused, never written through.
- `Staged`: an output is written to `.NAME.zerocopy-PID-XXXXXX.tmp` beside it and renamed into place only
  when the run produced something: a run that fails first leaves the old result alone, and a killed run
  leaves the temporary (whole line by line for JSON Lines, playable up to its last fragment for video).
  The temporary is made new (`create_new`: `O_CREAT|O_EXCL|O_NOFOLLOW`): whatever already has its name is
  refused, never written through.
- `OutputError`: an output that cannot be written while the run goes (a full disk, an I/O error) stops the
  run with one line; none of its outputs is then renamed into place (`sinks.drive.discard`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TextIO, TypeVar

from zerocopy.errors import ZeroCopyError

STDOUT = "-"
_STDOUT_NAMES = ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")
# One name per process and run, so a restarted run (PID 1 again in a container) never truncates the
# temporaries a killed one left, which are its results.
_RUN = f"{os.getpid()}-{secrets.token_hex(3)}"


class OutputError(ZeroCopyError):
    """An output could not be written (a full disk, an I/O error, a name nothing can be created at): the run
    stops, removes its temporaries and renames none of its outputs into place (docs/unattended.md)."""


def output_error(option: str, given: str | Path, e: OSError) -> OutputError:
    """One line naming the output and why: `cannot write --output o.mp4: no space left on device`."""
    why = e.strerror or str(e) or type(e).__name__
    return OutputError(f"cannot write {option} {given}: {why[:1].lower()}{why[1:]}")


T = TypeVar("T")


def each_then_raise(items: Iterable[T], step: Callable[[T], object]) -> None:
    """`step` on every item, then the first `OutputError` any raised: one output that cannot be finished
    does not leave the others unfinished."""
    first: OutputError | None = None
    for item in items:
        try:
            step(item)
        except OutputError as e:
            first = first or e
    if first is not None:
        raise first


def stdout_alias(target: str | None) -> str | None:
    """`/dev/stdout` and its other names mean what `-` means: this process's stdout, shared with the
    shell (opening the name anew would truncate a file the shell redirected stdout to)."""
    return STDOUT if target in _STDOUT_NAMES else target


def check_writable(option: str, target: str | None) -> None:
    """Fail before any work if an output cannot be written ('-' is stdout)."""
    if not target or target == STDOUT:
        return
    path = Path(target)
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise ZeroCopyError(f"cannot write {option} {target}: it is a directory")
    if not folder.is_dir():
        raise ZeroCopyError(f"cannot write {option} {target}: no such directory {folder}")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ZeroCopyError(f"cannot write {option} {target}: permission denied")
    if str(target).startswith("/proc/") and not path.exists():
        raise ZeroCopyError(f"cannot write {option} {target}: no such file (nothing new can be made in /proc)")


def final_path(target: str | Path) -> Path:
    """Where an output lands: a symlink's target (the link stays a link), relative to nothing."""
    return Path(os.path.realpath(target))


def temporary(target: str | Path, pid: int | None = None) -> Path:
    """The name an output is written under until the run has produced it: `.NAME.zerocopy-PID-XXXXXX.tmp`
    (this process's; with `pid`, the glob pattern another process's would match)."""
    path = final_path(target)
    run = _RUN if pid is None else f"{pid}-*"
    return path.with_name(f".{path.name}.zerocopy-{run}.tmp")


def temporary_of(target: str | Path, pid: int) -> Path | None:
    """The temporary process `pid` writes `target` under, once it exists."""
    pattern = temporary(target, pid)
    return next(iter(sorted(pattern.parent.glob(pattern.name))), None)


def special(target: str | Path) -> bool:
    """A target that is not a regular file, judged by its name as given (a device, `/proc/…/fd/N`, a
    FIFO): written as it is, nothing to stage or lock."""
    name = str(target)
    return name.startswith(("/dev/", "/proc/")) or (os.path.exists(name) and not os.path.isfile(name))


def lock_name(target: str | Path) -> Path:
    path = final_path(target)
    return path.with_name(f".{path.name}.zerocopy.lock")


def create_new(path: str | Path, mode: int = 0o644) -> int:
    """A descriptor of a file made new at `path` for writing: `O_CREAT|O_EXCL|O_NOFOLLOW`, so nothing that
    already has the name (a file, a planted symbolic link, even a dangling one) is opened or written through.
    Anything there is an `OSError` saying so."""
    try:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except FileExistsError:
        raise FileExistsError(errno.EEXIST, f"{path} is already there (zerocopy makes its temporaries new: a link "
                                            "or a file it did not make is refused)") from None


def fd_name(fd: int, path: str | os.PathLike) -> str:
    """A name by which FFmpeg opens the very file `fd` holds (`/proc/self/fd/N`), or `path` where there is no /proc."""
    proc = f"/proc/self/fd/{fd}"
    return proc if os.path.exists(proc) else str(path)


class Staged:
    """One output written under its temporary name and renamed into place by `finish(keep=True)`. The
    temporary is made new (`create_new`); what is removed or renamed is only ever what this object made."""

    def __init__(self, target: str | Path):
        self.direct = special(target)  # a FIFO or a device is written as it is, by the name given
        self.path = Path(target) if self.direct else final_path(target)
        self.temp = self.path if self.direct else temporary(target)
        self._made = False
        self._held: int | None = None  # the temporary's descriptor, while FFmpeg writes it by `ffmpeg_name()`

    def _create(self) -> int:
        fd = create_new(self.temp)
        self._made = True
        return fd

    def open_text(self) -> TextIO:
        if self.direct:
            return open(self.temp, "w", encoding="utf-8")  # noqa: SIM115 (the sink closes it)
        return os.fdopen(self._create(), "w", encoding="utf-8")

    def open_binary(self) -> BinaryIO:
        """`open_text`'s binary twin (a `.npy`)."""
        if self.direct:
            return open(self.temp, "wb")  # noqa: SIM115 (the caller closes it)
        return os.fdopen(self._create(), "wb")

    def ffmpeg_name(self) -> str:
        """A name for FFmpeg to write the temporary by (FFmpeg opens files itself, following links, and PyAV only
        at the first packet): the temporary is made new here and held open until `finish`, and FFmpeg is given
        `/proc/self/fd/N` of it, the very file made, whatever happens to its name meanwhile (the name itself
        where there is no /proc)."""
        if self.direct:
            return str(self.temp)
        self._held = self._create()
        return fd_name(self._held, self.temp)

    def discard(self) -> None:
        """Remove the temporary (nothing of a direct target)."""
        self.finish(keep=False)

    def finish(self, keep: bool) -> None:
        """Rename the temporary into place (`keep`), or remove it: the old file, if any, stays."""
        if self._held is not None:
            os.close(self._held)
            self._held = None
        if self.direct or not self._made:
            return
        if keep:
            os.replace(self.temp, self.path)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.temp)
        self._made = False


def close_whole(sink) -> None:
    """Close a file sink on its own: `settle()` its files into their temporaries, then `commit()` them into
    place, or `discard()` them all if one cannot be finished (the `OutputError` is raised)."""
    try:
        sink.settle()
    except OutputError:
        sink.discard()
        raise
    sink.commit()


def stage_text(option: str, target: str | Path, text: str) -> Staged | None:
    """A whole file at once into its temporary, to be renamed into place by the caller (`finish`), so that
    readers see the old file or the new one; written at once to stdout (`-`), a device or a FIFO (None
    then). `OutputError` (nothing left behind) if it cannot be written."""
    if str(target) == STDOUT:
        sys.stdout.write(text)
        sys.stdout.flush()
        return None
    staged = Staged(target)
    try:
        with staged.open_text() as f:
            f.write(text)
    except BaseException as e:
        staged.discard()
        if isinstance(e, OSError) and not isinstance(e, BrokenPipeError):
            raise output_error(option, target, e) from None
        raise
    return None if staged.direct else staged


def write_text(target: str | Path, text: str, option: str = "") -> None:
    """A whole file at once, through its temporary: readers see the old file or the new one."""
    staged = stage_text(option or "to", target, text)
    if staged is not None:
        staged.finish(keep=True)


@dataclass(frozen=True)
class Target:
    """A file a run writes: the option that asked for it, as given, and the file itself (`--output`
    with several inputs writes one file per input)."""

    option: str
    given: str
    path: str


def _same(a: str | Path, b: str | Path) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _check(targets: Sequence[Target], inputs: Sequence[str]) -> None:
    local = [p for p in inputs if Path(p).is_file()]
    seen: list[Target] = []
    for t in targets:
        for other in seen:
            if _same(t.path, other.path):
                if other.option == t.option:  # two of --output's per-input names cannot meet, but say so
                    raise ZeroCopyError(f"cannot write {t.option} {t.given}: it would write {t.path} twice")
                raise ZeroCopyError(f"cannot write {t.option} {t.given}: {other.option} writes the same file")
        seen.append(t)
        for written in (t.path, temporary(t.path)):
            for source in local:
                if _same(written, source):
                    what = "it is" if written == t.given else f"it would write {written}, which is"
                    raise ZeroCopyError(f"cannot write {t.option} {t.given}: {what} an input of this run")


def _lock(t: Target) -> int:
    """An advisory lock on the output's lock file, held until the descriptor is closed. The file is
    removed at release; a lock taken on a file just removed is retried on the new one. Never through a
    link: the name is opened with `O_NOFOLLOW` and must be a plain file with no other name (a planted
    symbolic or hard link is refused: the run would write its PID into the file it points at)."""
    name = lock_name(t.path)
    while True:
        try:
            fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise ZeroCopyError(f"cannot write {t.option} {t.given}: its lock file {name} is a symbolic link "
                                    "(zerocopy never makes one): refused; remove it") from None
            raise ZeroCopyError(f"cannot write {t.option} {t.given}: {e.strerror or e}") from None
        held = os.fstat(fd)
        if held.st_nlink == 0:  # its holder removed it between our open and our look: open the new one
            os.close(fd)
            continue
        if not stat.S_ISREG(held.st_mode) or held.st_nlink != 1:
            os.close(fd)
            raise ZeroCopyError(f"cannot write {t.option} {t.given}: its lock file {name} is not a plain file of "
                                "its own (a link to another file?): refused; remove it")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(fd)
            if e.errno in (errno.EWOULDBLOCK, errno.EACCES):
                raise ZeroCopyError(f"cannot write {t.option} {t.given}: another zerocopy run is writing it") \
                    from None
            raise ZeroCopyError(f"cannot write {t.option} {t.given}: cannot lock it: {e.strerror or e}") from None
        try:
            if _same_inode(os.lstat(name), held):
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)  # the holder removed it between our open and our lock: lock the new one


def _same_inode(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _unlock(fd: int, t: Target) -> None:
    """Remove the lock file if it is still the one held (never what another took its name for), and release it."""
    name = lock_name(t.path)
    with contextlib.suppress(OSError):
        if _same_inode(os.lstat(name), os.fstat(fd)):
            os.unlink(name)
    os.close(fd)


@contextlib.contextmanager
def claim(targets: Sequence[Target], inputs: Sequence[str]) -> Iterator[None]:
    """Check every file the run will write against the others and the inputs, then hold a lock on
    each until the block ends. Raises `ZeroCopyError` (one line) before any work if one is refused."""
    targets = [t for t in targets if t.given and t.given != STDOUT and not special(t.given)]
    _check(targets, inputs)
    with contextlib.ExitStack() as held:
        for t in targets:
            fd = _lock(t)
            held.callback(_unlock, fd, t)
        yield
