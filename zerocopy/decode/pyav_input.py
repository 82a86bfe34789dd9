"""A `PyAVDecoder`'s input: how it is opened (the first time, and again after a live source drops), its
video stream set up for decoding, what its end or a reading error means, and its frames' timeline
across the drops."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import av

from zerocopy.decode import mp4_index
from zerocopy.decode.damage import LiveReport
from zerocopy.decode.ffmpeg_log import describe_av_error
from zerocopy.decode.live import LivePolicy, network_options, open_abandonable, open_late
from zerocopy.decode.opening import open_input
from zerocopy.errors import InputError


@dataclass(frozen=True, kw_only=True)
class PyAVInput:
    """One input as its decoder opens and reads it: on the CPU with `threads` FFmpeg threads (0:
    FFmpeg's choice), or with a VA-API `hwaccel` whose fixed surface pool grows by `extra_hw_frames`.
    A live source (`kind` other than "file") is read with `policy`'s timeouts, and opened on a thread
    of its own that `stopping` (the decoder's close() or interrupt()) or `run_stop` (the run's stop)
    abandons."""

    path: str
    kind: str  # `sources.source_kind`: "file", "network" or "device"
    policy: LivePolicy
    hwaccel: Any
    extra_hw_frames: int
    threads: int
    stopping: threading.Event
    run_stop: threading.Event | None

    @property
    def single_threaded(self) -> bool:
        """Whether every message of this input is logged on the thread that drives it (no frame
        threads: one decoding thread, or VA-API's hardware decoding)."""
        return self.hwaccel is not None or self.threads == 1

    def open(self, open_timeout: float | None = None) -> av.container.InputContainer:
        """Open the input once (a live source within `open_timeout`, or `policy.open_timeout`)."""
        kwargs: dict = {} if self.hwaccel is None else {"hwaccel": self.hwaccel}
        if self.kind == "file":
            return open_input(self.path, **kwargs)
        kwargs["timeout"] = (open_timeout or self.policy.open_timeout, self.policy.read_timeout)
        if self.kind == "network":
            kwargs["options"] = network_options(self.path, self.policy.read_timeout)
        # on a thread of its own: close() or Ctrl-C need not wait for FFmpeg's timeouts
        return open_abandonable(lambda: open_input(self.path, **kwargs), self.stopping, self.run_stop)

    def open_first(self, live: LiveReport | None) -> av.container.InputContainer:
        """Open the input; a network source not up yet is waited for with `policy.retry_open` (if it
        reconnects: `live.open_late`)."""
        try:
            return self.open()
        except InputError as e:
            if not (self.policy.reconnect and self.policy.retry_open and self.kind == "network"):
                raise
            assert live is not None
            return open_late(self.policy, live, self.run_stop or self.stopping, e, self.open)

    def setup(self, container: av.container.InputContainer):
        """The container's first video stream, set up for decoding."""
        stream = container.streams.video[0]
        if self.hwaccel is None:
            stream.thread_type = "AUTO"
            stream.codec_context.thread_count = self.threads
        elif self.extra_hw_frames:
            stream.codec_context.options = {"extra_hw_frames": str(self.extra_hw_frames)}
        return stream

    def why_ended(self, paces_itself: bool) -> str | None:
        """Why reading stopped at the container's end: None at a file's end, else how the source dropped."""
        if not paces_itself:
            return None  # a file, or a network file of known length: its end
        return "the camera stopped delivering" if self.kind == "device" else "the source closed the stream"

    def why_failed(self, e: BaseException, container: av.container.InputContainer | None, packets: int) -> str:
        """Why reading `container` failed with `e` after `packets` packets."""
        if isinstance(e, av.ExitError) and self.kind != "file":  # PyAV's read timeout interrupted FFmpeg
            return f"no data for {self.policy.read_timeout:g} s"
        why = describe_av_error(e)
        if packets == 0 and self.kind == "network" and container is not None:
            more = mp4_index.explain(self.path, container.format.name)  # the index at the end?
            why += f": {more}" if more else ""
        return why


class Timeline:
    """The frames of a live source that drops and is opened again: the time without frames (from the last
    frame before the drop to the first after it) goes to the `LiveReport`, and timestamps go on from
    the last frame's plus that time (the reopened stream's clock starts over)."""

    def __init__(self, live: LiveReport | None):
        self._live = live  # None for a file: it never drops
        self.last_frame_at: float | None = None  # perf_counter of the last frame delivered
        self._gap_from: float | None = None  # since when no frame has come (after a drop)
        self._last_pts: float | None = None
        self._pts_offset = 0.0

    def dropped(self) -> float:
        """The source dropped: since when no frame has come (the last frame, or now if none came; a drop
        again before the next frame keeps the time of the first)."""
        if self._gap_from is None:
            self._gap_from = self.last_frame_at if self.last_frame_at is not None else time.perf_counter()
        return self._gap_from

    @property
    def offset(self) -> float:
        """What `stamp` adds to the stream's timestamps now (after a reconnection: where the stream's clock restarted
        against ours)."""
        return self._pts_offset

    def stamp(self, pts: float | None, now: float) -> float | None:
        """A frame delivered at `now` (perf_counter) with the stream's `pts`: its pts on this timeline."""
        if self._gap_from is not None:  # the first frame after a reconnection
            gap = now - self._gap_from
            assert self._live is not None
            self._live.add_gap(gap)
            if pts is not None and self._last_pts is not None:
                self._pts_offset = self._last_pts + gap - pts  # the stream's clock restarted: go on from ours
            self._gap_from = None
        if pts is not None:
            pts += self._pts_offset
            self._last_pts = pts
        self.last_frame_at = now
        return pts
