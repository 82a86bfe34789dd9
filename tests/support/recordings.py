"""Helpers for the clip tests (zerocopy/record): clips with a known GOP, the same with an audio stream beside (AAC,
or G.711), a ring filled from a file with arrival times of the test's choosing, and what an MP4 clip holds when read
back with PyAV."""

from __future__ import annotations

import dataclasses
import math
import queue
import socket
import time
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

from zerocopy.decode.live import LivePolicy
from zerocopy.decode.mp4_index import top_level_boxes
from zerocopy.record.audio import audio_params
from zerocopy.record.reader import stream_params
from zerocopy.record.ring import PacketRing
from zerocopy.samples import ClipSpec, write_clip

FPS = 30
GOP = 30  # frames between keyframes: one second
# a record_url reconnected at once (tests wait on conditions, not on back-offs)
FAST = LivePolicy(reconnect=True, retry_open=True, give_up_after=3600, open_timeout=5.0, read_timeout=2.0,
                  backoff_initial=0.05, backoff_max=0.2)


def refused_url() -> str:
    """An HTTP URL (with a password) on the loopback where nothing listens."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://user:secret@127.0.0.1:{port}/live.ts"


def gop_spec(seconds: float = 3.0, width: int = 192, height: int = 108) -> ClipSpec:
    """H.264 at 30 fps with a keyframe every 30 frames exactly (no scene-cut keyframes) and B-frames, so that
    presentation and decoding order differ as on real cameras."""
    return ClipSpec(width=width, height=height, frames=int(seconds * FPS), fps=FPS,
                    options=(("g", str(GOP)), ("bf", "2"), ("x264-params", "scenecut=0")))


def make_gop_clip(path: str | Path, seconds: float = 3.0, container: str = "mpegts", width: int = 192,
                  height: int = 108) -> Path:
    write_clip(path, gop_spec(seconds, width, height), container_format=container)
    return Path(path)


def with_audio(video: str | Path, path: str | Path, codec: str = "aac", container: str = "mpegts",
               rate: int = 16000) -> Path:
    """`video`'s packets as they are, and beside them a 440 Hz tone as long, encoded in `codec` (`aac`, or G.711's
    `pcm_mulaw`), interleaved by time into `path`."""
    with av.open(str(video)) as src, av.open(str(path), "w", format=container) as out:
        source = src.streams.video[0]
        picture = out.add_stream_from_template(source)
        sound = out.add_stream(codec, rate=rate, layout="mono")
        packets = [p for p in src.demux(source) if p.size]
        samples = int(max(float((p.pts + (p.duration or 0)) * source.time_base) for p in packets) * rate)
        pcm = "fltp" if codec == "aac" else "s16"
        step = 1024 if codec == "aac" else 320
        audio = []
        for start in range(0, samples, step):
            tone = 0.3 * np.sin(2 * math.pi * 440 * np.arange(start, min(start + step, samples)) / rate)
            data = tone.astype(np.float32) if pcm == "fltp" else (tone * 10000).astype(np.int16)
            frame = av.AudioFrame.from_ndarray(data.reshape(1, -1), format=pcm, layout="mono")
            frame.sample_rate, frame.pts, frame.time_base = rate, start, Fraction(1, rate)
            audio += sound.encode(frame)
        audio += sound.encode(None)
        timed = [(float(p.dts * source.time_base), 0, i, p, picture) for i, p in enumerate(packets)]
        timed += [(float(p.pts * p.time_base), 1, i, p, sound) for i, p in enumerate(audio)]
        for *_, packet, stream in sorted(timed, key=lambda t: t[:3]):
            packet.stream = stream
            out.mux(packet)
    return Path(path)


def fill_ring(ring: PacketRing, path: str | Path, t0: float) -> int:
    """A new segment of `path`'s video packets (and its audio's, when kept), each arriving at `t0` + its decoding
    time; the segment's number."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        sound, audio, _ = audio_params(container)
        params, bsf = stream_params(stream)
        segment = ring.new_segment(dataclasses.replace(params, audio=audio))
        first = None
        for packet in container.demux(*(s for s in (stream, sound) if s is not None)):
            if not packet.size:
                continue
            if sound is not None and packet.stream_index == sound.index:
                at = float(packet.pts * packet.time_base) - float(first * stream.time_base) if first is not None else 0
                ring.add(data=bytes(packet), pts=packet.pts, dts=packet.dts, keyframe=False,
                         duration=packet.duration or 0, wall=t0 + at, audio=True)
                continue
            for p in bsf.filter(packet) if bsf is not None else (packet,):
                first = p.dts if first is None else first
                ring.add(data=bytes(p), pts=p.pts, dts=p.dts, keyframe=p.is_keyframe, duration=p.duration or 0,
                         wall=t0 + float((p.dts - first) * p.time_base))
    return segment


def read_clip(path: str | Path) -> dict:
    """An MP4's top-level boxes, frames decoded (all of them, with PyAV), first and last picture times, duration."""
    data = Path(path).read_bytes()
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        times = [float(f.time) for f in container.decode(stream)]
        duration = container.duration / 1e6 if container.duration else None
        size = (stream.codec_context.width, stream.codec_context.height)
    return {"boxes": top_level_boxes(data), "frames": len(times), "first": min(times), "last": max(times),
            "duration": duration, "size": size}


def seek_and_decode(path: str | Path, seconds: float) -> float:
    """Seek to `seconds` (to the keyframe before) and decode one picture: its time."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        container.seek(int(seconds / stream.time_base), stream=stream)
        frame = next(container.decode(stream))
        return float(frame.time)


class Done:
    """A clip writer's `on_done` for the tests: what came, waited for."""

    def __init__(self):
        self.results: queue.Queue = queue.Queue()

    def __call__(self, event_id, result):
        self.results.put((event_id, result))

    def get(self, timeout: float = 30.0):
        return self.results.get(timeout=timeout)


def read_audio(path: str | Path) -> dict | None:
    """An MP4's audio stream decoded with PyAV: its codec, how long it lasts (samples ÷ rate) and its first and last
    times (None: it has no audio stream)."""
    with av.open(str(path)) as container:
        if not container.streams.audio:
            return None
        stream = container.streams.audio[0]
        frames = [(float(f.time), f.samples, f.sample_rate) for f in container.decode(stream)]
    return {"codec": stream.codec_context.name, "seconds": sum(n / rate for _, n, rate in frames),
            "first": frames[0][0] if frames else None, "last": frames[-1][0] if frames else None}


def clip_of_a_continuous_camera(url: str, storage, say, *, pre_s: float, post_s: float, seen_ago: float,
                                seen_for: float) -> tuple[object, dict, float]:
    """A camera recording `url` continuously into `storage` in 3 s segments, asked (once it has begun its third) for
    the clip of an object first seen `seen_ago` seconds before and in view `seen_for` s: (the clip's `ClipResult`
    or None, the camera's status then, the first sighting), once the camera is closed."""
    from conftest import wait_until

    from zerocopy.record.camera import CameraRecording

    camera = CameraRecording("gate", url, storage.folder, say, policy=FAST, pre_s=pre_s, post_s=post_s,
                             min_free_bytes=0, index=storage.index.put)
    camera.segments.segment_s = 3.0
    camera.start()
    try:
        wait_until(lambda: camera.segments.segments >= 3, timeout=60, what="a third segment")
        first_seen = time.time() - seen_ago
        done = Done()
        camera.request("ev", first_seen, first_seen + seen_for, done)
        _, result = done.get(timeout=60)
        return result, camera.status(), first_seen
    finally:
        assert camera.close(5.0)
