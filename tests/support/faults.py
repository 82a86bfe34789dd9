"""Fault injection for the fallback tests: real failures of OpenVINO and FFmpeg, raised at one stage.

Nothing here pretends that a VA surface exists. A *stand-in* front carries a VA path's name over the
software path's stages (so `auto` treats its refusal as it treats a GPU path's) and breaks one
stage the way the real thing breaks there:

- compile:   the stream names a remote context OpenVINO does not know → `compile_model` raises
- bind:      a tensor of the wrong shape is set on the request → `set_tensor` raises
- inference: the frame is made all white, which the *poison model* cannot run → the request fails
             asynchronously (no callback; OpenVINO rethrows from its waits)
- decode:    the input is replaced by one whose packets all fail → no frame ever decodes
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
from openvino import opset13 as ops

from zerocopy.paths import SoftwareFront

POISON_MEAN = 240.0  # inputs brighter than this on average make the poison model fail


def write_poison_model(path: Path, size: int = 64, bright: float = POISON_MEAN) -> Path:
    """An IR detector (`DetectionOutput`-shaped output, never a detection) whose inference fails at run
    time for an input brighter than `bright` on average (-1: every input): a Reshape's target depends on
    the data and stops matching the input."""
    image = ops.parameter([1, 3, size, size], np.float32, name="image")
    n = 3 * size * size
    flat = ops.reshape(image, ops.constant(np.array([1, n], np.int64)), False)
    mean = ops.reduce_mean(flat, ops.constant(np.array([1], np.int64)), True)  # [1, 1]
    bright = ops.convert(ops.greater(mean, ops.constant(np.float32(bright))), np.int64)
    factor = ops.add(bright, ops.constant(np.array([[1]], np.int64)))  # 1, or 2 when bright
    length = ops.reshape(ops.multiply(factor, ops.constant(np.array([[n]], np.int64))),
                         ops.constant(np.array([1], np.int64)), False)
    target = ops.concat([ops.constant(np.array([1], np.int64)), length], 0)
    checked = ops.reshape(flat, target, False)  # fails at run time when bright
    zero = ops.multiply(ops.reduce_sum(checked, ops.constant(np.array([0, 1], np.int64)), False),
                        ops.constant(np.float32(0)))
    rows = np.zeros((1, 1, 1, 7), np.float32)
    rows[0, 0, 0, 0] = -1  # image_id -1: the end of the list
    out = ops.add(ops.constant(rows), zero)
    model = ov.Model([out], [image], "poison")
    ov.save_model(model, str(path))
    return path


class _WrongShapeHandoff:
    def __init__(self, input_names):
        self.input_names = list(input_names)

    def bind(self, request, frames, slot):
        shape = tuple(request.get_tensor(self.input_names[0]).shape)
        wrong = (shape[0], shape[1] + 2, shape[2] + 2, shape[3])
        request.set_tensor(self.input_names[0], ov.Tensor(np.zeros(wrong, np.uint8)))


class _WhiteHandoff:
    """Binds every frame as pure white: the poison model's failing input."""

    def __init__(self, host):
        self.host = host

    def bind(self, request, frames, slot):
        self.host.bind(request, frames, slot)
        y = request.get_tensor(self.host.input_names[0]).data
        y[...] = 255
        uv = request.get_tensor(self.host.input_names[1]).data
        uv[...] = 128


class StandInFront(SoftwareFront):
    """The software stages under a VA path's name, failing at `fail_at` as described above."""

    devices = ("CPU",)

    def __init__(self, name: str, fail_at: str, undecodable: Path | None = None):
        self.name, self.fail_at, self.undecodable = name, fail_at, undecodable

    def open(self, source, req):
        from zerocopy.decode.pyav import PyAVDecoder
        from zerocopy.errors import PathUnavailable
        from zerocopy.paths.base import Prepared, PreparedStream
        from zerocopy.paths.vaapi import prime

        if self.fail_at == "decode":
            decoder = PyAVDecoder(self.undecodable, give_up_without_frame=8)
            stream = PreparedStream(decoder, lambda frame: Prepared(inputs={}, geometry=None))
            prime(self.name, stream, source)
            raise PathUnavailable({self.name: "the undecodable input decoded"})  # never reached
        stream = super().open(source, req)
        if self.fail_at == "compile":
            stream.context = "not-a-remote-context"
        return stream

    def handoff(self, model, stream):
        host = super().handoff(model, stream)
        if self.fail_at == "bind":
            return _WrongShapeHandoff(model.input_names)
        if self.fail_at == "inference":
            return _WhiteHandoff(host)
        return host


def write_undecodable(path: Path, frames: int = 120) -> Path:
    """A real H.264 stream in Matroska whose parameter sets (the codec's extradata) are replaced by noise:
    FFmpeg fails on every packet ("No start code is found"), as a decoder that cannot handle the
    stream does, and no frame ever comes out. (Matroska's parser flags no keyframe in such a stream,
    so a decoder with a give-up limit L starts counting after 10 × L packets.)"""
    import av

    good = path.with_name(path.stem + "-good.mkv")
    with av.open(str(good), "w", format="matroska") as out:
        s = out.add_stream("libx264", rate=25)
        s.width, s.height, s.pix_fmt = 320, 240, "yuv420p"
        for i in range(frames):
            frame = av.VideoFrame.from_ndarray(np.full((240, 320, 3), (5 * i) % 256, np.uint8), format="rgb24")
            frame.pts = i
            out.mux(s.encode(frame))
        out.mux(s.encode(None))
    with av.open(str(good)) as src, av.open(str(path), "w", format="matroska") as out:
        video = src.streams.video[0]
        target = out.add_stream_from_template(video)
        noise = np.random.default_rng(7).integers(0, 256, len(video.codec_context.extradata), dtype=np.uint8)
        target.codec_context.extradata = noise.tobytes()
        for packet in src.demux(video):
            if packet.size:
                key = packet.is_keyframe
                packet.stream = target
                packet.is_keyframe = key  # as a demuxer flags them (re-muxing alone loses the flag)
                out.mux(packet)
    good.unlink()
    return path


def write_white_clip(path: Path, frames: int = 6) -> Path:
    """A real H.264 clip of white frames: the poison model's failing input on every path."""
    import av

    with av.open(str(path), "w") as out:
        s = out.add_stream("libx264", rate=25)
        s.width, s.height, s.pix_fmt = 320, 240, "yuv420p"
        for i in range(frames):
            frame = av.VideoFrame.from_ndarray(np.full((240, 320, 3), 255, np.uint8), format="rgb24")
            frame.pts = i
            out.mux(s.encode(frame))
        out.mux(s.encode(None))
    return path
