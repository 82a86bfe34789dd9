"""zerocopy.serve.cameras: a camera's last picture reaches the HTTP threads as bytes. PyAV objects are not
thread-safe (`to_image()` on one frame from 8 threads at once killed serve with SIGSEGV): the picture is encoded
once per frame, under the camera's picture lock, and every request gets those bytes."""

import io
import threading

import av
import numpy as np
from PIL import Image

from zerocopy.detections import Detections
from zerocopy.frames import Geometry, PreparedFrame
from zerocopy.serve.cameras import Camera

W, H = 320, 180
CLIENTS = 8  # as many requests at once as crashed serve (two were enough within 19 rounds)


def picture(shade: int) -> av.VideoFrame:
    rgb = np.full((H, W, 3), shade, np.uint8)
    return av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(format="yuv420p")


def frame(index: int, shade: int) -> PreparedFrame:
    return PreparedFrame(index=index, pts=index / 25, width=W, height=H, geometry=Geometry.fit(W, H, W, H, "stretch"),
                         inputs={}, picture=picture(shade))


def test_many_requests_at_once_get_one_encoding_of_each_frame_as_bytes():
    cam = Camera("front", "rtsp://cam.lan/1", "face")
    boxes = Detections(np.array([[40.0, 30.0, 120.0, 110.0]], np.float32), np.array([0.9], np.float32),
                       np.array([0]))
    for round, shade in enumerate((40, 200, 90)):
        cam.frame(frame(round, shade), boxes)
        start = threading.Barrier(CLIENTS)
        got: list[bytes | None] = [None] * CLIENTS

        def ask(k: int, start: threading.Barrier = start, got: list = got) -> None:
            start.wait()
            got[k] = cam.latest_jpeg(("face",))

        threads = [threading.Thread(target=ask, args=(k,)) for k in range(CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(isinstance(b, bytes) and b == got[0] for b in got)
        assert cam.encoded == round + 1  # once per frame, whatever the number of requests
        image = np.asarray(Image.open(io.BytesIO(got[0])).convert("L"))
        assert abs(float(np.median(image)) - shade) < 8  # this frame's picture, not the one before
    assert cam.latest_jpeg(("face",)) == got[0] and cam.encoded == 3  # asked again: the same bytes


def test_a_camera_without_a_picture_has_no_jpeg():
    cam = Camera("front", "rtsp://cam.lan/1", "face")
    cam.frame(PreparedFrame(index=0, pts=0.0, width=W, height=H, geometry=Geometry.fit(W, H, W, H, "stretch"),
                            inputs={}), Detections.empty())
    assert cam.latest_jpeg(()) is None and cam.encoded == 0
