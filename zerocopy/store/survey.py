"""The storage folder surveyed at start, before anything writes (`store.storage`): in the folders its writers fill
(`SURVEYED`), the temporaries a kill left are removed, and the files no row names (a database moved aside, a kill
between a file and its row) are listed (`Unnamed`, oldest first) for retention to count and remove past the limits.
Every folder and file on the way is made private."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from zerocopy.store.folder import StorageFolder, is_temporary

SURVEYED = ("snapshots", "clips", "recordings")  # the folders its writers fill (the rest of the folder is left alone)
KEPT = (".jpg", ".mp4")  # the files they keep (a file of another kind there is not theirs: never counted nor removed)


class Unnamed(NamedTuple):
    """A file no row names."""

    mtime: float
    path: str  # relative to the folder
    bytes: int


def survey(files: StorageFolder, named: set[str] | None, say: Callable[[str], None], folder: Path) -> list[Unnamed]:
    """The temporaries removed (one that cannot be is counted as unnamed) and the files `named` does not name (None:
    the rows could not be read; every file is left as it is), oldest first; each said in one line."""
    unnamed: list[Unnamed] = []
    removed = [0, 0]
    for top in SURVEYED:
        for rel, info in files.walk(top):
            name = rel.rsplit("/", 1)[-1]
            if is_temporary(name):
                with contextlib.suppress(OSError):
                    removed[1] += files.remove(rel)
                    removed[0] += 1
                    continue
            elif named is None or rel in named or not name.endswith(KEPT):
                continue
            unnamed.append(Unnamed(info.st_mtime, rel, info.st_size))
    unnamed.sort()
    if removed[0]:
        say(f"storage {folder}: {removed[0]} temporary files left by an earlier run removed "
            f"({removed[1] / 1e6:.1f} MB)")
    if unnamed:
        say(f"storage {folder}: {len(unnamed)} files no event names ({sum(u.bytes for u in unnamed) / 1e6:.1f} MB: "
            "a database moved aside, or a kill before their event was written): counted in max_gb, removed oldest "
            "first past the limits")
    return unnamed
