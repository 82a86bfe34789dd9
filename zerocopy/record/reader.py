"""A camera's `record_url` read into its `PacketRing`: demuxed only (never decoded), its video stream and its audio
stream when MP4 can hold it (`record.audio`; another audio codec is said once, and left out), on a thread of its own.

It is opened as the decoders open a live source (`decode.pyav_input.PyAVInput`: the same FFmpeg options,
timeouts, and an open that `close()` abandons) and opened again after a drop with the same back-off
(`decode.live.reopen`), for ever: each opening is a new segment of the ring. A file (`loop = true` cameras) is
paced at its timestamps as a camera would send it, and played again from its start at its end, its timestamps
going on (one segment). A source that cannot be opened or drops is said once per reason and shown in
`status()`; nothing is raised: detection, which reads another stream (or the same one on another connection),
goes on. Like the decoders, `close()` cannot interrupt a read FFmpeg is blocked in: a thread still waiting after
`CLOSE_GRACE_S` is left to end at the read timeout (`policy.read_timeout`), and closes its input itself.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import av
import av.bitstream
import av.stream

from zerocopy.decode.damage import LiveReport
from zerocopy.decode.live import LivePolicy, OpenAbandoned, Pacer, reopen
from zerocopy.decode.pyav_input import PyAVInput
from zerocopy.errors import InputError
from zerocopy.record.audio import audio_params
from zerocopy.record.ring import PacketRing, StreamParams
from zerocopy.redaction import redact, redact_text
from zerocopy.sources import source_kind

CLOSE_GRACE_S = 0.5  # how long close() waits for the reading thread
FOREVER_S = 365 * 24 * 3600.0  # a record_url is never given up (like serve's cameras)
RECORD_POLICY = LivePolicy(reconnect=True, retry_open=True, give_up_after=FOREVER_S)
ANNEX_B = (b"\x00\x00\x01", b"\x00\x00\x00\x01")
# codecs whose parameter sets, kept apart by the container, may stand before a clip's first packet as they are
IN_BAND_HEADERS = {"h264", "hevc", "mpeg4", "mpeg2video"}


@dataclass(frozen=True, kw_only=True)
class RecorderStatus:
    """A recorder now: `state` is starting, recording, reconnecting, ended (a file without loop) or stopped;
    `error` why it is not recording (None while it is)."""

    state: str
    error: str | None
    reconnects: int
    codec: str | None
    width: int | None
    height: int | None
    audio: str | None = None  # the audio codec kept (None: no audio kept)
    audio_note: str | None = None  # why the camera's audio is not kept (None: it is, or it sends none)

    @property
    def recording(self) -> bool:
        return self.state == "recording"


def stream_params(stream: Any) -> tuple[StreamParams, Any]:
    """The parameters a clip's MP4 needs of a video `stream`, and the bitstream filter its packets must go through
    (None: none): H.264/HEVC whose parameter sets the container keeps apart in length-prefixed form (MP4, MKV) are
    turned into Annex B with the parameter sets before each keyframe, as cameras send them, so that every segment's
    packets are alike whatever their source."""
    codec = stream.codec_context
    extradata = codec.extradata or None
    bsf = None
    if codec.name in ("h264", "hevc") and extradata is not None and not extradata.startswith(ANNEX_B):
        bsf = av.bitstream.BitStreamFilterContext(f"{codec.name}_mp4toannexb", in_stream=stream)
        extradata = None
    elif codec.name not in IN_BAND_HEADERS:
        extradata = None
    params = StreamParams(codec=codec.name, width=codec.width, height=codec.height, time_base=stream.time_base,
                          rate=stream.average_rate, extradata=extradata)
    return params, bsf


class Recorder:
    """Reads `url` into `ring` until `close()`. `say` gets one line per new trouble (`camera NAME: record_url …`);
    `shown` is the URL as it may be shown (default: `redact(url)`); `loop`: a file played as a camera."""

    def __init__(self, url: str, ring: PacketRing, say: Callable[[str], None], *, camera: str,
                 shown: str | None = None, loop: bool = False, policy: LivePolicy = RECORD_POLICY,
                 clock: Callable[[], float] = time.time):
        self.url, self.ring, self.say, self.camera = url, ring, say, camera
        self.kind = source_kind(url)
        self.shown = shown or redact(url)
        self.loop, self.policy, self.clock = loop, policy, clock
        self._stopping = threading.Event()
        self._input = PyAVInput(path=url, kind=self.kind, policy=policy, hwaccel=None, extra_hw_frames=0, threads=1,
                                stopping=self._stopping, run_stop=None)
        self.live = LiveReport()  # drops, reconnections, attempts
        self.state, self.error = "starting", None
        self._lock = threading.Lock()
        self._said: str | None = None  # the last trouble said (each is said once until recording again)
        self._failed_open = False  # an opening failed since the last time it recorded
        self._thread: threading.Thread | None = None
        self._pace: Pacer | None = None
        self._next_dts: int | None = None  # a looped file: where its timestamps go on at its next start
        self._offset = 0  # added to a looped file's timestamps
        self._rebase = False  # the next packet starts the looped file again
        self._audio_note: str | None = None  # why its audio is left out (said once each)

    @property
    def recording(self) -> bool:
        """Whether packets are coming into the ring now (a plain read: safe from any thread, under any lock)."""
        return self.state == "recording"

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"zc-record-{self.camera}", daemon=True)
        self._thread.start()

    def close(self, timeout: float = CLOSE_GRACE_S) -> bool:
        """Stop reading; True if the reading thread ended within `timeout` (else it ends at its read timeout)."""
        self._stopping.set()
        self.ring.poke()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def join(self, timeout: float) -> bool:
        """Wait for the reading thread to end (after `close()`); True if it has."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def status(self) -> RecorderStatus:
        params = self.ring.params()
        with self._lock:
            return RecorderStatus(state=self.state, error=self.error, reconnects=self.live.reconnects,
                                  codec=params.codec if params else None, width=params.width if params else None,
                                  height=params.height if params else None,
                                  audio=params.audio.codec if params and params.audio else None,
                                  audio_note=self._audio_note)

    # --- the reading thread -------------------------------------------------------------------------------------
    def _run(self) -> None:
        try:
            container = self._open_first()
            while container is not None and not self._stopping.is_set():
                why = self._record(container)
                if self._stopping.is_set():
                    break
                if why is None:  # a file's end: with loop, from its start again at once
                    container = self._reopen_file() if self.loop else self._ended()
                    continue
                self.live.drops += 1
                self._trouble("reconnecting", f"dropped ({why}); reconnecting")
                container = self._reopen(why)
        except Exception as e:  # a bug must not pass unsaid, nor reach detection
            self._trouble("stopped", f"stopped: internal error: {type(e).__name__}: {e}")
        finally:
            with self._lock:
                if self.state != "ended":
                    self.state = "stopped"
            self.ring.end_segment()

    def _open_first(self) -> Any:
        try:
            return self._input.open()
        except OpenAbandoned:
            return None
        except InputError as e:
            why = self._why(e)
            self._cannot_open(why)
            if self.kind == "file":
                self._trouble("ended", f"cannot open: {why}")
                return None
            container = self._reopen(f"not reachable at start: {why}")
            if container is not None:
                self.live.reconnects -= 1  # not a reconnection: the first opening, late
            return container

    def _why(self, e: InputError) -> str:
        """An opening's error without the URL it begins with (it may hold a password)."""
        text = str(e)
        for prefix in (f"{self.url}: cannot open: ", f"{self.url}: "):
            if text.startswith(prefix):
                return text[len(prefix):]
        return text.split(": cannot open: ", 1)[-1]

    def _reopen(self, why: str) -> Any:
        """The source opened again after the policy's back-off (None when stopped)."""
        return reopen(self.policy, self.live, self._stopping, time.perf_counter(), why, self._input.open,
                      failed=self._cannot_open)

    def _reopen_file(self) -> Any:
        try:
            container = self._input.open()
        except OpenAbandoned:
            return None
        except InputError as e:
            self._trouble("ended", f"cannot open again: {self._why(e)}")
            return None
        self._rebase = True
        return container

    def _record(self, container: Any) -> str | None:
        """The container's video packets (and audio's) into the ring; why reading stopped (None: a looped file's
        end)."""
        packets_read = 0
        try:
            stream = container.streams.video[0]
            sound, audio, note = audio_params(container)
            self._audio(note)
            for other in container.streams:
                if other.index != stream.index and (sound is None or other.index != sound.index):
                    other.discard = av.stream.Discard.all
            params, bsf = stream_params(stream)
            params = replace(params, audio=audio)
            if not (self._rebase and params == self.ring.params()):
                self.ring.new_segment(params)
                self._rebase, self._offset = False, 0
                self._pace = Pacer(float(stream.average_rate or 25), self._stopping.wait)
            self._recording(params)
            # a camera or a live stream sends at its own pace; a file (or one of known length over the network) is
            # held back to its timestamps, as a camera would send it
            paced = self.kind == "file" or (self.kind == "network" and container.duration is not None)
            packets = container.demux(stream, sound) if sound is not None else container.demux(stream)
            while not self._stopping.is_set():
                try:
                    packet = next(packets)
                except StopIteration:
                    return None if self.kind == "file" else self._input.why_ended(True)
                except av.FFmpegError as e:
                    return self._input.why_failed(e, container, packets_read)
                packets_read += 1
                if packet.size and sound is not None and packet.stream_index == sound.index:
                    self._keep_audio(packet, params)
                elif packet.size:
                    for p in bsf.filter(packet) if bsf is not None else (packet,):
                        self._keep(p, paced)
            return None
        finally:
            container.close()
            if not (self.loop and self.kind == "file" and not self._stopping.is_set()):
                self.ring.end_segment()

    def _keep(self, packet: Any, paced: bool) -> None:
        pts, dts = packet.pts, packet.dts
        if self._rebase:  # a looped file started again: its timestamps go on from where they stopped
            first = dts if dts is not None else pts
            self._offset = (self._next_dts - first) if first is not None and self._next_dts is not None else 0
            self._rebase = False
        pts = pts + self._offset if pts is not None else None
        dts = dts + self._offset if dts is not None else None
        at = dts if dts is not None else pts
        if paced and self._pace is not None and at is not None and not self._pace(float(at * packet.time_base)):
            return  # stopped while waiting
        duration = packet.duration or 0
        self.ring.add(data=bytes(packet), pts=pts, dts=dts, keyframe=packet.is_keyframe, duration=duration,
                      wall=self.clock())
        if dts is not None:
            self._next_dts = dts + max(1, duration)

    def _keep_audio(self, packet: Any, params: StreamParams) -> None:
        """An audio packet, its timestamps moved on as the video's are (a looped file)."""
        if self._rebase:
            return  # (a looped file's first packets, before its first video packet has set where it goes on)
        offset = round(self._offset * params.time_base / params.audio.time_base) if params.audio else 0
        pts = packet.pts + offset if packet.pts is not None else None
        dts = packet.dts + offset if packet.dts is not None else None
        self.ring.add(data=bytes(packet), pts=pts, dts=dts, keyframe=False, duration=packet.duration or 0,
                      wall=self.clock(), audio=True)

    def _audio(self, note: str | None) -> None:
        """Why the audio of this opening is left out (None: kept, or none), said once for each reason."""
        with self._lock:
            new, self._audio_note = note is not None and note != self._audio_note, note
        if new:
            self.say(f"camera {self.camera}: recording from {self.shown}: {note}")

    def _ended(self) -> None:
        """A file without loop has been read to its end: nothing more comes."""
        with self._lock:
            self.state, self.error = "ended", "the file ended (it is not looped)"

    # --- what it says -------------------------------------------------------------------------------------------
    def _recording(self, params: StreamParams) -> None:
        """Said at the first opening, and again after openings that failed (a drop followed at once by a
        reconnection is not said again with the same reason: a source that keeps dropping says it once)."""
        with self._lock:
            was, self.state, self.error = self.state, "recording", None
            failed, self._failed_open = self._failed_open, False
            if failed:
                self._said = None
        if was == "starting" or failed:
            again = " again" if failed and was != "starting" else ""
            self.say(f"camera {self.camera}: recording from {self.shown}{again} "
                     f"({params.codec} {params.width}×{params.height})")

    def _cannot_open(self, why: str) -> None:
        with self._lock:
            self._failed_open = True
        self._trouble(None, f"cannot open: {redact_text(why)}")

    def _trouble(self, state: str | None, what: str) -> None:
        """Not recording now (`state`; None: unchanged) because of `what`: shown in the status, and said once."""
        with self._lock:
            if state is not None:
                self.state = state
            self.error = what
            new, self._said = what != self._said, what
        if new:
            self.say(f"camera {self.camera}: recording from {self.shown}: {what}; detection goes on")
