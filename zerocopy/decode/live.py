"""Live sources: network URLs and V4L2 cameras, what to tell FFmpeg about them, reconnecting, pacing.

A *live* source has no end known in advance and delivers frames at its own pace: any FFmpeg network
URL (rtsp, http(s), udp, tcp, rtmp, srt, …) or a V4L2 camera (`/dev/videoN`). `PyAVDecoder` reads
them with timeouts (a dead server does not hang the run), re-opens a network source that drops when
asked to (`LivePolicy.reconnect`), and reports each gap in a `LiveReport`. `realtime` paces a file at
its own timestamps instead, to stand in for a camera. (Which sources are live: `zerocopy.sources`.)
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from zerocopy.decode.base import Decoded, VideoDecoder
from zerocopy.decode.damage import DamageReport, LiveReport
from zerocopy.errors import InputError, counted
from zerocopy.redaction import redact_text
from zerocopy.sources import url_scheme


def network_options(url: str, timeout_s: float) -> dict[str, str]:
    """FFmpeg options for `url`: a socket I/O timeout under the name its protocol takes (FFmpeg 8), and
    RTSP over TCP (interleaved: no UDP ports to open, no packets lost on the way).

    - tcp.c, udp.c, and http(s) (whose options reach the TCP/TLS socket below): `timeout`, in µs;
    - rtsp.c: `timeout` (µs) is the socket I/O timeout since FFmpeg 5 (it was `stimeout`; the old
      `timeout`, waiting for an incoming connection, is now `listen_timeout`);
    - rtmpproto.c: `timeout` means *listen* for a connection, so only the generic URLContext
      `rw_timeout` (µs) is safe; the same generic option serves srt and the rest.
    """
    us = str(max(1, int(timeout_s * 1e6)))
    scheme = url_scheme(url) or ""
    if scheme in ("rtsp", "rtsps"):
        return {"rtsp_transport": "tcp", "timeout": us}
    if scheme in ("http", "https", "tcp", "udp", "tls"):
        return {"timeout": us}
    return {"rw_timeout": us}


@dataclass(frozen=True, kw_only=True)
class LivePolicy:
    """How long to wait on a live source, and whether and how to reconnect to one that drops.

    With `reconnect`, a network source that drops is opened again after `backoff_initial` seconds,
    then after twice that, and so on up to `backoff_max` between attempts, until a frame comes or
    `give_up_after` seconds have passed since the last frame.
    """

    open_timeout: float = 10.0  # connecting and reading the stream's header
    read_timeout: float = 5.0  # waiting for data mid-stream before the read counts as failed
    backoff_initial: float = 0.5
    backoff_max: float = 8.0
    give_up_after: float = 60.0
    reconnect: bool = False  # re-open a network source that drops, with back-off
    retry_open: bool = False  # with reconnect: a network source that cannot be opened at start is retried too

    def delays(self):
        """The waits before each reconnection attempt: 0.5, 1, 2, 4, 8, 8, … (by default)."""
        delay = self.backoff_initial
        while True:
            yield delay
            delay = min(delay * 2, self.backoff_max)


class Pacer:
    """Holds frames back until their timestamp is due on a wall clock started at the first frame.

    `wait(seconds)` sleeps and returns True when interrupted (e.g. `threading.Event.wait`). A frame
    without a timestamp is due one frame period after the previous one. A timestamp that goes back
    starts the clock again from that frame; so does a *discontinuity*, as players treat one: a jump
    from the previous frame's timestamp, either way, of more than `JUMP_PERIODS` frame periods and
    more than `JUMP_MIN_S` (e.g. an MPEG-TS whose clock jumps an hour ahead is not held an hour).
    `discontinuities` counts those (`on_discontinuity`, if set, is called at each). Late frames are not
    held: a consumer slower than the source simply runs behind.
    """

    JUMP_PERIODS, JUMP_MIN_S = 10, 1.0

    def __init__(self, rate: float, wait: Callable[[float], bool], clock: Callable[[], float] = time.perf_counter,
                 on_discontinuity: Callable[[], None] | None = None):
        self.period = 1.0 / rate if rate > 0 else 0.04
        self.jump = max(self.JUMP_PERIODS * self.period, self.JUMP_MIN_S)
        self.wait, self.clock, self.on_discontinuity = wait, clock, on_discontinuity
        self.discontinuities = 0
        self._origin: float | None = None  # wall time of the anchor frame
        self._anchor = 0.0  # its timestamp
        self._last: float | None = None

    def __call__(self, pts: float | None) -> bool:
        """Wait until the frame at `pts` is due; False if the wait was interrupted."""
        if pts is None:
            pts = self._last + self.period if self._last is not None else 0.0
        now = self.clock()
        jumped = self._last is not None and abs(pts - self._last) > self.jump
        if self._origin is None or self._last is None or pts < self._last or jumped:
            self._origin, self._anchor = now, pts
        if jumped:
            self.discontinuities += 1
            if self.on_discontinuity is not None:
                self.on_discontinuity()
        self._last = pts
        due = self._origin + (pts - self._anchor)
        return not (due > now and self.wait(due - now))


class Paced:
    """Realtime pacing for a decoder that has none of its own (the OpenCV baseline's): its frames held
    back until their timestamps are due, each a `Decoded`; its rate, length and damage are the
    decoder's."""

    realtime = True
    live = False
    frames_ready = 0  # it decodes on the consumer's thread: nothing waits ahead

    def __init__(self, decoder: VideoDecoder):
        self.decoder = decoder
        self._stop = threading.Event()

    @property
    def rate(self) -> float:
        return self.decoder.rate

    @property
    def expected_frames(self) -> int | None:
        return self.decoder.expected_frames

    @property
    def damage(self) -> DamageReport:
        return self.decoder.damage

    def frames(self) -> Iterator[Decoded]:
        pace = Pacer(self.decoder.rate, self._stop.wait, on_discontinuity=lambda: self.damage.count_discontinuity())
        with contextlib.closing(self.decoder.frames()) as frames:  # closed here (see `paths.base`)
            for decoded in frames:
                if not pace(decoded.pts):
                    return
                yield Decoded(decoded.frame, decoded.decode_ms, decoded.pts, time.perf_counter())

    def interrupt(self) -> None:
        self._stop.set()

    def close(self) -> None:
        self._stop.set()
        self.decoder.close()


class OpenAbandoned(Exception):
    """The source was being opened when the reader was closed or interrupted."""


def open_abandonable(opener: Callable[[], Any], *stops: threading.Event | None, poll: float = 0.05) -> Any:
    """`opener()` on a thread of its own, so that a network open (bounded only by its own timeout, and
    deaf to Ctrl-C while FFmpeg waits) can be left behind: when one of `stops` is set first, or the waiting
    thread is interrupted, this raises (`OpenAbandoned`, or the interruption) at once, and whatever the
    opener still returns is closed on its thread. The opener's own exception is raised here."""
    result: dict[str, Any] = {}
    done = threading.Event()
    lock = threading.Lock()
    abandoned = False

    def run() -> None:
        try:
            value = opener()
        except BaseException as e:  # handed to the waiting thread
            result["error"] = e
        else:
            with lock:
                if not abandoned:
                    result["value"] = value
                    value = None
            if value is not None:
                value.close()
        finally:
            done.set()

    threading.Thread(target=run, name="zerocopy-open", daemon=True).start()
    try:
        while not done.wait(poll):
            if any(stop is not None and stop.is_set() for stop in stops):
                raise OpenAbandoned("stopped while opening")
    except BaseException:
        with lock:
            abandoned = True
            value = result.pop("value", None)
        if value is not None:
            value.close()
        raise
    if "error" in result:
        raise result["error"]
    return result["value"]


# Told of every failed opening of a source waited for at start (`open_late`): `(source, why)`, the source as
# given (it may hold a password: match it, never show it) and why it cannot be opened (redacted). `serve`
# shows it as the camera's error. Add and remove with `watch_open_failures`.
OpenFailed = Callable[[str, str], None]
_open_watchers: list[OpenFailed] = []


def watch_open_failures(watcher: OpenFailed) -> Callable[[], None]:
    """Have `watcher` told of every failed opening of a source waited for at start; returns its removal."""
    _open_watchers.append(watcher)

    def remove() -> None:
        if watcher in _open_watchers:
            _open_watchers.remove(watcher)
    return remove


def _tell_open_failed(source: str, why: str) -> None:
    for watcher in tuple(_open_watchers):
        watcher(source, redact_text(why))


def reopen(policy: LivePolicy, live: LiveReport, stopping: threading.Event, since: float, why: str,
           attempt: Callable[[float], Any], failed: Callable[[str], None] | None = None) -> Any | None:
    """Open a source that dropped (`why`) again: `attempt(open_timeout)` after each of `policy`'s
    back-off delays, until it gives a container (returned), `stopping` is set, or `give_up_after`
    seconds have passed since `since` (the last frame). Attempts, reconnections and giving up
    (`live.gave_up`, with the last attempt's error) are recorded in `live`; None when none succeeded.
    `failed` (if given) is told each failed attempt's reason."""
    deadline = since + policy.give_up_after
    live.reconnecting = redact_text(why)  # shown in reports: no password of the source's URL
    last = why
    try:
        for delay in policy.delays():
            if stopping.wait(max(0.0, min(delay, deadline - time.perf_counter()))):
                return None
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                break
            live.attempts += 1
            try:
                container = attempt(min(policy.open_timeout, max(remaining, 0.5)))
            except OpenAbandoned:
                return None
            except InputError as e:
                last = str(e).split(": cannot open: ", 1)[-1]
                if failed is not None:
                    failed(last)
                continue
            live.reconnects += 1
            return container
    finally:
        if not stopping.is_set():  # stopped: the report says it was stopped while reconnecting
            live.reconnecting = None
    waited = time.perf_counter() - since
    attempts = f"{counted(live.attempts, 'attempt')} to reconnect"
    live.gave_up = redact_text(f"no frame for {waited:.1f} s after the source dropped ({why}); {attempts}, "
                               f"the last: {last}")
    return None


def open_late(policy: LivePolicy, live: LiveReport, stopping: threading.Event, first: Exception,
              attempt: Callable[[float], Any]) -> Any:
    """A network source that could not be opened (`first`: its `InputError`), tried again with the
    reconnect back-off until `give_up_after` (a camera still booting, a server restarting): the
    container, or `OpenAbandoned` when stopped, or an `InputError` saying it gave up. Each failed opening
    is told to the `watch_open_failures` watchers."""
    source, _, why = str(first).partition(": cannot open: ")
    if why:
        _tell_open_failed(source, why)
    container = reopen(policy, live, stopping, time.perf_counter(), f"not reachable at start: {why}", attempt,
                       failed=lambda last: _tell_open_failed(source, last))
    if container is None:
        if stopping.is_set():
            raise OpenAbandoned("stopped while opening")
        raise InputError(redact_text(f"{source}: cannot open: {live.gave_up}"))
    live.reconnects -= 1  # not a reconnection: the first opening, late
    return container
