"""zerocopy.decode.gated: a stream's codec fed as the decode gate decides, on a quiet camera-like clip."""

from __future__ import annotations

import threading

import av
from cameraclips import write_camera_clip

from zerocopy.decode.gate import Demand
from zerocopy.decode.gated import HOLD_S, GatedCodec

FPS = 15


def test_frames_left_undecoded_flow_on_at_most_a_hold_late_and_keyframes_at_once(tmp_path):
    clip = tmp_path / "quiet.mp4"
    write_camera_clip(clip, 16.0, fps=FPS, width=320, height=180)  # a keyframe every 2 s, nothing moving
    demand, stop = Demand(), threading.Event()
    late, decoded, given = [], 0, 0
    with av.open(str(clip)) as container:
        stream = container.streams.video[0]
        gated = GatedCodec(stream.codec_context, stream.time_base, demand, stop, "quiet")
        for packet in container.demux(stream):
            now = float(packet.pts * stream.time_base) if packet.pts is not None else None
            for out in gated.feed(packet, 0.0):
                given += 1
                decoded += out.frame is not None
                demand.judge(False, out.time)  # a consumer that never wants frames
                if now is not None and out.frame is None:
                    late.append(now - out.time)
    assert given == 16 * FPS  # every frame given once, in the end
    assert gated.report.off is None and gated.report.catch_ups == 0
    assert decoded < given / 2  # three keyframe intervals calibrating, then keyframes only
    assert late and max(late) <= HOLD_S + 1.5 / FPS < 2.0  # not held to the next keyframe, 2 s on


def test_a_stream_whose_clock_goes_back_keeps_every_frame(tmp_path):
    """A looped stream (and MPEG-TS's clock wrapping after 26.5 hours) repeats timestamps: frames are not taken for
    ones given before by their timestamps."""
    clip = tmp_path / "loop.mp4"
    write_camera_clip(clip, 8.0, fps=FPS, width=320, height=180)
    demand, stop = Demand(), threading.Event()
    given = []
    with av.open(str(clip)) as first:
        gated = GatedCodec(first.streams.video[0].codec_context, first.streams.video[0].time_base, demand, stop, "loop")
    for _ in range(3):  # the same packets three times: the clock back to 0 at each loop
        with av.open(str(clip)) as container:
            stream = container.streams.video[0]
            for packet in container.demux(stream):
                for out in gated.feed(packet, 0.0):
                    given.append(out.time)
                    demand.judge(False, out.time)
    assert len(given) == 3 * 8 * FPS
    assert given == [i / FPS for i in range(8 * FPS)] * 3
