"""serve's recording (docs/serve.md, *Recording*): one `record.camera.CameraRecording` per camera that records (its
`record_url`, else its `url` on a second connection; not a local device, which cannot be opened twice), owned
by the engine, and the sink that asks each for the clip of an object when its `end` event comes, then attaches
the clip to the object's row in the store (`has_clip`). A camera with `record = "continuous"` or `"motion"` also
writes segments, indexed in the store, kept by the storage's retention as its `retain_days` says; the sink tells
its recording what detection saw (motion, objects) for the index; such a camera's clips are made from its segments
and its ring is small (`record.camera.SEGMENTS_BUFFER_MB`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from zerocopy.record.camera import CameraRecording
from zerocopy.redaction import redact
from zerocopy.sinks import NullSink
from zerocopy.sources import source_kind
from zerocopy.stages.motion import MotionState
from zerocopy.store.segments import Retain
from zerocopy.store.storage import Storage
from zerocopy.track import ObjectEvent

MOTION_OTHER_DAYS = 1.0  # record = "motion": how long segments without motion or objects are kept


class Recordings:
    """Every recording camera's `CameraRecording`, by camera name."""

    def __init__(self, cameras: Sequence[Any], storage: Storage, say: Callable[[str], None]):
        self.storage = storage
        self.by_name: dict[str, CameraRecording] = {}
        for c in cameras:
            url = c.record.url or c.url
            if not (c.enabled and c.record.enabled) or source_kind(url) == "device":
                continue
            segments = c.record.mode in ("continuous", "motion")
            rec = CameraRecording(c.name, url, storage.folder, say, shown=redact(url), loop=c.loop,
                                  pre_s=c.record.pre_s, post_s=c.record.post_s,
                                  buffer_bytes=None if c.record.buffer_mb is None else int(c.record.buffer_mb * 2**20),
                                  index=storage.index.put if segments else None)
            if segments:
                days = c.record.retain_days or storage.max_days
                storage.retain(c.name, Retain(days, days if c.record.mode == "continuous" else
                                              min(days, MOTION_OTHER_DAYS)))
            storage.watch(busy=rec.busy_paths, disk_full=lambda rec=rec: rec.disk_full)
            self.by_name[c.name] = rec

    def start(self) -> None:
        for rec in self.by_name.values():
            rec.start()

    def close(self, timeout: float = 1.0) -> None:
        """Stop reading; the clips asked for are written with what the rings hold (at most `timeout` s each)."""
        for rec in self.by_name.values():
            rec.close(timeout)

    def sink(self, cameras: Sequence[str]) -> ClipSink:
        """The sink of a run whose inputs are `cameras`, in order."""
        return ClipSink([self.by_name.get(name) for name in cameras], self.storage)

    def status(self, name: str) -> dict[str, Any] | None:
        rec = self.by_name.get(name)
        return rec.status() if rec is not None else None


class ClipSink(NullSink):
    """At an object's `end`, its clip from its input's recording (from `pre_capture` before its first sighting
    to `post_capture` after its last), attached to its row once written; every object's sightings and the motion
    gate's state told to the recording's `activity` (for its segments' index)."""

    def __init__(self, recordings: Sequence[CameraRecording | None], storage: Storage):
        self.recordings, self.storage = list(recordings), storage

    def on_events(self, events: Sequence[Any], input: int = 0) -> None:
        rec = self.recordings[input] if input < len(self.recordings) else None
        if rec is None:
            return
        for e in events:
            if isinstance(e, MotionState):
                rec.activity.motion(e.active, e.frame_time)
            elif isinstance(e, ObjectEvent):
                rec.activity.object(e.id, e.start_time, e.end_time or e.frame_time)
                if e.type == "end" and e.end_time is not None:
                    rec.request(e.id, e.start_time, e.end_time, self._done)

    def _done(self, event_id: str, result: Any) -> None:
        """(the camera's clip writer thread)"""
        if result is not None:
            self.storage.attach(event_id, clip=str(result.path))
