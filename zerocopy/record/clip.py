"""An event's clip: the ring's packets of one segment, from a keyframe, remuxed into an MP4 without decoding.

The MP4 has its index first (`movflags=+faststart`): a browser plays it as it downloads and seeks with byte
ranges. Its timestamps are rebased so that its first picture is at 0. It is written under a temporary name
beside its place (`sinks.files.Staged`: made new, never through a link; 0600 here, whatever the umask) and renamed
into place once whole, so a half-written clip is never served. The stream is made from the segment's parameters
(`add_mux_stream`): its parameter sets are taken from the first keyframe (the ring keeps H.264/HEVC in Annex B,
the parameter sets before each keyframe; those a camera sent apart are put before the clip's first packet). The
audio packets shown with its pictures, when the camera sends audio MP4 can hold, go in beside them (`record.audio`).
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import av

from zerocopy.errors import ZeroCopyError
from zerocopy.record.audio import add_audio_stream, audio_base, mux_audio
from zerocopy.record.ring import PacketRing, RecordedPacket, StreamParams, Window
from zerocopy.sinks.files import Staged
from zerocopy.store.folder import PRIVATE_FILE

# below this much free space on the recordings' disk, neither a clip nor a segment is written (writer.py, segments.py)
MIN_FREE_BYTES = 256 * 2**20

MP4_OPTIONS = {"movflags": "+faststart"}


class ClipError(ZeroCopyError):
    """A clip could not be made of the ring's packets (a codec MP4 cannot hold, FFmpeg refused a packet)."""


@dataclass(frozen=True, kw_only=True)
class ClipResult:
    """What `write_clip` wrote."""

    path: Path
    seconds: float  # from its first picture to the end of its last
    bytes: int
    packets: int
    first_wall: float  # the arrival (Unix time) of its first packet and its last
    last_wall: float
    cut_at_gap: bool  # it stops (or starts) at a gap in the recording (a reconnection): the rest was never recorded
    late_start: bool  # the ring no longer held the start asked for (or recording began after it)
    early_end: bool  # the record stream had not reached the end asked for when it was written


def write_clip(ring: PacketRing, first_seen_wall: float, last_seen_wall: float, pre_s: float, post_s: float,
               path: str | Path) -> ClipResult:
    """The clip of an object seen from `first_seen_wall` to `last_seen_wall` (Unix times), `pre_s` seconds before
    (from the keyframe at or before) to `post_s` after, within one segment of `ring`, written to `path`.
    Raises `ring.NoFootage` (nothing of that time held), `ClipError`, or `OSError` (a full disk: nothing is left
    at `path` or under the temporary name)."""
    return remux(ring.window(first_seen_wall, last_seen_wall, pre_s, post_s), path)


def add_stream(out: Any, params: StreamParams) -> Any:
    """The video stream of `params` added to the output container `out` (a clip's, a segment's). Raises
    `ClipError` for a codec MP4 cannot hold."""
    try:
        return out.add_mux_stream(params.codec, rate=params.rate, width=params.width, height=params.height,
                                  time_base=params.time_base)
    except ValueError as e:
        raise ClipError(f"cannot make an MP4 of {params.codec} video: {e}") from None


def mux(out: Any, stream: Any, params: StreamParams, kept: RecordedPacket, base: int, first: bool) -> None:
    """One kept packet into `stream` of `out`, its timestamps less `base`; the `first` of a file carries the
    parameter sets the stream keeps apart."""
    packet = av.Packet(params.extradata + kept.data if first and params.extradata else kept.data)
    packet.pts, packet.dts = kept.pts - base, kept.dts - base
    packet.duration, packet.is_keyframe = kept.duration, kept.keyframe
    packet.time_base = params.time_base
    packet.stream = stream
    out.mux(packet)


def _in_time(params: StreamParams, video: Sequence[RecordedPacket], audio: Sequence[RecordedPacket]
             ) -> Iterator[RecordedPacket]:
    """Video and audio packets in one order, by decoding time."""
    if not audio or params.audio is None:
        return iter(video)
    tick, audio_tick = float(params.time_base), float(params.audio.time_base)
    return heapq.merge(video, audio, key=lambda p: p.dts * (audio_tick if p.audio else tick))


def remux(window: Window, path: str | Path) -> ClipResult:
    """`window`'s packets into an MP4 at `path` (by a temporary name, renamed once whole)."""
    params, packets = window.params, window.packets
    staged = Staged(path)
    base = packets[0].pts
    try:
        name = staged.ffmpeg_name()
        os.chmod(name, PRIVATE_FILE)  # (`/proc/self/fd/N`: the very file made)
        with av.open(name, "w", format="mp4", options=dict(MP4_OPTIONS)) as out:
            stream = add_stream(out, params)
            sound = add_audio_stream(out, params.audio) if params.audio is not None and window.audio else None
            first, first_audio = True, True
            for kept in _in_time(params, packets, window.audio if sound is not None else ()):
                if kept.audio and params.audio is not None:
                    mux_audio(out, sound, params.audio, kept, audio_base(base, params), first=first_audio)
                    first_audio = False
                else:
                    mux(out, stream, params, kept, base, first=first)
                    first = False
    except OSError:
        staged.discard()
        raise
    except av.FFmpegError as e:
        staged.discard()
        raise ClipError(f"cannot write the clip {path}: {e}") from None
    except BaseException:
        staged.discard()
        raise
    staged.finish(keep=True)
    end = max(p.pts + p.duration for p in packets)
    return ClipResult(path=staged.path, seconds=round(float((end - base) * params.time_base), 3),
                      bytes=staged.path.stat().st_size, packets=len(packets), first_wall=packets[0].wall,
                      last_wall=packets[-1].wall, cut_at_gap=window.cut_at_gap, late_start=window.late_start,
                      early_end=window.early_end)
