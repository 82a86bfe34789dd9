"""The paths that hand OpenVINO host arrays from a CPU decoder: `software` and the OpenCV `baseline`."""

from __future__ import annotations

import av

from zerocopy.decode.live import Paced
from zerocopy.decode.opencv import OpenCVDecoder
from zerocopy.decode.pyav import PyAVDecoder
from zerocopy.handoff.host import HostHandoff
from zerocopy.motion.luma import BgrLuma, PlanesLuma
from zerocopy.paths.base import FrameStream, OpenRequest, Prepared, PreparedStream
from zerocopy.resize.bgr import BGRResizer
from zerocopy.resize.planes import PlaneResizer
from zerocopy.resize.regions import BgrRoiFeed, PlanesRoiFeed


class HostFront:
    """Shared by the paths that hand OpenVINO host arrays."""

    memory_type: str | None = None
    roi_input_kind = "bgr"  # swscale's conversion to BGR is the fast one (resize/regions.py)
    devices: tuple[str, ...] = ("GPU", "CPU")
    nireq_cap: int | None = None

    def refusals(self, facts, config) -> list[str]:
        return []

    def handoff(self, model, stream):
        return HostHandoff(model.input_names)

    def roi_feed(self, model, stream):
        return PlanesRoiFeed(model) if self.name == "software" else BgrRoiFeed(model)


class SoftwareFront(HostFront):
    """FFmpeg decode on the CPU (on its own thread) → swscale from the planes → host NV12."""

    name = "software"
    input_kind = "nv12"

    def open(self, source, req: OpenRequest) -> FrameStream:
        model, config = req.model, req.config
        # Planes are copied into the request at bind: buffers for the frames not bound yet suffice.
        resizer = PlaneResizer(model.width, model.height, model.spec.resize, ring=req.unbound)
        y_name, uv_name = model.input_names

        def prepare(frame):
            y, uv, g = resizer(frame)
            return Prepared(inputs={y_name: y, uv_name: uv}, geometry=g, shown=frame if req.keep_images else None,
                            source=frame if req.keep_source else None)

        decoder = PyAVDecoder.on_cpu(source, config.decode_threads, realtime=config.realtime,
                                     policy=config.live_policy, stop=req.stop)
        return PreparedStream(decoder, prepare, detect_fps=config.detect_fps, motion=req.motion(PlanesLuma()),
                              show=lambda frame: frame if req.keep_images else None)


class BaselineFront(HostFront):
    """What the classic OpenVINO demo does: OpenCV decode to BGR, `cv2.resize`, BGR input."""

    name = "baseline"
    input_kind = "bgr"

    def open(self, source, req: OpenRequest) -> FrameStream:
        model = req.model
        decoder = OpenCVDecoder(source)
        resizer = BGRResizer(decoder.cv2, model.width, model.height, model.spec.resize)
        (name,) = model.input_names

        converted: list = []  # with --motion, the frame's picture its luma was made from (converted once)
        small = BgrLuma()

        def bgr_of(grabbed):  # the full-size conversion: preprocessing, as in the classic demo
            return converted.pop() if converted else grabbed.bgr()

        def luma(grabbed):
            converted[:] = [grabbed.bgr()]
            return small(converted[0])

        def prepare(grabbed):
            bgr = bgr_of(grabbed)
            tensor, g = resizer(bgr)
            shown = av.VideoFrame.from_ndarray(bgr, format="bgr24") if req.keep_images else None
            return Prepared(inputs={name: tensor}, geometry=g, shown=shown, source=bgr if req.keep_source else None)

        def show(grabbed):  # a frame --detect-fps leaves out, drawn: converted for the picture only
            return av.VideoFrame.from_ndarray(bgr_of(grabbed), format="bgr24") if req.keep_images else None

        return PreparedStream(Paced(decoder) if req.config.realtime else decoder, prepare,
                              detect_fps=req.config.detect_fps, show=show, motion=req.motion(luma))
