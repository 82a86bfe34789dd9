"""zerocopy.snapshots: the stage picks each tracked object's best-scoring picture and its writer thread writes it as a
JPEG with the box drawn and a thumbnail of the box; events say `has_snapshot`. Real frames (PyAV), the real
tracker, real files."""

from __future__ import annotations

import io

import av
import numpy as np
from PIL import Image

from zerocopy.config import RunConfig
from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame
from zerocopy.postprocess import LabelChoice
from zerocopy.snapshots.stage import Snapshots, SnapshotSaved
from zerocopy.snapshots.writer import Still
from zerocopy.stages import InputInfo, StageChain
from zerocopy.stages.labels import Anonymise
from zerocopy.track import ObjectEvent
from zerocopy.track.stage import InputTracks

RATE = 5.0
W, H = 320, 180


def picture(level: int) -> av.VideoFrame:
    """A flat grey picture (yuv420p, as a decoder gives) whose brightness tells the frames apart."""
    return av.VideoFrame.from_ndarray(np.full((H, W, 3), level, np.uint8), format="rgb24").reformat(format="yuv420p")


def frame(i: int, level: int) -> PreparedFrame:
    return PreparedFrame(index=i, pts=i / RATE, width=W, height=H, geometry=None, inputs={}, picture=picture(level))


def box(score: float, x: float = 100.0) -> Detections:
    return Detections(np.array([[x, 40, x + 60, 120]], np.float32), np.array([score], np.float32),
                      np.array([0], np.int32))


def test_the_best_picture_is_written_with_its_thumbnail_and_events_say_so(tmp_path):
    config = RunConfig(track=True, min_hits=2, max_lost=0.5)
    stage = Snapshots(["person"], tmp_path / "snaps", interval=60)
    chain = StageChain([InputTracks(config, ["person"]), stage])
    chain.begin(InputInfo(index=0, source="cam.mp4", camera="cam", rate=RATE))
    scores = [0.6, 0.7, 0.95, 0.8, 0.75, 0.7]  # best at frame 2, whose picture is the brightest
    events = []
    for i, s in enumerate(scores):
        events += chain(frame(i, 200 if i == 2 else 60), box(s), 0, lambda st, e: e).events
    for i in range(len(scores), len(scores) + 6):  # gone: its `end` comes after max_lost
        events += chain(frame(i, 60), Detections.empty(), 0, lambda st, e: e).events
    events += chain.end(0)
    chain.release()
    objects = [e for e in events if isinstance(e, ObjectEvent)]
    saved = [e for e in events if isinstance(e, SnapshotSaved)]
    assert [e.type for e in objects] == ["new", "end"] and all(e.has_snapshot for e in objects)
    assert objects[0].to_mqtt()["after"]["has_snapshot"] is True
    assert saved[-1].final and saved[-1].id == objects[0].id and saved[-1].topic == "cam/person/snapshot"
    assert saved[-1].snapshot == str(tmp_path / "snaps" / "cam" / f"{objects[0].id}.jpg")
    img = np.asarray(Image.open(saved[-1].snapshot))
    assert img.shape[:2] == (H, W) and img[10:30, 10:30].mean() > 150  # frame 2's picture
    assert Image.open(io.BytesIO(saved[-1].jpeg)).size == (W, H)
    thumb = Image.open(saved[-1].thumbnail)
    assert thumb.width < W and thumb.height < H


def test_a_snapshot_from_the_decoded_frame_hides_what_anonymise_hides(tmp_path):
    """Issue 36: with no picture kept (the API's default, serve with `[http] latest = false`) the snapshot is made
    from the decoded frame (`source`), which `anonymise` never touched: the snapshot, its thumbnail and the JPEG for
    MQTT hide the box all the same."""
    config = RunConfig(track=True, min_hits=2, max_lost=0.5)
    chain = StageChain([Anonymise(LabelChoice(hidden=(0,)), "fill"), InputTracks(config, ["face"]),
                        Snapshots(["face"], tmp_path / "snaps", interval=60)])
    chain.begin(InputInfo(index=0, source="cam.mp4", camera="cam", rate=RATE))
    events = []
    for i in range(12):
        f = PreparedFrame(index=i, pts=i / RATE, width=W, height=H, geometry=None, inputs={}, source=picture(200))
        events += chain(f, box(0.9) if i < 5 else Detections.empty(), 0, lambda st, e: e).events
    events += chain.end(0)
    chain.release()
    saved = [e for e in events if isinstance(e, SnapshotSaved)]
    assert saved
    for jpeg in (Image.open(saved[-1].snapshot), Image.open(io.BytesIO(saved[-1].jpeg))):
        img = np.asarray(jpeg.convert("L"))
        assert img[60:100, 110:150].mean() < 20 and img[10:30, 10:30].mean() > 150  # the box black, the rest not
    thumb = np.asarray(Image.open(saved[-1].thumbnail).convert("L"))
    h, w = thumb.shape
    assert thumb[h // 3: 2 * h // 3, w // 3: 2 * w // 3].mean() < 20


def test_a_picture_in_gpu_memory_gives_no_still():
    class Surface:  # what a VA path keeps as its decoded frame: a frame whose format is the hardware's
        class format:
            name = "vaapi"

    assert Still.of(Surface()) is None
    bgr = np.zeros((4, 6, 3), np.uint8)
    still = Still.of(bgr)
    assert still is not None and (still.width, still.height, still.format) == (6, 4, "bgr24")
    bgr[:] = 9
    assert still.planes.max() == 0  # a copy: the frame's buffer may be reused
