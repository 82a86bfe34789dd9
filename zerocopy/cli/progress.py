"""Progress of a run on stderr: a bar on a terminal (tqdm), else a line now and then (a log file, the journal)."""

from __future__ import annotations

import os
import sys
import time

from tqdm import tqdm

from zerocopy.redaction import redact
from zerocopy.sinks.drive import Progress


class ProgressLines:
    """Progress where stderr is no terminal: a line every `every` seconds per input, none for a shorter run."""

    def __init__(self, source: str, total: int | None, every: float = 30.0):
        self.name, self.total, self.every = redact(source), total, every
        self.frames, self.start = 0, time.monotonic()
        self.next = self.start + every

    def update(self, n: int = 1) -> None:
        self.frames += n
        now = time.monotonic()
        if now >= self.next:
            self.next = now + self.every
            of = f" of {self.total}" if self.total else ""
            print(f"zerocopy: {self.name}: {self.frames}{of} frames, {self.frames / (now - self.start):.1f} frames/s",
                  file=sys.stderr, flush=True)

    def close(self) -> None:
        pass


def progress_factory(quiet: bool) -> Progress | None:
    """What the sink driver makes a progress display with, per input (None: `--quiet`)."""
    if quiet:
        return None
    if not sys.stderr.isatty():
        return lambda source, total, position=0: ProgressLines(source, total)
    def make(source: str, total: int | None, position: int = 0):
        return tqdm(total=total, desc=os.path.basename(source)[:30], unit="frame", leave=False,
                    file=sys.stderr, dynamic_ncols=True, position=position)
    return make
