"""What bench measures on: the input's codec, size and rate, and the frames it really holds."""

from __future__ import annotations

import av

from zerocopy.decode.damage import DamageReport
from zerocopy.decode.ffmpeg_log import captured_ffmpeg_log
from zerocopy.decode.opening import open_input

# containers and codecs FFmpeg opens a picture with (as a one-frame video)
_IMAGE_FORMATS = ("image2", "gif", "webp", "apng")
_IMAGE_CODECS = ("mjpeg", "png", "bmp", "tiff", "webp", "gif", "jpeg2000", "jpegls", "qoi", "ppm", "pgm", "apng")


def _count_frames(container, stream, limit: int) -> int:
    """Video packets (one per frame) up to `limit`, as the decoders read them: a container may not
    know its frame count (Matroska, raw streams, pictures) or may claim more than it holds."""
    count = 0
    with captured_ffmpeg_log(DamageReport()):  # a damaged file: the decoders stop where this stops
        try:
            for packet in container.demux(stream):
                if packet.size:
                    count += 1
                    if count >= limit:
                        break
        except av.FFmpegError:
            pass
    return count


def describe_input(path: str, need: int | None = None) -> dict:
    """Codec, size and rate; `frames`: the frame count if known (counted, up to `need`, when the
    container does not say or holds fewer); `available`: frames counted, at most `need`."""
    with open_input(path) as c:
        s = c.streams.video[0]
        cc = s.codec_context
        info = {"path": path, "codec": cc.name, "width": cc.width, "height": cc.height,
                "frames": s.frames or None, "rate": float(s.average_rate) if s.average_rate else None}
        if need:
            counted = _count_frames(c, s, need)
            info["available"] = counted
            if counted < need:
                info["frames"] = counted
        info["still"] = c.format.name.split(",")[0] in _IMAGE_FORMATS or c.format.name.endswith("_pipe") or (
            cc.name in _IMAGE_CODECS and (info["frames"] or 0) <= 1)
        return info
