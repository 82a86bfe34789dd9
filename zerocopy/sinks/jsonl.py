"""JSON Lines: one complete line per decoded frame, flushed as it is written (into the file's temporary
until the run ends: sinks/files.py)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TextIO

from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame
from zerocopy.postprocess.maps import summary
from zerocopy.sinks.files import STDOUT, Staged


class JsonlSink:
    def __init__(self, target: str, names: Sequence[str], with_source: bool = False):
        self._staged = Staged(target) if target != STDOUT else None
        self._f: TextIO = self._staged.open_text() if self._staged else sys.stdout
        self._began = False  # an input began: the run produced this file (even with no frame)
        self.names = list(names)
        self.with_source = with_source
        self.sources: dict[int, str] = {}
        self._gone = False

    def begin(self, source: str, rate: float, input: int = 0) -> None:
        self._began = True
        self.sources[input] = source

    def write(self, frame: PreparedFrame, detections: Detections, input: int = 0) -> None:
        rec = {}
        if self.with_source:
            rec["source"] = self.sources.get(input, "")
            rec["input"] = input  # the input's place in the list: tells apart a source given twice
        rec.update(frame=frame.index, pts=None if frame.pts is None else round(frame.pts, 6),
                   width=frame.width, height=frame.height,
                   detections=detections.to_records(self.names or None))
        if frame.output is not None:  # an image-to-image model's map (`zerocopy process`), summed up
            rec["map"] = summary(frame.output)
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
        if self._staged is not None and not self._f.closed:
            self._f.close()
            self._staged.finish(keep=self._began)
