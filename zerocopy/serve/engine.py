"""`zerocopy serve`'s engine: the cameras of a config, run at once.

The engine owns the service's compiled models (`CompiledModels`): each model is compiled once per device for
the service's life. Cameras that compile the same way (same model and run settings; those declared
`per_input`, `detect_fps` or `zones`, may differ: they are each camera's own) share one `Detector`, made once,
and one parallel run on a thread of its own. Each camera reconnects on its own (`reconnect`, `retry_open`:
one that is down at start is waited for) and, when its input ends anyway (a network file's end, an error,
a failed request), is opened again by its own feeder after a back-off (`pipeline.Reopen`): the other cameras
of its group and the compiled model go on meanwhile. A run that ends as a whole (the path refused, a bug)
starts again after a back-off on the same detector, compiling nothing again. Every camera is tracked and
its events go to the broker and to the event store (`[storage]`: the engine owns it). `stop()` ends every run
after the frames in flight, publishes and stores the `end` of every open object, closes the store and the
publisher and then releases the compiled models.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from zerocopy.api import Detector
from zerocopy.catalog.fetch import cache_dir
from zerocopy.config import RunConfig
from zerocopy.decode.live import watch_open_failures
from zerocopy.errors import ZeroCopyError
from zerocopy.infer.compiled import CompiledModels
from zerocopy.infer.model import make_core
from zerocopy.input_settings import INPUT_SETTINGS, InputSettings
from zerocopy.pipeline import FrameDone, InputBegin, InputEnd
from zerocopy.pipeline.parallel import Reopen
from zerocopy.publish import MqttPublisher, MqttTarget
from zerocopy.publish.homeassistant import announce
from zerocopy.record.ring import PacketRing
from zerocopy.redaction import redact_text
from zerocopy.serve.cameras import Camera
from zerocopy.serve.decode_gate import setting_off
from zerocopy.serve.recording import Recordings
from zerocopy.serve.routes import Health
from zerocopy.serve.status import CameraState, CameraStatus
from zerocopy.serve.storage_config import StorageConfig
from zerocopy.sinks import NullSink
from zerocopy.sinks.drive import feed
from zerocopy.sinks.overlay import Overlay
from zerocopy.sinks.publish import MqttSink
from zerocopy.sinks.store import StoreSink
from zerocopy.store.storage import Storage

RESTART_S = (1.0, 30.0)  # a run, or a camera, that ended is started again after 1 s, doubling to 30 s
REOPEN = Reopen(*RESTART_S)


class Group:
    """Cameras that share one compiled model: one `Detector` for the service's life, one parallel run at a time
    (started again only when it ends as a whole)."""

    def __init__(self, config: RunConfig, cameras: list[Any], say: Callable[[str], None],
                 node: str | None = None, models: CompiledModels | None = None, reopen: Reopen = REOPEN,
                 storage: Storage | None = None):
        self.config, self.configs, self.say = config, cameras, say  # (`config`: what its cameras share)
        self.storage = storage  # the engine's: every camera's object events are kept there
        self.recordings: Recordings | None = None  # the engine's: each camera's clips (set by the engine)
        self.node = node
        self.models, self.reopen = models, reopen
        self.detector = None
        self.cameras = [Camera(c.name, c.source, config.model) for c in cameras]
        for camera, c in zip(self.cameras, cameras, strict=True):  # its zones and lines, drawn on latest.jpg, and
            camera.overlay = Overlay.of(c.run)  # why its settings keep every frame decoded
            camera.gate_off = setting_off(c.run)
        self.thread: threading.Thread | None = None
        self.stopping = threading.Event()
        self.with_detections = False

    def start(self, publisher: Any, pictures: bool, detections: bool = False) -> None:
        self.with_detections = detections
        self.thread = threading.Thread(target=self._serve, args=(publisher, pictures), daemon=True,
                                       name=f"zerocopy-serve-{self.cameras[0].name}")
        self.thread.start()

    def _serve(self, publisher: Any, pictures: bool) -> None:
        delay = RESTART_S[0]
        config = self.config.replace(**({"node": self.node} if self.node else {}),
                                     **({"snapshots": str(self.storage.folder / "snapshots")}
                                        if self.storage is not None else {}))
        try:
            while not self.stopping.is_set():
                try:
                    if self.detector is None:  # (a model that cannot be had yet is tried again)
                        self.detector = Detector(config=config, log=self.say, models=self.models)
                    if not self.stopping.is_set():
                        self._run(self.detector, publisher, pictures)
                    delay = RESTART_S[0]
                except Exception as e:  # the model or every path refused (or a bug): said, and tried again later
                    why = redact_text(str(e) if isinstance(e, ZeroCopyError)
                                      else f"internal error: {type(e).__name__}: {e}")
                    for camera in self.cameras:
                        with camera.lock:
                            camera.state, camera.error = "failed", why
                    if not self.stopping.is_set():
                        self.say(f"cameras {', '.join(c.name for c in self.cameras)}: {why}")
                if self.stopping.wait(delay):
                    break
                delay = min(delay * 2, RESTART_S[1])
        finally:
            if self.detector is not None:
                self.detector.close()

    def _run(self, det: Any, publisher: Any, pictures: bool) -> None:
        sinks: list = [StoreSink(self.storage)] if self.storage is not None else []
        if self.recordings is not None:  # after the store: a clip is attached to its object's row
            sinks.append(self.recordings.sink([c.name for c in self.configs]))
        if publisher is not None and any(c.publish for c in self.configs):
            sinks.append(PublishingCameras(
                MqttSink(publisher, det.names or (), [c.name for c in self.cameras], detections=self.with_detections,
                         clips=[self.recordings is not None and c.name in self.recordings.by_name
                                for c in self.configs]),
                [c.publish for c in self.configs]))
        per_input = [InputSettings.of(c.run) for c in self.configs]
        # latest.jpg shows the last decoded picture: the decode gate may leave frames without one
        events = det.events([c.url for c in self.configs], keep_images=pictures, parallel=True,
                            cameras=[c.name for c in self.configs], per_input=per_input, reopen=self.reopen,
                            every_picture=False)
        feed(events, sinks, observe=lambda event: self._observe(det, event))

    def _observe(self, det: Any, event: Any) -> None:
        """Each camera's figures and state, from every event before the sinks get it (one update per event):
        its frames and object events, its path (fixed for a run: `det.path` is set before the run's first
        event), its open input's damage report (for reconnects and dropped frames), how each opening ended."""
        camera = self.cameras[event.input]
        if isinstance(event, FrameDone):
            camera.frame(event.frame, event.detections, event.events)
        elif isinstance(event, InputBegin):
            camera.began(lambda i=event.input: det.damage_now(i), det.path)
        elif isinstance(event, InputEnd):  # the `end` events of an input that never began reach no sink
            camera.ended(event.outcome, event.events if event.began else ())

    def stop(self) -> None:
        self.stopping.set()
        det = self.detector
        if det is not None:
            det.stop()

    def join(self, timeout: float) -> bool:
        if self.thread is not None:
            self.thread.join(timeout)
            return not self.thread.is_alive()
        return True


def group_cameras(cameras: Sequence[Any]) -> list[tuple[RunConfig, list[Any]]]:
    """Cameras by what they compile: their records (`CameraConfig.run`) with the run's defaults in place of each
    camera's own settings (`INPUT_SETTINGS`, given each camera apart)."""
    run = RunConfig()
    groups: list[tuple[RunConfig, list[Any]]] = []
    for c in cameras:
        shared = c.run.replace(**{name: getattr(run, name) for name in INPUT_SETTINGS})
        for config, members in groups:
            if config == shared:
                members.append(c)
                break
        else:
            groups.append((shared, [c]))
    return groups


class PublishingCameras(NullSink):
    """The publishing sink, for the inputs whose camera publishes (`publish = false` keeps one off the broker)."""

    def __init__(self, sink: Any, publishes: Sequence[bool]):
        self.sink, self.publishes = sink, list(publishes)

    def write(self, frame: Any, detections: Any, input: int = 0) -> None:
        if self.publishes[input]:
            self.sink.write(frame, detections, input=input)

    def on_events(self, events: Sequence[Any], input: int = 0) -> None:
        if self.publishes[input]:
            self.sink.on_events(events, input=input)


class Engine:
    """Runs a `ServeConfig`'s cameras; the HTTP side's `StatusSource`. `node`: the box's name in events. It owns the
    publisher it is given or opens (`connect`): `stop` closes it, after the last events."""

    @classmethod
    def of(cls, config: Any, say: Callable[[str], None] = print) -> Engine:
        """The engine of a checked `ServeConfig`, with its `[storage]`; its `[publish]` broker is connected to by
        `connect` (serve does once its HTTP port is its own: a second serve that cannot listen never touches the
        broker, where it would mark the running one's node offline)."""
        engine = cls(config.cameras, None, latest=config.http.latest, say=say, node=config.node,
                     publish_detections=bool(config.publish and config.publish.detections), storage=config.storage)
        engine._publish = config.publish
        return engine

    def connect(self) -> Any:
        """The publisher of `of`'s `[publish]`, opened (connecting in the background) before `start`; None without."""
        publish = self._publish
        if publish is not None and self.publisher is None:
            target = MqttTarget.parse(publish.url, ca=publish.ca, frigate_events=publish.frigate_events)
            self.publisher = MqttPublisher(target, node=self._node)
        return self.publisher

    def announce(self, homeassistant: Any) -> str | None:
        """Home Assistant's discovery configs for the cameras published (before they start: their counts come after
        the zeros); what to say of it, None without a publisher or `[homeassistant]`."""
        if self.publisher is None or homeassistant is None:
            return None
        return announce(self.publisher, self.configs, homeassistant)

    def __init__(self, cameras: Sequence[Any], publisher: Any = None, latest: bool = True,
                 say: Callable[[str], None] = print, publish_detections: bool = False, node: str | None = None,
                 models: CompiledModels | None = None, reopen: Reopen = REOPEN, storage: StorageConfig | None = None):
        self.publisher, self.say = publisher, say
        self._publish: Any = None  # `of`'s [publish] (`connect`), and the node its publisher speaks for
        self._node = node
        self.configs = list(cameras)
        self.storage = None if storage is None else Storage(storage.path, max_bytes=storage.max_bytes,
                                                            max_days=storage.max_days, say=say)
        self.latest = latest  # each camera keeps its last picture (latest.jpg)
        self.publish_detections = publish_detections
        self.models = models if models is not None else _service_models()
        self.groups = [Group(settings, members, say, node, self.models, reopen, self.storage)
                       for settings, members in group_cameras([c for c in cameras if c.enabled])]
        self.recordings = Recordings(cameras, self.storage, say) if self.storage is not None else None
        for g in self.groups:
            g.recordings = self.recordings
            for cam in g.cameras:  # its recording's figures in /api/cameras
                cam.recording = (lambda name=cam.name: self.recordings.status(name)) if self.recordings else None
        self._by_name = {cam.name: (cam, g) for g in self.groups for cam in g.cameras}
        self._by_url: dict[str, list[Camera]] = {}  # the real URL (secrets filled in): never shown
        for g in self.groups:
            for config, cam in zip(g.configs, g.cameras, strict=True):
                self._by_url.setdefault(config.url, []).append(cam)
        self._unwatch: Callable[[], None] | None = None

    def start(self) -> None:
        self._unwatch = watch_open_failures(self._open_failed)
        if self.recordings is not None:
            self.recordings.start()
        for g in self.groups:
            g.start(self.publisher, self.latest, self.publish_detections)

    def _open_failed(self, source: str, why: str) -> None:
        """A source waited for at start could not be opened yet (`live.open_late`): its cameras say why."""
        for cam in self._by_url.get(source, ()):
            cam.cannot_open(why)

    def stop(self, timeout: float = 2.0) -> bool:
        """Stop every run (frames in flight finish, open objects end) and close the publisher; True if
        everything ended within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        if self._unwatch is not None:
            self._unwatch()
        for g in self.groups:
            g.stop()
        ended = all(g.join(max(0.0, deadline - time.monotonic() - 0.3)) for g in self.groups)
        if self.recordings is not None:  # the clips of the last `end` events, written before the store closes
            self.recordings.close(timeout=min(0.5, max(0.1, deadline - time.monotonic() - 0.5)))
        if self.storage is not None:  # the last events written (the `end` of every open object), then closed
            self.storage.close(timeout=min(1.0, max(0.2, deadline - time.monotonic() - 0.2)))
        if self.publisher is not None:
            self.publisher.close(timeout=max(0.2, deadline - time.monotonic()))
        if ended:  # a run that did not end in time may still use a VA device: left to the process's exit
            self.models.close()
        return ended

    def model_compiles(self) -> dict[str, int]:
        """How many times each model was compiled since the start (once per device, unless settings differ)."""
        return dict(self.models.compiles)

    # --- StatusSource ---------------------------------------------------------------------------
    def publisher_stats(self) -> dict[str, Any] | None:
        return self.publisher.stats() if self.publisher is not None else None

    def cameras(self, publisher_stats: dict[str, Any] | None = None) -> list[CameraStatus]:
        """Every camera's status. `publisher_stats`: `publisher_stats()` if the caller has read it already (a
        scrape reads it once, for every camera's `events_dropped` and the MQTT metrics); else it is read here, once."""
        stats = self.publisher_stats() if publisher_stats is None else publisher_stats
        dropped = int(stats.get("events", {}).get("dropped", 0)) if stats is not None else 0
        return [cam.status(dropped) for cam, _ in self._by_name.values()]

    def camera_states(self) -> list[CameraState]:
        """Every camera's state alone: no figures, no publisher counters."""
        return [cam.current() for cam, _ in self._by_name.values()]

    def latest_jpeg(self, name: str) -> bytes | None:
        found = self._by_name.get(name)
        if found is None:
            return None
        cam, group = found
        det = group.detector
        return cam.latest_jpeg(det.names or () if det is not None else ())

    def ring(self, name: str) -> PacketRing | None:
        """The ring of the camera's record stream (its live video), None if it does not record."""
        recording = self.recordings.by_name.get(name) if self.recordings is not None else None
        return recording.ring if recording is not None else None

    def healthy(self) -> Health:
        """Unhealthy when no camera is enabled, or none can work: each failed or never opened (it is "starting" with
        the error of its openings). A camera that is reconnecting is not a failure."""
        states = self.camera_states()
        if not states:
            return Health(False, "no camera is enabled")
        if not all(s.state == "failed" or (s.state == "starting" and s.error) for s in states):
            return Health(True, "ok")
        if all(s.state == "failed" for s in states):
            return Health(False, "every camera failed")
        return Health(False, "no camera is running: each failed or cannot be opened yet")


def _service_models() -> CompiledModels:
    return CompiledModels(make_core(cache_dir() / "ov-cache"))
