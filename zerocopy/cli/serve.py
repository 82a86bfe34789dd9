"""`zerocopy serve CONFIG.toml`: every camera of the config at once, events to the broker, status over HTTP,
until SIGTERM or Ctrl-C (then everything stops within 2 s: the frames in flight, the `end` of every open
object, the publisher's queue as far as it goes)."""

from __future__ import annotations

import signal
import threading
import time
from collections import deque
from collections.abc import Callable

from zerocopy.cli.options import EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED, EXIT_USAGE
from zerocopy.cli.runtime import open_publisher, stop_on_signals
from zerocopy.publish.homeassistant import announce
from zerocopy.redaction import masking
from zerocopy.serve.config import ServeConfigError, load_config
from zerocopy.serve.engine import Engine
from zerocopy.serve.http import StatusServer


def cmd_serve(args, say: Callable[[str], None]) -> int:
    try:
        config = load_config(args.config)
    except ServeConfigError as e:
        for problem in e.problems:
            say(f"{args.config}: {problem}")
        return EXIT_USAGE
    if args.check:
        say(f"{args.config}: {len(config.cameras)} camera(s), no problem found")
        return EXIT_OK
    with masking(config.secrets):  # what was filled in never shows: events, /api, /metrics, the log, errors
        return _serve(config, say)


def _serve(config, say: Callable[[str], None]) -> int:
    """Run the checked `config` until SIGTERM or Ctrl-C; the exit code."""
    stop = threading.Event()
    with stop_on_signals(stop.set) as stopped:
        publisher = None
        if config.publish is not None:
            publisher = open_publisher(config.publish.url, config.publish.ca, config.node)  # said once the port is ours
        engine = Engine(config.cameras, publisher, pictures=config.http.snapshots, say=say, node=config.node,
                        publish_detections=bool(config.publish and config.publish.detections), storage=config.storage)
        server = StatusServer(config.http.listen, engine, config.http, say=say)
        try:
            server.start()
        except BaseException:
            engine.stop(timeout=1.0)  # closes the publisher (its `offline`)
            raise
        say(server.access)
        if publisher is not None:
            say(f"publishing events to {publisher.target}")
            if config.homeassistant is not None:  # before the cameras start: their counts come after the zeros
                say(announce(publisher, config.cameras, config.homeassistant))
        if config.storage is not None:
            say(f"events kept in {config.storage.path} (files up to {config.storage.max_gb:g} GB, "
                f"{config.storage.max_days:g} days)")
        enabled = sum(c.enabled for c in config.cameras)
        say(f"serving {enabled} camera(s) in {len(engine.groups)} group(s) (one compiled model each) as node "
            f"{config.node}; status on http://{server.address}/api/cameras")
        for camera in config.cameras:
            if camera.loop and camera.enabled:
                say(f"camera {camera.name}: the file {camera.source} played in a loop and paced as live, for trying "
                    "serve (real cameras are streams or devices)")
        engine.start()
        watch = StateLog(engine, publisher, say)
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
    window (`clock`: monotonic seconds)."""

    def __init__(self, engine, publisher, say: Callable[[str], None], clock: Callable[[], float] = time.monotonic):
        self.engine, self.publisher, self.say, self.clock = engine, publisher, say, clock
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
