"""Telling a stream that nothing decodes (e.g. a codec the GPU cannot decode) from one that merely starts
mid-GOP, before its first frame: `PyAVDecoder`'s `give_up_without_frame`."""

from __future__ import annotations

import av

from zerocopy.decode.ffmpeg_log import describe_av_error


class NothingDecodes(Exception):
    """Packet after packet fails and no frame has come out (e.g. a codec the GPU cannot decode)."""


class FirstFrameWatch:
    """Counts a stream's packets until its first frame. With `limit` = N (0: never), N packets in a row
    that fail to decode, or 4 × N that give no frame and no error, raise `NothingDecodes`; both count
    from the first keyframe on. Told of each packet in order: `read`, then `decoded` or `failed`, then
    `gave`."""

    def __init__(self, limit: int):
        self.limit = limit
        self.decoded_any = False
        self._failed_in_a_row, self._seen, self._keyframe_seen = 0, 0, False
        self._before_key = 0  # packets read before the first keyframe

    def read(self, packet: av.Packet | None) -> None:
        """A packet was read (None: reading failed; it is decoded as a flush)."""
        limit = self.limit
        # A stream that starts mid-GOP (a cut file, a camera joined late) fails on every packet
        # until its first keyframe, on any decoder: those packets say nothing about the decoder.
        self._before_key += not self._keyframe_seen
        # (a demuxer that flags no keyframe at all: count anyway after ~10 × the limit)
        self._keyframe_seen = (self._keyframe_seen or (packet is not None and packet.is_keyframe)
                               or (limit and self._before_key > 10 * limit))
        self._seen += self._keyframe_seen

    def decoded(self) -> None:
        """The packet decoded without an error."""
        self._failed_in_a_row = 0

    def failed(self, e: av.FFmpegError) -> None:
        """The packet failed to decode (called in the `except` that caught `e`)."""
        self._failed_in_a_row += self._keyframe_seen
        if self.limit and not self.decoded_any and self._failed_in_a_row >= self.limit:
            raise NothingDecodes(f"{self._failed_in_a_row} packets in a row from a keyframe on failed to "
                                 f"decode and none gave a frame (last error: {describe_av_error(e)})") from None

    def gave(self, frames: list) -> None:
        """What the packet's decoding gave (nothing, when it failed)."""
        self.decoded_any = self.decoded_any or bool(frames)
        if self.limit and not self.decoded_any and self._seen >= 4 * self.limit:  # silent failure: no error, no frame
            raise NothingDecodes(f"{self._seen} packets from a keyframe on gave no frame")
