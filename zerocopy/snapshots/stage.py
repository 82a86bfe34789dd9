"""Which picture is each tracked object's snapshot: the frame where its score was best. The stage copies that
picture out of its frame (a plain copy of the planes, about half a millisecond at 640x360; only when the
score rose by `BETTER`, so at most 1 / `BETTER` copies per object), and hands it to its input's `SnapshotWriter`
when the object ends, and while it lasts at most every `interval` seconds when a better one was found. Events of an
object with a snapshot say so (`has_snapshot`).

The picture: the one kept for drawing (`PreparedFrame.picture`, serve keeps it), else the decoded frame the stage
asks the path to keep (`crops`: `PreparedFrame.source`). On the VA paths without a kept picture that frame is a VA-API
surface: the chosen frame alone is downloaded (`resize.vaapi.SurfaceDownload`, one per input, made on its first VA
frame), once for all the objects whose score rose on it. A picture that cannot be had (a download that failed, a GPU
frame of another kind) gives no picture for the objects that rose on that frame (each keeps the one it had, and
none is asked for again for `RETRY_S`), said once per input; the run goes on."""

from __future__ import annotations

import dataclasses
import logging
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import av
import numpy as np

from zerocopy.bridge import load_bridge
from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame
from zerocopy.publish.topics import snapshot_topic
from zerocopy.resize.vaapi import SurfaceDownload
from zerocopy.snapshots.writer import Job, SnapshotWriter, Still, Written
from zerocopy.stages.base import InputInfo, StageBase
from zerocopy.stages.records import RecordBase
from zerocopy.track import ObjectEvent
from zerocopy.track.times import media_time

log = logging.getLogger("zerocopy")

BETTER = 0.02  # a picture is worth copying when the object's score rose this much
RETRY_S = 2.0  # an object whose picture could not be had is not asked for another for this long (media time)
# a download that failed: the graph refused (av.FFmpegError, ValueError), the bridge (BridgeUnavailable, LayoutError:
# RuntimeErrors)
DOWNLOAD_FAILURES = (av.FFmpegError, RuntimeError, ValueError, OSError)


@dataclass(kw_only=True)
class _Best:
    label: str = "object"
    score: float = -1.0
    still: Still | None = None
    box: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    written_at: float | None = None  # media time of its last snapshot submitted
    fresh: bool = False  # a better picture than the last one submitted
    retry_at: float = -1.0  # media time: its picture could not be had, none is asked for before then

    def wants(self, score: float, t: float) -> bool:
        return t >= self.retry_at and score >= self.score + BETTER


@dataclass(frozen=True, kw_only=True)
class SnapshotSaved(RecordBase):
    """A snapshot of object `id` was written (`snapshot`, `thumbnail`): published retained on MQTT's
    `CAMERA/LABEL/snapshot` (the JPEG, Frigate's topic), and attached to the object's record in serve's store."""

    type: ClassVar[str] = "snapshot"
    retained: ClassVar[bool] = True  # the latest picture of the label, on its topic

    id: str
    camera: str
    label: str
    snapshot: str
    thumbnail: str
    jpeg: bytes = dataclasses.field(repr=False)
    final: bool  # written after the object's end: its last

    @property
    def topic(self) -> str:
        return snapshot_topic(self.camera, self.label)

    def to_record(self) -> dict:
        return {"type": self.type, "id": self.id, "camera": self.camera, "label": self.label,
                "snapshot": self.snapshot, "thumbnail": self.thumbnail, "final": self.final}

    def to_mqtt(self, before: object = None) -> bytes:
        return self.jpeg


@dataclass(kw_only=True)
class _Shots:
    writer: SnapshotWriter
    rate: float
    camera: str
    best: dict[int, _Best]
    ids: dict[int, str]  # tracker id → event id
    saved: deque[SnapshotSaved]  # written by the writer's thread, said with the input's next inferred frame
    t: float = 0.0
    said: bool = False
    download: SurfaceDownload | None = None  # made on the input's first VA-API frame


class Snapshots(StageBase):
    """Per input, the best picture of each tracked object, written under `folder`/CAMERA/ by the camera's own
    writer thread (made as its first input begins, closed at the run's end)."""

    name = "snapshots"
    crops = True  # the path keeps the decoded frame for it (when no picture is kept for drawing)

    def __init__(self, names: Sequence[str] | None, folder: str | Path, interval: float = 10.0):
        self.names, self.folder, self.interval = list(names or []), Path(folder), interval
        self._inputs: dict[int, _Shots] = {}
        self._writers: dict[str, SnapshotWriter] = {}
        self.has_snapshot: set[str] = set()  # event ids with a snapshot submitted (bounded: forgotten at their end)

    def begin(self, input: InputInfo) -> None:
        saved: deque[SnapshotSaved] = deque()
        writer = self._writers.get(input.camera)
        if writer is None:
            writer = self._writers[input.camera] = SnapshotWriter(self.folder / input.camera, self._saved,
                                                                  log.warning, name=input.camera)
        self._inputs[input.index] = _Shots(writer=writer, rate=input.rate, camera=input.camera, best={}, ids={},
                                           saved=saved)

    def _saved(self, w: Written) -> None:
        """(the writer's thread) To be said with its input's next frame."""
        for st in list(self._inputs.values()):
            if st.camera == w.camera:
                st.saved.append(SnapshotSaved(id=w.event_id, camera=w.camera, label=w.label, snapshot=str(w.snapshot),
                                              thumbnail=str(w.thumbnail), jpeg=w.jpeg, final=w.final))
                return

    @staticmethod
    def _drain(st: _Shots) -> list[SnapshotSaved]:
        out = []
        while st.saved:
            out.append(st.saved.popleft())
        return out

    def __call__(self, frame: PreparedFrame, detections: Detections | None, input: int) -> tuple[Any, list]:
        st = self._inputs.get(input)
        if st is None or detections is None or detections.tracker_id is None:
            return detections, self._drain(st) if st is not None else []
        st.t = media_time(frame, st.rate)
        ids = np.asarray(detections.tracker_id)
        rose = [(i, best) for i in np.flatnonzero(ids >= 0)
                if (best := st.best.setdefault(int(ids[i]), _Best())).wants(float(detections.scores[i]), st.t)]
        still = self._still(st, frame) if rose else None  # one copy (one download) for every object that rose
        for i, best in rose:
            if still is None:
                best.retry_at = st.t + RETRY_S
                continue
            best.score, best.still, best.fresh = float(detections.scores[i]), still, True
            best.box = tuple(float(v) for v in detections.xyxy[i])
            label = int(detections.labels[i])
            best.label = self.names[label] if 0 <= label < len(self.names) else str(label)
        return detections, self._drain(st)

    @staticmethod
    def _still(st: _Shots, frame: PreparedFrame) -> Still | None:
        """The frame's picture copied: the kept one (hidden already by `anonymise`), else the decoded frame with
        what `anonymise` hid on the frame hidden in the copy."""
        if frame.picture is not None:
            return Still.of(frame.picture)
        if is_va_surface(frame.source):
            still = _downloaded(st, frame.source)
        else:
            still = Still.of(frame.source) if frame.source is not None else None
            if still is None:
                _say(st, "no snapshots: the decoded frames are in GPU memory and no picture is kept")
        return still.hiding(frame.hidden) if still is not None and frame.hidden is not None else still

    def amend(self, events: list, input: int) -> list:
        st = self._inputs.get(input)
        if st is None:
            return events
        out = []
        for e in events:
            if isinstance(e, ObjectEvent):
                st.ids[e.tracker_id] = e.id
                self._maybe_submit(st, e)
                if e.id in self.has_snapshot:
                    e = dataclasses.replace(e, has_snapshot=True)
                if e.type == "end":
                    st.best.pop(e.tracker_id, None)
                    st.ids.pop(e.tracker_id, None)
                    self.has_snapshot.discard(e.id)
            out.append(e)
        for tid, best in st.best.items():  # objects with no event this frame: a refresh that is due
            event_id = st.ids.get(tid)
            if event_id is not None and best.fresh and best.written_at is not None \
                    and st.t - best.written_at >= self.interval:
                self._submit(st, event_id, best, final=False)
        return out

    def _maybe_submit(self, st: _Shots, e: ObjectEvent) -> None:
        best = st.best.get(e.tracker_id)
        if best is None or best.still is None:
            return
        due = best.fresh and (best.written_at is None or st.t - best.written_at >= self.interval)
        if e.type == "end" and (best.fresh or best.written_at is None):
            self._submit(st, e.id, best, final=True)
        elif due:
            self._submit(st, e.id, best, final=False)

    def _submit(self, st: _Shots, event_id: str, best: _Best, final: bool) -> None:
        assert best.still is not None
        if st.writer.submit(Job(event_id=event_id, label=best.label, score=best.score, still=best.still,
                                box=best.box, final=final)):
            best.written_at, best.fresh = st.t, False
            self.has_snapshot.add(event_id)

    def end(self, input: int) -> list:
        """The input ended: its last snapshots are waited for (a few seconds at most) and said."""
        st = self._inputs.get(input)
        if st is None:
            return []
        st.writer.flush()
        del self._inputs[input]
        return self._drain(st)

    def release(self) -> None:
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()


def is_va_surface(picture: Any) -> bool:
    """Whether `picture` is a VA-API frame (a decoded surface in GPU memory)."""
    return getattr(getattr(picture, "format", None), "name", None) == "vaapi"


def _downloaded(st: _Shots, surface: av.VideoFrame) -> Still | None:
    """The VA-API frame downloaded (this one only) and copied; None when that failed, said once."""
    try:
        if st.download is None:
            st.download = SurfaceDownload(load_bridge())  # loaded already by the VA path: cached
        return Still.of(st.download(surface))
    except DOWNLOAD_FAILURES as e:
        st.download = None  # made again for the next object: a graph that failed may hold a frame half-way
        why = str(e) or type(e).__name__
        _say(st, f"no snapshot of an object: downloading its frame from the GPU failed: {why} (later ones not said)")
        return None


def _say(st: _Shots, what: str) -> None:
    """A warning about this input's snapshots, the first one only."""
    if not st.said:
        st.said = True
        log.warning("%s: %s", st.camera, what)
