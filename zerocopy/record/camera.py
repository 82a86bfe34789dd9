"""One camera's recording for serve: its ring, the `Recorder` that fills it from `record_url`, the `ClipWriter`
that cuts its events' clips out of it, and (continuous recording) the `SegmentWriter` that writes all of it to
disk in segments, its events' clips then made from the segments (`SegmentClips`) and its ring only as large as live
video and the segment writer need (`SEGMENTS_BUFFER_MB`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from zerocopy.decode.live import LivePolicy
from zerocopy.record.activity import Activity
from zerocopy.record.reader import RECORD_POLICY, Recorder
from zerocopy.record.ring import PacketRing
from zerocopy.record.segment_clips import SegmentClips
from zerocopy.record.segments import Index, SegmentWriter
from zerocopy.record.writer import MIN_FREE_BYTES, ClipWriter, OnDone

DEFAULT_BUFFER_MB = 64  # a 4 Mbit/s main stream: about two minutes
# a camera that writes segments: its ring holds what live video (the newest keyframe, and a viewer up to
# `live.MAX_BEHIND_S` behind) and the segment writer (a disk that stalls a few seconds) need: 16 s at 4 Mbit/s
SEGMENTS_BUFFER_MB = 8
DEFAULT_PRE_S = DEFAULT_POST_S = 5.0


def clips_folder(storage: str | Path, camera: str) -> Path:
    """Where a camera's clips go: `<storage>/clips/<camera>`."""
    return Path(storage) / "clips" / camera


class CameraRecording:
    """`record_url` kept in a ring of `buffer_bytes` (default: `DEFAULT_BUFFER_MB`, with `index`
    `SEGMENTS_BUFFER_MB`), and clips of `pre_s` before to `post_s` after an object, written under
    `clips_folder(storage, camera)`; with `index`, all of it also written in segments (`segments`, each row given to
    `index`; `activity` tells what detection saw) and the clips made from them. `start()`, then `request(...)` at
    each object's end, `status()` any time, `close()` at the end; nothing raises into the caller's thread once
    started."""

    def __init__(self, camera: str, record_url: str, storage: str | Path, say: Callable[[str], None], *,
                 shown: str | None = None, loop: bool = False, pre_s: float = DEFAULT_PRE_S,
                 post_s: float = DEFAULT_POST_S, buffer_bytes: int | None = None,
                 min_free_bytes: int = MIN_FREE_BYTES, policy: LivePolicy = RECORD_POLICY,
                 index: Index | None = None, activity: Activity | None = None):
        self.camera = camera
        self.activity = activity or Activity()
        if buffer_bytes is None:
            buffer_bytes = (DEFAULT_BUFFER_MB if index is None else SEGMENTS_BUFFER_MB) * 2**20
        self.ring = PacketRing(buffer_bytes)
        self.recorder = Recorder(record_url, self.ring, say, camera=camera, shown=shown, loop=loop, policy=policy)
        self.clips = None if index is None else SegmentClips(storage, index)
        self.segments = None if self.clips is None else SegmentWriter(
            self.ring, storage, camera, say, index=self.clips.index, activity=self.activity,
            min_free_bytes=min_free_bytes)
        if self.clips is not None:
            self.clips.writer = self.segments
        self.writer = ClipWriter(self.ring, clips_folder(storage, camera), say, camera=camera, pre_s=pre_s,
                                 post_s=post_s, recording=lambda: self.recorder.recording,
                                 min_free_bytes=min_free_bytes, segments=self.clips)

    def start(self) -> None:
        self.recorder.start()
        self.writer.start()
        if self.segments is not None:
            self.segments.start()

    def request(self, event_id: str, first_seen_wall: float, last_seen_wall: float, on_done: OnDone) -> None:
        """The clip of an object seen from `first_seen_wall` to `last_seen_wall` (an `end` event's `start_time` and
        `end_time`); `on_done(event_id, ClipResult or None)` later, on the writer's thread."""
        self.writer.request(event_id, first_seen_wall, last_seen_wall, on_done)

    def busy_paths(self) -> set[Path]:
        busy = self.writer.busy_paths()
        if self.segments is not None and self.clips is not None:
            busy |= self.segments.busy_paths() | self.clips.busy_paths()
        return busy

    @property
    def disk_full(self) -> bool:
        return self.writer.disk_full or (self.segments is not None and self.segments.disk_full)

    def close(self, timeout: float = 1.0) -> bool:
        """Stop reading, write the clips queued with what the ring holds (at most `timeout` s); True if both
        threads ended in time."""
        read = self.recorder.close()
        segments = self.segments.close(timeout) if self.segments is not None else True
        return self.writer.close(timeout) and read and segments

    def status(self) -> dict[str, Any]:
        """For /api/cameras (`recording`) and /metrics."""
        recorder = self.recorder.status()
        held = self.ring.stats()
        return {"state": recorder.state, "recording": recorder.recording, "error": recorder.error,
                "codec": recorder.codec, "width": recorder.width, "height": recorder.height,
                "audio": recorder.audio, "audio_note": recorder.audio_note,
                "reconnects": recorder.reconnects, "buffer_bytes": held["bytes"], "buffer_seconds": held["seconds"],
                "buffer_packets": held["packets"], "buffer_limit_bytes": self.ring.max_bytes,
                "clips_written": self.writer.written, "clips_failed": self.writer.failed,
                "clips_pending": self.writer.pending(), "disk_full": self.writer.disk_full,
                "clip_error": self.writer.last_error,
                **({"segments_written": self.segments.segments, "segments_failed": self.segments.failed,
                    "segment_error": self.segments.last_error} if self.segments is not None else {})}
