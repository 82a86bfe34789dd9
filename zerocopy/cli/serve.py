"""`zerocopy serve CONFIG.toml`: every camera of the config at once, events to the broker, status over HTTP,
until SIGTERM or Ctrl-C (then everything stops within 2 s: the frames in flight, the `end` of every open
object, the publisher's queue as far as it goes). Its log is stderr, each line stamped with the time (unless
the journal, which stamps its own, reads it)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterator
from datetime import datetime
from typing import TextIO

from zerocopy.cli.options import EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED, EXIT_USAGE
from zerocopy.cli.runtime import stop_on_signals
from zerocopy.redaction import masking
from zerocopy.serve.config import ServeConfigError, load_config
from zerocopy.serve.engine import Engine
from zerocopy.serve.heap import pin_thresholds
from zerocopy.serve.http import StatusServer
from zerocopy.serve.status import CameraState
from zerocopy.serve.storage_config import short_cap


def cmd_serve(args, say: Callable[[str], None]) -> int:
    if args.check:  # an answer read at once, not a log: no time on it
        config = _load(args.config, say)
        if config is not None:
            say(f"{args.config}: {len(config.cameras)} camera(s), no problem found")
            if (line := short_cap(config.storage, config.cameras)) is not None:
                say(line)
        return EXIT_USAGE if config is None else EXIT_OK
    with stamped_stderr():
        config = _load(args.config, say)
        if config is None:
            return EXIT_USAGE
        with masking(config.secrets):  # what was filled in never shows: events, /api, /metrics, the log, errors
            return _serve(config, say)


def _load(path: str, say: Callable[[str], None]):
    """The checked config at `path`, or None once each of its problems is said."""
    try:
        return load_config(path)
    except ServeConfigError as e:
        for problem in e.problems:
            say(f"{path}: {problem}")
        return None


def under_journal(stream: TextIO) -> bool:
    """Whether `stream` is connected to systemd's journal: `$JOURNAL_STREAM` names its device and inode
    (systemd.exec(5)); a process started from such a service with its stderr elsewhere does not match."""
    device, _, inode = os.environ.get("JOURNAL_STREAM", "").partition(":")
    try:
        st = os.fstat(stream.fileno())
        return (int(device), int(inode)) == (st.st_dev, st.st_ino)
    except (ValueError, OSError, AttributeError):  # not set or not numbers; a stream with no file (a test's)
        return False


class StampedLines:
    """A text stream that writes each line to `stream` after the local time, ISO 8601 with its offset and a space
    (`2026-11-28T03:40:12+00:00 zerocopy: …`): the time a line began. Lines written from several threads at once
    keep their own stamps and never mix: each thread's text is held until its line ends (`print` writes the text,
    then the newline), then written whole; anything else (`fileno`, `encoding`, …) is `stream`'s."""

    def __init__(self, stream: TextIO, clock: Callable[[], datetime] = lambda: datetime.now().astimezone()):
        self.stream, self.clock = stream, clock
        self._held = threading.local()  # this thread's line so far (`text`), and whether it was stamped already
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        held = getattr(self._held, "text", "") + text
        *lines, rest = held.split("\n")
        self._held.text = rest
        if lines:
            self._out("\n".join(lines) + "\n")
        return len(text)

    def _out(self, text: str) -> None:
        """Whole lines of this thread (or the start of one, at `flush`), each stamped unless it was already."""
        stamp = f"{self.clock().isoformat(timespec='seconds')} "
        pieces = _LINES.findall(text)
        out = [piece if i == 0 and getattr(self._held, "stamped", False) else stamp + piece
               for i, piece in enumerate(pieces)]
        self._held.stamped = bool(pieces) and not pieces[-1].endswith("\n")
        with self._lock:
            self.stream.write("".join(out))

    def flush(self) -> None:
        held, self._held.text = getattr(self._held, "text", ""), ""
        if held:
            self._out(held)
        self.stream.flush()

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


_LINES = re.compile(r"[^\n]*\n|[^\n]+")  # each line with its newline, and a last one without


@contextlib.contextmanager
def stamped_stderr() -> Iterator[None]:
    """Every line written to `sys.stderr` meanwhile stamped (`StampedLines`), unless the journal reads it (it stamps
    its own). Put back when the block ends; not when an error ends it: the CLI says that error next, stamped too,
    and the process ends."""
    if under_journal(sys.stderr):
        yield
        return
    before = sys.stderr
    sys.stderr = StampedLines(before)
    yield
    sys.stderr = before


def _serve(config, say: Callable[[str], None]) -> int:
    """Run the checked `config` until SIGTERM or Ctrl-C; the exit code."""
    pin_thresholds()  # before the first camera opens: its arenas never keep what large blocks freed (serve/heap.py)
    stop = threading.Event()
    with stop_on_signals(stop.set) as stopped:
        engine = Engine.of(config, say)
        server = StatusServer(config.http.listen, engine, config.http, say=say)
        try:
            server.start()
        except BaseException:
            engine.stop(timeout=1.0)
            raise
        publisher = engine.connect()  # once the port is ours (see `Engine.of`)
        say(server.access)
        if publisher is not None:
            say(f"publishing events to {publisher.target}")
            if (announced := engine.announce(config.homeassistant)) is not None:
                say(announced)
        if config.storage is not None:
            say(f"events kept in {config.storage.path} (files up to {config.storage.max_gb:g} GB, "
                f"{config.storage.max_days:g} days)")
            if (line := short_cap(config.storage, config.cameras)) is not None:
                say(line)
        enabled = sum(c.enabled for c in config.cameras)
        say(f"serving {enabled} camera(s) in {len(engine.groups)} group(s) (a model is compiled once, and once more "
            "for its regions around motion) as node "
            f"{config.node}; status on http://{server.address}/api/cameras")
        looped = [camera.name for camera in config.cameras if camera.loop and camera.enabled]
        for camera in config.cameras:
            if camera.name in looped:
                say(f"camera {camera.name}: the file {camera.source} played in a loop and paced as live, for trying "
                    "serve (real cameras are streams or devices)")
        engine.start()
        watch = StateLog(engine, publisher, say, looped=looped)
        while not stop.wait(0.5):
            watch.check()
        watch.check()  # the states as they were at the stop, not half a second before
    say("stopping")
    ended = engine.stop(timeout=2.0)
    server.close()
    if not ended:
        say("a camera did not stop within 2 s (its source was left to close on its own)")
    return EXIT_TERMINATED if stopped.signal == signal.SIGTERM else EXIT_INTERRUPTED if stopped.signal else EXIT_OK


# A camera (or the broker) whose state changes this many times within FLAP_WINDOW_S is flapping (a network file
# that ends every few seconds, a camera that drops again at once): it is said once, with the count, then summed
# up in one line at most once per FLAP_WINDOW_S until a whole window passes without a change.
FLAP_CHANGES = 6
FLAP_WINDOW_S = 60.0


class _Flaps:
    """One subject's (a camera's, the broker's) recent changes, and what was held back while it flaps."""

    def __init__(self):
        self.changes: deque[float] = deque()  # when it changed, within the last FLAP_WINDOW_S
        self.flapping = False
        self.held = 0  # changes not said since `summed`
        self.latest: str | None = None  # the last line held back
        self.summed = 0.0  # when it was said to flap, or last summed up


class StateLog:
    """Says on stderr (the journal, under systemd) when a camera's state changes (running, reconnecting,
    failed, stopped: with its error), why a camera cannot be opened (once per reason), and when the broker
    connection is made or lost: what `/metrics` shows, for someone reading the log. A camera or broker that
    keeps changing (`FLAP_CHANGES` in `FLAP_WINDOW_S`) is said so once, then summed up at most once a
    window (`clock`: monotonic seconds). A camera of `looped` (a file played in a loop) is played again at each of
    its ends: that is said once, at the first, not as a reconnection every loop."""

    def __init__(self, engine, publisher, say: Callable[[str], None], clock: Callable[[], float] = time.monotonic,
                 looped: Collection[str] = ()):
        self.engine, self.publisher, self.say, self.clock = engine, publisher, say, clock
        self.looped = set(looped)
        self._looping: set[str] = set()  # the looped cameras whose first loop was said
        self._states: dict[str, str] = {}
        self._waiting: dict[str, str | None] = {}  # why each camera cannot be opened, as last said
        self._connected: bool | None = None
        self._flaps: dict[str, _Flaps] = {}

    def check(self) -> None:
        now = self.clock()
        for cam in self.engine.camera_states():
            if cam.state == "running" and cam.path is None:
                continue  # opened, no frame yet: said at its first frame, with the path it runs on
            subject = f"camera {cam.name}"
            before = self._states.get(cam.name)
            if self._loops(cam, before):
                continue
            if cam.state != before and not (before is None and cam.state == "starting"):
                why = f": {cam.error}" if cam.error and cam.state in ("failed", "stopped") else ""
                self._tell(subject, f"{subject}: {cam.state}{why}" + (
                    f" ({cam.path} path)" if cam.state == "running" and before in (None, "starting") else ""), now,
                    change=True)
            self._states[cam.name] = cam.state
            waiting = cam.error if cam.state in ("starting", "reconnecting") else None
            if waiting and (waiting != self._waiting.get(cam.name) or cam.state != before):
                self._tell(subject, f"{subject}: {waiting}; retrying", now, change=False)
            self._waiting[cam.name] = waiting
        if self.publisher is not None:
            stats = self.publisher.stats()
            if stats["connected"] != self._connected and (self._connected is not None or stats["connected"]
                                                          or stats["errors"]):
                subject = f"broker {stats['target']}"
                self._tell(subject, f"{subject}: " + ("connected" if stats["connected"] else
                           f"not connected ({stats['last_error'] or 'no answer yet'}); events are queued, "
                           f"{stats['dropped']} dropped so far"), now, change=True)
                self._connected = stats["connected"]
        self._sum_up(now)

    def _loops(self, cam: CameraState, before: str | None) -> bool:
        """Whether `cam`'s change is a looped file's end or its playing again after one (its first end is said; its
        state is kept as it was before an end that came before its first frame was seen, so `running` is said)."""
        if cam.name not in self.looped or cam.error or cam.state == before:
            return False
        if cam.state == "reconnecting":  # it ended: it is played again
            if cam.name not in self._looping:
                self._looping.add(cam.name)
                self.say(f"camera {cam.name}: the file ended: it is played again from its start at each end (said "
                         "once; each time counts as a reconnection in /api/cameras and /metrics)")
            self._states[cam.name] = before if before in (None, "starting") else cam.state
            return True
        if cam.state == "running" and before == "reconnecting" and not self._waiting.get(cam.name):
            self._states[cam.name] = cam.state  # (after an error said, running again is said too)
            return True
        return False

    def _tell(self, subject: str, line: str, now: float, change: bool) -> None:
        """Say `line` about `subject` (a change of its state, or a reason of one), unless it is flapping."""
        flaps = self._flaps.setdefault(subject, _Flaps())
        if flaps.flapping:
            flaps.held += change
            flaps.latest = line
            return
        self.say(line)
        if not change:
            return
        flaps.changes.append(now)
        while flaps.changes[0] <= now - FLAP_WINDOW_S:
            flaps.changes.popleft()
        if len(flaps.changes) >= FLAP_CHANGES:
            flaps.flapping, flaps.held, flaps.latest, flaps.summed = True, 0, None, now
            self.say(f"{subject}: {len(flaps.changes)} changes in {now - flaps.changes[0]:.0f} s: it keeps changing; "
                     f"from now on one line every {FLAP_WINDOW_S:.0f} s sums it up")

    def _sum_up(self, now: float) -> None:
        """Each flapping subject's held lines in one (its latest, with the count), at most once a window; one
        that stayed quiet a whole window is said change by change again."""
        for flaps in self._flaps.values():
            if not flaps.flapping or now - flaps.summed < FLAP_WINDOW_S:
                continue
            if flaps.latest is None:
                flaps.flapping = False
                flaps.changes.clear()
                continue
            self.say(f"{flaps.latest} ({flaps.held} change(s) in the last {now - flaps.summed:.0f} s; it keeps "
                     "changing)")
            flaps.held, flaps.latest, flaps.summed = 0, None, now
