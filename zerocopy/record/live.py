"""A camera's live video for a browser: its ring's packets as they come, remuxed (never decoded) into fragmented MP4,
which Media Source Extensions play (docs/serve.md, *Live video*).

A `LiveStream` starts at the newest keyframe the ring holds (the picture is there at once; the page seeks to the live
edge) and gives an init segment (`ftyp`, `moov`) and then a fragment per `FRAGMENT_S` of video or per keyframe
interval, whichever is shorter, each as soon as the packet after it has come. It goes on across the ring's segments
(a reconnection, a new clock: from the new segment's first keyframe, its timestamps following on); a stream that
changed (its codec, its size) or a viewer too slow for it ends it (`LiveEnded`: the page opens it again, from the
newest keyframe). It never waits: `read()` takes what the ring holds since its last call (`PacketRing.follow`
with no wait), so a viewer costs the camera's reading thread nothing but the ring's lock for a copy of references.
At most `MAX_VIEWERS` streams are open at once in the process (`open_live`).
"""

from __future__ import annotations

import contextlib
import threading

import av

from zerocopy.errors import ZeroCopyError
from zerocopy.record.clip import add_stream, mux
from zerocopy.record.ring import PacketRing, RecordedPacket, StreamParams

FRAGMENT_S = 0.5  # a fragment is cut at each keyframe and after this much video: the latency it adds
MAX_BEHIND_S = 5.0  # a viewer whose connection held back this much of the stream is cut off (it opens it again)
MAX_VIEWERS = 16  # live streams open at once (each an HTTP connection of serve's 100, and the stream's bit rate)
LIVE_CODECS = {"h264": "H.264", "hevc": "H.265"}
MP4_OPTIONS = {"movflags": "frag_keyframe+empty_moov+default_base_moof",
               "frag_duration": str(int(FRAGMENT_S * 1_000_000))}


class NoLive(ZeroCopyError):
    """No live stream can be given; `retry_s`: in how long to ask again (None: not for this stream, whose codec
    a browser cannot play)."""

    def __init__(self, message: str, retry_s: int | None = 2):
        super().__init__(message)
        self.retry_s = retry_s


class LiveEnded(ZeroCopyError):
    """The stream cannot go on (why in its message): the camera reconnected, or the viewer fell behind."""


class _Chunks:
    """The file object FFmpeg writes the MP4 to: what it wrote since the last `take()`."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        return len(data)

    def take(self) -> bytes:
        data, self.parts = b"".join(self.parts), []
        return data


class LiveStream:
    """One viewer's fragmented MP4 of `ring`, from its newest keyframe. `first` is the init segment and the
    fragments of the pictures held from that keyframe on; then `read()` again and again (b"" while nothing new is
    complete), on any thread but one at a time; `close()` at the end. `codec` is the stream's codec as a MIME type
    names it (RFC 6381: `avc1.64001f`); `start_wall` the Unix time its first packet arrived."""

    def __init__(self, ring: PacketRing):
        held = ring.follow(0, 0.0)
        if not held.packets:
            raise NoLive("the camera's record stream has sent nothing yet")
        segment = held.packets[-1].segment
        params = ring.params_of(segment)
        key = next((i for i in range(len(held.packets) - 1, -1, -1)
                    if held.packets[i].keyframe and held.packets[i].segment == segment), None)
        if params is None or key is None:
            raise NoLive("the camera's record stream has sent no keyframe yet")
        if params.codec not in LIVE_CODECS:
            raise NoLive(f"the camera's record stream is {params.codec}: live video is H.264 or H.265 only", None)
        self.ring, self.params, self.segment, self.cursor = ring, params, segment, held.cursor
        first = held.packets[key]
        self.start_wall, self._base, self._next = first.wall, first.dts, 0
        self._chunks = _Chunks()
        self._out = av.open(self._chunks, "w", format="mp4", options=dict(MP4_OPTIONS))
        self._video = add_stream(self._out, params)
        self._closed = False
        self._mux(held.packets[key:], first=True)
        self.first = self._chunks.take()
        self.codec = codec_string(self.first, params)

    def read(self) -> bytes:
        """The MP4 made of the packets that came since the last call (b"": none complete a fragment yet).
        `LiveEnded` when the stream cannot go on."""
        if self._closed:
            raise LiveEnded("the stream is closed")
        got = self.ring.follow(self.cursor, 0.0)
        self.cursor = got.cursor
        if got.lost:
            raise LiveEnded("the viewer fell behind the camera's ring")
        if got.packets and (got.packets[-1].wall - got.packets[0].wall) > MAX_BEHIND_S:
            raise LiveEnded(f"the viewer's connection held the stream back more than {MAX_BEHIND_S:g} s")
        self._mux(got.packets)
        return self._chunks.take()

    def _mux(self, packets: list[RecordedPacket], first: bool = False) -> None:
        """`packets` into the MP4. A packet of a later segment (the camera reconnected, or its clock started again)
        of the same stream goes on from where the last one stopped, from its first keyframe (those before it are
        left out: they cannot decode); of another stream (codec, size), it ends the stream."""
        for kept in packets:
            if kept.segment != self.segment:
                if self.ring.params_of(kept.segment) != self.params:
                    raise LiveEnded("the camera's stream changed (its codec or its size)")
                if not kept.keyframe:
                    continue
                self.segment, self._base, first = kept.segment, kept.dts - self._next, True
            try:
                mux(self._out, self._video, self.params, kept, self._base, first=first)
            except av.FFmpegError as e:
                raise LiveEnded(f"FFmpeg refused a packet: {e}") from None
            first = False
            self._next = kept.dts - self._base + max(1, kept.duration)

    def close(self) -> None:
        """Let go of the muxer; what it still held is dropped (a viewer that is gone needs no last fragment)."""
        if not self._closed:
            self._closed = True
            with contextlib.suppress(av.FFmpegError):
                self._out.close()
            self._chunks.parts.clear()


class _Viewers:
    """How many live streams are open, at most `limit` (thread-safe)."""

    def __init__(self, limit: int):
        self.limit, self.open = limit, 0
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            if self.open >= self.limit:
                return False
            self.open += 1
            return True

    def give_back(self) -> None:
        with self._lock:
            self.open -= 1


VIEWERS = _Viewers(MAX_VIEWERS)


class Viewer(LiveStream):
    """A `LiveStream` that holds one of the `MAX_VIEWERS` places until it is closed (`open_live`)."""

    def close(self) -> None:
        if not self._closed:
            VIEWERS.give_back()
        super().close()


def open_live(ring: PacketRing) -> Viewer:
    """A live stream of `ring` for a new viewer; `NoLive` when `MAX_VIEWERS` are watching already, or when the ring
    has no keyframe yet, or its codec is not one a browser may play."""
    if not VIEWERS.take():
        raise NoLive(f"{MAX_VIEWERS} live viewers are watching already; try again later", retry_s=10)
    try:
        return Viewer(ring)
    except BaseException:
        VIEWERS.give_back()
        raise


def codec_string(init: bytes, params: StreamParams) -> str:
    """The codec of the init segment `init` as RFC 6381 writes it for MP4 (`avc1.PPCCLL`, `hev1.1.6.L93.B0`),
    read from its sample entry's `avcC` or `hvcC`; FFmpeg's codec name when neither is found."""
    at = init.find(b"avcC")
    if at >= 0 and len(init) >= at + 8:
        return "avc1." + init[at + 5:at + 8].hex()
    at = init.find(b"hvcC")
    if at >= 0 and len(init) >= at + 17:
        return _hevc_string("hvc1" if b"hvc1" in init[:at] else "hev1", init[at + 4:at + 17])
    return params.codec


def _hevc_string(entry: str, hvcc: bytes) -> str:
    """ISO/IEC 14496-15 annex E's string for HEVC, from an `hvcC`'s first 13 bytes."""
    space, tier, profile = hvcc[1] >> 6, (hvcc[1] >> 5) & 1, hvcc[1] & 0x1F
    compatible = int.from_bytes(hvcc[2:6], "big")
    reversed_flags = int(f"{compatible:032b}"[::-1], 2)
    constraints = hvcc[6:12].rstrip(b"\0")
    text = f"{entry}.{('', 'A', 'B', 'C')[space]}{profile}.{reversed_flags:x}.{'LH'[tier]}{hvcc[12]}"
    return text + "".join(f".{b:02X}" for b in constraints)
