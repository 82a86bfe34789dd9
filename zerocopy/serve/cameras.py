"""Each camera's live figures, kept by the engine's per-event hook (`engine.Group._observe`), read by the
HTTP side.

Bounded whatever the uptime: rates over a sliding window of the last `WINDOW_S` seconds, latency
percentiles over the last `LATENCY_SAMPLES` frames, and one picture (the last decoded, for `latest.jpg`: a frame the
decode gate left undecoded has none).

The picture is a PyAV frame, and PyAV objects are not thread-safe (`to_image()` on one frame from several
threads at once crashed a process): the run's thread only hands it over, and it is turned into JPEG bytes
once, under the camera's picture lock, by whichever HTTP thread asks first; every other request gets those
bytes."""

from __future__ import annotations

import io
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from PIL import ImageFont

from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame
from zerocopy.serve.decode_gate import GateFigures
from zerocopy.serve.status import CameraState, CameraStatus
from zerocopy.serve.tallies import Tallies
from zerocopy.sinks.draw import draw_detections
from zerocopy.sinks.overlay import Overlay

WINDOW_S = 10.0
LATENCY_SAMPLES = 300
JPEG_QUALITY = 80


class Camera:
    """One camera's state and figures (updated by the run's thread, read by the HTTP threads)."""

    def __init__(self, name: str, source: str, model: str):
        self.name, self.source, self.model = name, source, model
        self.lock = threading.Lock()
        self.state, self.path, self.error = "starting", None, None
        self._run_path: str | None = None  # the open run's path, shown from the camera's first frame in it
        self.frames = self.inferences = self.events = 0
        self.last_frame_time: float | None = None
        self._times: deque[float] = deque()  # perf_counter of the frames within the window
        self._inferred: deque[float] = deque()
        self._latency: deque[float] = deque(maxlen=LATENCY_SAMPLES)
        self._picture_lock = threading.Lock()  # the picture is used by one thread at a time, under this lock
        self._picture: tuple[Any, Detections] | None = None  # the last frame's picture and boxes (not encoded yet)
        self._jpeg: bytes | None = None  # the last picture as JPEG, once asked for
        self.encoded = 0  # pictures turned into JPEG so far
        self.damage: Callable[[], Any] = lambda: None  # the open input's DamageReport now (set by the engine)
        self._past_reconnects = self._past_dropped = 0  # of the runs that ended (a run restarts after a failure)
        self._opened = False  # it has opened once: opening it again is a reconnection
        self.tallies = Tallies()  # its stages' figures (zones, lines, motion gate, …), from their records
        self.overlay: Overlay | None = None  # its zones and lines, drawn on latest.jpg (set by the engine)
        self.recording: Callable[[], Any] | None = None  # its recording's figures now (set by the engine)
        self.gate_off: str | None = None  # why its settings keep every frame decoded (set by the engine)
        self._past_gate = GateFigures()  # its decode gate's, over the runs that ended
        # the open input's last report read: its input may be closing (its reader gone, `damage` None) before its
        # end is counted (`ended`), and counters must not fall back meanwhile
        self._last_damage: Any = None

    def began(self, damage: Callable[[], Any], path: str | None) -> None:
        """The camera's input opened (`InputBegin`) on `path`, its `DamageReport` read live from `damage`. Every
        opening after the first is a reconnection (serve opens a camera again whenever its input ended)."""
        with self.lock:
            if self._opened:
                self._past_reconnects += 1
            self._opened = True
            self.state, self.error, self.damage, self._last_damage = "running", None, damage, None
            self._run_path = path

    def cannot_open(self, why: str) -> None:
        """An opening of the camera failed and is retried (`live.open_late`): `why` (redacted) is its error until it
        opens; it is "starting" if it never opened, else "reconnecting"."""
        with self.lock:
            if self.state != "running":  # (an open input of the same source in another group is not this one)
                self.state = "reconnecting" if self._opened else "starting"
                self.error = f"cannot open yet: {why}"

    def frame(self, frame: PreparedFrame, detections: Detections, events: Sequence[Any] = ()) -> None:
        """A frame's result, with the records its stages made (`stages.records`: events, counts, motion…)."""
        now = time.perf_counter()
        with self.lock:
            self.state = "running"
            if self._run_path is not None:  # the run's first frame (a run after a restart may have a new path)
                self.path, self._run_path = self._run_path, None
            self.events += self.tallies.events(events)
            self.frames += 1
            self.last_frame_time = time.time()
            self._times.append(now)
            if frame.inferred:
                self.inferences += 1
                self._inferred.append(now)
                if frame.arrived is not None:
                    self._latency.append((now - frame.arrived) * 1e3)
            for window in (self._times, self._inferred):
                while window and window[0] < now - WINDOW_S:
                    window.popleft()
        if frame.picture is not None:  # handed over: the run's thread does not touch it again
            with self._picture_lock:
                self._picture, self._jpeg = (frame.picture, detections), None

    def ended(self, outcome: Any, events: Sequence[Any] = ()) -> None:
        """The camera's input ended (`pipeline.InputOutcome`; `events`: the `end` of its objects still open): its
        counts kept, its state said. Stopped by serve: "stopped"; with an error: "failed" (with the error; serve
        opens it again after a back-off); on its own (a network file's end): "reconnecting"."""
        damage = outcome.damage
        with self.lock:
            self.events += self.tallies.events(events)
            self.damage, self._last_damage = (lambda: None), None
            self._past_dropped += damage.packets_failed + damage.corrupt_frames
            self._past_reconnects += damage.live_report.reconnects if damage.live_report is not None else 0
            if damage.gate is not None:
                self._past_gate = self._past_gate.plus(damage.gate)
            if outcome.interrupted:
                self.state, self.error = "stopped", outcome.error
            elif outcome.error:
                self.state, self.error = "failed", outcome.error
            else:
                self.state, self.error = "reconnecting", None

    def _rate(self, window: deque[float]) -> float:
        if len(window) < 2:
            return 0.0
        span = max(time.perf_counter() - window[0], window[-1] - window[0])
        return round((len(window) - 1) / span, 2) if span > 0 else 0.0

    def _shown_state(self, damage: Any) -> str:
        """`state` as shown: a running camera whose source is reconnecting is "reconnecting" (lock held)."""
        live = damage.live_report if damage is not None else None
        return "reconnecting" if live is not None and live.reconnecting and self.state == "running" else self.state

    def current(self) -> CameraState:
        """The state alone (no rates, percentiles nor counters), as `status()` would say it."""
        with self.lock:  # the damage report only matters to a running camera (is it reconnecting?)
            state = self._shown_state(self.damage() if self.state == "running" else None)
            return CameraState(name=self.name, state=state, path=self.path, error=self.error)

    def status(self, events_dropped: int = 0) -> CameraStatus:
        """Every figure now; `events_dropped` is the publisher's (one count for the box, read once by the caller)."""
        recording = self.recording() if self.recording is not None else None  # (outside the camera's lock)
        with self.lock:  # the open input's figures and those of the ended ones, never both for one input
            damage = self.damage()
            damage = self._last_damage = damage if damage is not None else self._last_damage
            live = damage.live_report if damage is not None else None
            latency = np.asarray(self._latency) if self._latency else None
            return CameraStatus(
                name=self.name, source=self.source, model=self.model, path=self.path,
                state=self._shown_state(damage),
                fps=self._rate(self._times), inference_fps=self._rate(self._inferred),
                latency_p50_ms=None if latency is None else round(float(np.percentile(latency, 50)), 1),
                latency_p95_ms=None if latency is None else round(float(np.percentile(latency, 95)), 1),
                frames=self.frames, inferences=self.inferences,
                reconnects=self._past_reconnects + (live.reconnects if live is not None else 0),
                dropped_frames=self._past_dropped + (
                    (damage.packets_failed + damage.corrupt_frames) if damage is not None else 0),
                events=self.events, events_dropped=events_dropped,
                decode_gate=self._past_gate.now(damage, self.gate_off),
                last_frame_time=self.last_frame_time, error=self.error, analytics={**self.tallies.to_json(),
                                                                                      "recording": recording},
                figures=self.tallies.figures.copy())

    def latest_jpeg(self, names: Sequence[str]) -> bytes | None:
        """The last frame with its boxes drawn, as JPEG bytes: encoded once per frame, when first asked for (from
        any thread: under the picture lock, so the PyAV frame is used by one thread at a time)."""
        with self._picture_lock:
            if self._jpeg is None and self._picture is not None:
                picture, detections = self._picture
                img = picture.to_image().convert("RGB")
                if self.overlay is not None:
                    self.overlay.draw(img)
                draw_detections(img, detections, names, ImageFont.load_default())
                out = io.BytesIO()
                img.save(out, format="JPEG", quality=JPEG_QUALITY)
                self._jpeg, self._picture = out.getvalue(), None  # the frame can go: its bytes are kept
                self.encoded += 1
            return self._jpeg

