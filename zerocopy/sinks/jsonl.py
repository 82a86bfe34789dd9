"""JSON Lines: one complete line per decoded frame, flushed as it is written."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TextIO

from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame


class JsonlSink:
    def __init__(self, target: str, names: Sequence[str], with_source: bool = False):
        self._own = target != "-"
        self._f: TextIO = open(target, "w", encoding="utf-8") if self._own else sys.stdout  # noqa: SIM115
        self.names = list(names)
        self.with_source = with_source
        self.sources: dict[int, str] = {}
        self._gone = False

    def begin(self, source: str, rate: float, input: int = 0) -> None:
        self.sources[input] = source

    def write(self, frame: PreparedFrame, detections: Detections, input: int = 0) -> None:
        rec = {}
        if self.with_source:
            rec["source"] = self.sources.get(input, "")
            rec["input"] = input  # the input's place in the list: tells apart a source given twice
        rec.update(frame=frame.index, pts=None if frame.pts is None else round(frame.pts, 6),
                   width=frame.width, height=frame.height,
                   detections=detections.to_records(self.names or None))
        if self._gone:
            return
        try:
            self._f.write(json.dumps(rec, separators=(", ", ": ")) + "\n")
            self._f.flush()
        except BrokenPipeError:  # the reader went away (`| head`): stop writing, let the run end
            self._gone = True
            raise

    def end(self, input: int = 0) -> None:
        pass

    def close(self) -> None:
        if self._own:
            self._f.close()
