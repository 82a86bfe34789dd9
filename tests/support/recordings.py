"""Helpers for the clip tests (zerocopy/record): clips with a known GOP, a ring filled from a file with arrival
times of the test's choosing, and what an MP4 clip holds when read back with PyAV."""

from __future__ import annotations

import queue
import socket
from pathlib import Path

import av

from zerocopy.decode.live import LivePolicy
from zerocopy.decode.mp4_index import top_level_boxes
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


def fill_ring(ring: PacketRing, path: str | Path, t0: float) -> int:
    """A new segment of `path`'s video packets, each arriving at `t0` + its decoding time; the segment's number."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        params, bsf = stream_params(stream)
        segment = ring.new_segment(params)
        first = None
        for packet in container.demux(stream):
            if not packet.size:
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
