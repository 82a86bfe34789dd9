"""JSON Lines: one complete line per decoded frame (`--json`) or per object event (`--events`), flushed as
it is written (into the file's temporary until the run ends: sinks/files.py)."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame
from zerocopy.postprocess.maps import summary
from zerocopy.sinks import NullSink
from zerocopy.sinks.files import STDOUT, Staged, close_whole, output_error


class Lines:
    """A JSON Lines file (or stdout, `-`), kept at the end only if the run produced it (`produced()`).

    Closed in two steps, as every file sink is (sinks/drive.py): `settle()` finishes the temporary,
    then `commit()` renames it into place, or `discard()` removes it. An output that cannot be written
    raises `OutputError` naming `option`."""

    def __init__(self, target: str, option: str = "--json"):
        self.target, self.option = target, option
        self._staged = Staged(target) if target != STDOUT else None
        try:
            self._f: TextIO = self._staged.open_text() if self._staged else sys.stdout
        except OSError as e:
            raise output_error(option, target, e) from None
        self._began = False  # an input began: the run produced this file (even with no line)
        self._gone = False

    def produced(self) -> None:
        self._began = True

    def write(self, rec: dict[str, Any]) -> None:
        if self._gone:
            return
        try:
            self._f.write(json.dumps(rec, separators=(", ", ": ")) + "\n")
            self._f.flush()
        except BrokenPipeError:  # the reader went away (`| head`): stop writing, let the run end
            self._gone = True
            raise
        except OSError as e:  # a full disk, an I/O error: the run stops
            self._gone = True
            raise output_error(self.option, self.target, e) from None

    def settle(self) -> None:
        """The file complete in its temporary (nothing renamed yet)."""
        if self._staged is not None and not self._f.closed:
            try:
                self._f.close()
            except OSError as e:
                raise output_error(self.option, self.target, e) from None

    def commit(self) -> None:
        if self._staged is not None:
            self._staged.finish(keep=self._began)

    def discard(self) -> None:
        if self._staged is not None:
            with contextlib.suppress(OSError):
                self._f.close()
            self._staged.discard()

    def close(self) -> None:
        close_whole(self)


class _LinesSink(NullSink):
    """A sink writing one `Lines` file: closed (or settled, committed, discarded) with it."""

    _lines: Lines

    def close(self) -> None:
        self._lines.close()

    def settle(self) -> None:
        self._lines.settle()

    def commit(self) -> None:
        self._lines.commit()

    def discard(self) -> None:
        self._lines.discard()


class JsonlSink(_LinesSink):
    def __init__(self, target: str, names: Sequence[str], with_source: bool = False, option: str = "--json"):
        self._lines = Lines(target, option)
        self.names = list(names)
        self.with_source = with_source
        self.sources: dict[int, str] = {}

    def begin(self, source: str, rate: float, input: int = 0) -> None:
        self._lines.produced()
        self.sources[input] = source

    def write(self, frame: PreparedFrame, detections: Detections, input: int = 0) -> None:
        rec = {}
        if self.with_source:
            rec["source"] = self.sources.get(input, "")
            rec["input"] = input  # the input's place in the list: tells apart a source given twice
        rec.update(frame=frame.index, pts=None if frame.pts is None else round(frame.pts, 6),
                   width=frame.width, height=frame.height,
                   detections=detections.to_records(self.names or None))
        if not frame.inferred:  # --detect-fps left it out: its boxes (if any) are the tracks' predictions
            rec["inferred"] = False
        if frame.output is not None:  # an image-to-image model's map (`zerocopy process`), summed up
            rec["map"] = summary(frame.output)
        self._lines.write(rec)

    def end(self, input: int = 0) -> None:
        pass


class EventsSink(_LinesSink):
    """`--events FILE`: one JSON line per event (a record that is `logged`, `stages.records`: the tracked objects'
    `new`/`update`/`loiter`/`end`, line crossings), as it happens; states (counts, motion) and files are not events."""

    def __init__(self, target: str, option: str = "--events"):
        self._lines = Lines(target, option)
        self.written = 0

    def begin(self, source: str, rate: float, input: int = 0) -> None:
        self._lines.produced()

    def on_events(self, events: Sequence[Any], input: int = 0) -> None:
        for event in events:
            if event.logged:
                self._lines.write(event.to_record())
                self.written += 1
