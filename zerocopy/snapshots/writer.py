"""One camera's snapshot writer: a thread of its own that turns a kept picture into two JPEG files (the full frame
with the object's box drawn, and a crop of the box: the thumbnail), so encoding never runs in the run's thread
(which, in serve, carries every camera of a group). Its queue is bounded: a snapshot that cannot be queued is
dropped and counted, never waited for. Its files are private (0600, the folder 0700, whatever the umask) and
written under the folder's descriptor, never through a link."""

from __future__ import annotations

import contextlib
import io
import os
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import av
import numpy as np
from PIL import Image, ImageDraw

from zerocopy.store.folder import FILE_NAME, create_private, open_private_dir

JPEG_QUALITY = 85
THUMB_GROW = 1.5  # the thumbnail: the box grown about its centre by this much, then at most THUMB_MAX px
THUMB_MAX = 320
QUEUE = 16


@dataclass(frozen=True, kw_only=True)
class Still:
    """A decoded picture copied out of its frame (planes as PyAV's `to_ndarray` gives them), so it outlives the
    frame and is read by one thread only."""

    planes: np.ndarray
    format: str
    width: int
    height: int

    @classmethod
    def of(cls, picture: Any) -> Still | None:
        """A copy of `picture` (a PyAV frame in system memory, or a BGR array); None for a frame in GPU memory (the
        stage downloads a VA-API one first: `resize.vaapi.SurfaceDownload`)."""
        if isinstance(picture, np.ndarray):
            return cls(planes=picture.copy(), format="bgr24", width=picture.shape[1], height=picture.shape[0])
        fmt = picture.format.name
        if fmt in ("vaapi", "qsv", "cuda"):
            return None
        if fmt not in ("yuv420p", "yuvj420p", "nv12", "bgr24", "rgb24", "gray"):
            picture, fmt = picture.reformat(format="rgb24"), "rgb24"
        return cls(planes=picture.to_ndarray(), format=fmt, width=picture.width, height=picture.height)

    def image(self) -> Image.Image:
        return av.VideoFrame.from_ndarray(self.planes, format=self.format).to_image().convert("RGB")

    def hiding(self, hidden: Any) -> Still:
        """This picture with what `anonymise` hid on its frame hidden (a `sinks.draw.Hidden`), as RGB."""
        img = hidden.image(self.image())
        return Still(planes=np.asarray(img), format="rgb24", width=img.width, height=img.height)


@dataclass(frozen=True, kw_only=True)
class Job:
    """One snapshot to write: the object's event id and label, its best picture and its box there."""

    event_id: str
    label: str
    score: float
    still: Still
    box: tuple[float, float, float, float]
    final: bool  # the object has ended: its last snapshot


@dataclass(frozen=True, kw_only=True)
class Written:
    event_id: str
    camera: str
    label: str
    snapshot: Path
    thumbnail: Path
    jpeg: bytes  # the snapshot's bytes (for MQTT's retained `CAMERA/LABEL/snapshot`)
    final: bool


def encode(job: Job) -> tuple[bytes, bytes]:
    """(the full frame with the box drawn, the thumbnail) as JPEG bytes."""
    img = job.still.image()
    x1, y1, x2, y2 = job.box
    cx, cy, side = (x1 + x2) / 2, (y1 + y2) / 2, max(x2 - x1, y2 - y1) * THUMB_GROW
    crop = img.crop((int(max(0, cx - side / 2)), int(max(0, cy - side / 2)), int(min(img.width, cx + side / 2)),
                     int(min(img.height, cy + side / 2))))
    crop.thumbnail((THUMB_MAX, THUMB_MAX))
    draw = ImageDraw.Draw(img)
    draw.rectangle([x1, y1, x2, y2], outline=(255, 64, 64), width=max(2, img.width // 400))
    draw.text((x1 + 3, max(0, y1 - 12)), f"{job.label} {job.score:.2f}", fill=(255, 64, 64))
    return _jpeg(img), _jpeg(crop)


def _jpeg(img: Image.Image) -> bytes:
    out = io.BytesIO()
    img.save(out, format="JPEG", quality=JPEG_QUALITY)
    return out.getvalue()


def _write(folder: int, name: str, data: bytes) -> None:
    """`name` in the folder `folder` (a descriptor), written under `NAME.part`, then renamed: a reader never sees
    half a file. The temporary is made new (0600, `O_EXCL|O_NOFOLLOW`): whatever had its name (a leftover, a
    planted link) is removed first, never written through."""
    part = f"{name}.part"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(part, dir_fd=folder)
    fd = create_private(part, folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(part, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(part, dir_fd=folder)
        raise


@dataclass(frozen=True)
class _Marker:
    done: threading.Event


class SnapshotWriter:
    """`<folder>/<event id>.jpg` and `<event id>-thumb.jpg` for each job, then `on_written(Written)`; failures are
    said once (`say`) and counted, never raised into the run."""

    def __init__(self, folder: str | Path, on_written: Callable[[Written], None], say: Callable[[str], None],
                 name: str = "camera"):
        self.folder, self.on_written, self.say, self.name = Path(folder), on_written, say, name
        self.written = self.dropped = self.failed = 0
        self._queue: queue.Queue[Job | _Marker | None] = queue.Queue(QUEUE)
        self._said = False
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"zc-snapshots-{name}")
        self._thread.start()

    def submit(self, job: Job) -> bool:
        try:
            self._queue.put_nowait(job)
            return True
        except queue.Full:
            self.dropped += 1
            return False

    def _run(self) -> None:
        while (job := self._queue.get()) is not None:
            if isinstance(job, _Marker):
                job.done.set()
                continue
            try:
                if not FILE_NAME.fullmatch(job.event_id):
                    raise ValueError(f"{job.event_id!r} cannot be a file name")
                full, thumb = encode(job)
                snapshot, thumbnail = self.folder / f"{job.event_id}.jpg", self.folder / f"{job.event_id}-thumb.jpg"
                folder = open_private_dir(self.folder)
                try:
                    _write(folder, snapshot.name, full)
                    _write(folder, thumbnail.name, thumb)
                finally:
                    os.close(folder)
                self.written += 1
                self.on_written(Written(event_id=job.event_id, camera=self.name, label=job.label, snapshot=snapshot,
                                        thumbnail=thumbnail, jpeg=full, final=job.final))
            except Exception as e:  # a full disk, a folder that cannot be made: said once, the run goes on
                self.failed += 1
                if not self._said:
                    self._said = True
                    self.say(f"{self.name}: cannot write snapshots in {self.folder}: {e}")

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every job queued so far is written (False: not within `timeout`)."""
        done = threading.Event()
        try:
            self._queue.put(_Marker(done), timeout=timeout)
        except queue.Full:
            return False
        return done.wait(timeout)

    def close(self, timeout: float = 5.0) -> None:
        """Write what is queued, then stop."""
        try:
            self._queue.put(None, timeout=timeout)
        except queue.Full:
            return  # (a daemon thread: it goes with the process)
        self._thread.join(timeout)
