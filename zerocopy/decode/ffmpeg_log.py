"""FFmpeg's log, captured per input, and PyAV errors as one line of text.

FFmpeg logs its reasons (a corrupt slice, "No VA display found", a refused connection) through one
process-wide callback, and PyAV keeps a single process-wide stack of captures: the newest gets every
message, and leaving one pops the newest, whoever's it is. Several inputs decoding at once (`--parallel`,
a live input reconnecting while others decode) would then lose or swap each other's messages. The
captures here keep each message with the input it is about, in that input's `DamageReport` (counts
by kind and the last few: a stream that logs for months keeps no more than a short one).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import av
import av.logging

from zerocopy.decode.damage import DamageReport


def ffmpeg_log_line(e: BaseException) -> str:
    """FFmpeg's own last log message behind a PyAV error (e.g. "No VA display found for device …"), or ""."""
    log = getattr(e, "log", None)
    if isinstance(e, av.FFmpegError) and log and len(log) >= 3 and log[2]:
        return str(log[2]).strip().rstrip(".")
    return ""


def describe_av_error(e: BaseException) -> str:
    """One line from a PyAV/FFmpeg error: its message, plus FFmpeg's last log line if it has one."""
    if isinstance(e, av.FFmpegError):
        msg = (e.strerror or str(e)).strip()
        log = getattr(e, "log", None)
        if log and len(log) >= 3 and log[2]:
            msg += f" ({str(log[2]).strip()})"
        return msg[0].lower() + msg[1:] if msg else type(e).__name__
    return str(e).splitlines()[0] if str(e) else type(e).__name__


class _SharedLog:
    """What every capture of the process shares: FFmpeg's log level (raised to ERROR while anyone
    listens, restored after the last) and one PyAV capture of the messages logged on threads that
    have no capture of their own (FFmpeg's frame-threading workers, openers).

    PyAV keeps one stack of "global" captures and sends each message to the newest; leaving one pops
    the newest, whoever's it is. Decoders that start and stop in any order (`--parallel`, a live
    input reconnecting while others decode) must not each push one: a message then went to the
    wrong input, or to nobody once the level of whichever stopped first was restored.
    """

    lock = threading.Lock()
    listeners = 0
    level_before: int | None = None
    capture: av.logging.Capture | None = None
    logs: list = []  # the shared capture's messages, from index `base` on
    base = 0
    windows: dict[int, int] = {}  # id(user) → index of the first message it may take

    @classmethod
    def listen(cls, user: object, shared: bool) -> None:
        with cls.lock:
            if cls.listeners == 0:
                cls.level_before = av.logging.get_level()
                av.logging.set_level(av.logging.ERROR)
                cls.capture = av.logging.Capture(local=False)
                cls.logs, cls.base = cls.capture.__enter__(), 0
            cls.listeners += 1
            if shared:
                cls.windows[id(user)] = cls.base + len(cls.logs)

    @classmethod
    def take(cls, user: object) -> list:
        """The shared messages logged since `user` listened or last took them (none if it does not
        listen to them); what no listener can take any more is dropped."""
        with cls.lock:
            return cls._take(user, leaving=False)

    @classmethod
    def leave(cls, user: object) -> list:
        """The shared messages logged since `user` listened or last took them."""
        with cls.lock:
            taken = cls._take(user, leaving=True)
            cls.listeners -= 1
            if cls.listeners == 0:
                av.logging.set_level(cls.level_before)  # None: PyAV's no-op C callback, safe with any thread
                cls.capture.__exit__(None, None, None)
                cls.capture, cls.logs, cls.base = None, [], 0
            return taken

    @classmethod
    def _take(cls, user: object, leaving: bool) -> list:
        end = cls.base + len(cls.logs)  # FFmpeg's threads may append meanwhile: up to here only
        first = cls.windows.pop(id(user), None)
        taken = [] if first is None else cls.logs[first - cls.base : end - cls.base]
        if first is not None and not leaving:
            cls.windows[id(user)] = end
        oldest = min(cls.windows.values(), default=end)
        del cls.logs[: oldest - cls.base]  # what no listener can take any more
        cls.base = oldest
        return taken


class FFmpegLogCapture:
    """Routes FFmpeg's error messages into a `DamageReport`.

    `start(local=True)` on the thread that demuxes and decodes: what that thread logs is this
    input's alone (PyAV's per-thread capture), whatever other inputs decode meanwhile. A decoder
    with frame threads logs from FFmpeg's own threads too: `start(local=False)` takes every message
    logged on threads without a capture of their own while it listens, so with several such inputs
    at once (`--parallel --decode-threads N`) their messages can land in each other's report.

    While it runs, PyAV's Python log callback is installed; a frame-threaded decoder thread that
    logs then needs the GIL. Freeing that decoder (which waits for its threads while the GIL is
    held) with a thread inside the callback deadlocks — seen under load after stopping mid-stream.
    `PyAVDecoder.close()` therefore drains the decoder first (its threads go idle; PyAV releases the
    GIL while decoding), then stops the capture, then frees.
    """

    def __init__(self, damage: DamageReport):
        self.damage = damage
        self._own: av.logging.Capture | None = None
        self._on = False
        self._switch = threading.Lock()  # the reading thread and a closing one may both stop it

    def start(self, local: bool = False) -> None:
        with self._switch:
            if self._on:
                return
            _SharedLog.listen(self, shared=not local)
            if local:
                self._own = av.logging.Capture(local=True)
                self._own.__enter__()
            self._on = True

    @property
    def active(self) -> bool:
        return self._on

    @property
    def local(self) -> bool:
        return self._own is not None

    def drain(self) -> None:
        """Move the messages logged so far into the report. PyAV's captures keep every message until
        they end, so the thread that reads calls this every few packets: a capture open for months
        then holds no more than a few packets' messages."""
        with self._switch:
            if not self._on:
                return
            logs = self._own.logs if self._own is not None else []
            n = len(logs)  # FFmpeg's threads may append meanwhile: only up to here
            taken = logs[:n]
            del logs[:n]
            taken += _SharedLog.take(self)
        self._count(taken)

    def stop(self) -> None:
        """Call it on the starting thread for a local capture: PyAV pops the newest capture of the
        list kept for that thread's id, which a later thread reusing the id would share."""
        with self._switch:
            if not self._on:
                return
            self._on = False
            own, self._own = self._own, None
        if own is not None:
            own.__exit__(None, None, None)
        self._count((own.logs if own is not None else []) + _SharedLog.leave(self))

    def _count(self, logs: list) -> None:
        for level, name, message in logs:
            if level <= av.logging.ERROR:
                self.damage.add_log(name or "ffmpeg", message)


@contextmanager
def captured_ffmpeg_log(damage: DamageReport):
    capture = FFmpegLogCapture(damage)
    capture.start()
    try:
        yield
    finally:
        capture.stop()
