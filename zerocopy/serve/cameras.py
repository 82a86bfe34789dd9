"""Each camera's live figures, kept by a sink the run feeds (`CameraSink`), read by the HTTP side.

Bounded whatever the uptime: rates over a sliding window of the last `WINDOW_S` seconds, latency
percentiles over the last `LATENCY_SAMPLES` frames, and one picture (the last, for `latest.jpg`)."""

from __future__ import annotations

import io
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame
from zerocopy.serve.status import CameraStatus
from zerocopy.sinks import NullSink

WINDOW_S = 10.0
LATENCY_SAMPLES = 300


class Camera:
    """One camera's state and figures (updated by the run's thread, read by the HTTP threads)."""

    def __init__(self, name: str, source: str, model: str):
        self.name, self.source, self.model = name, source, model
        self.lock = threading.Lock()
        self.state, self.path, self.error = "starting", None, None
        self.frames = self.inferences = self.events = 0
        self.last_frame_time: float | None = None
        self._times: deque[float] = deque()  # perf_counter of the frames within the window
        self._inferred: deque[float] = deque()
        self._latency: deque[float] = deque(maxlen=LATENCY_SAMPLES)
        self._picture: tuple[Any, Detections] | None = None  # the last frame's picture and boxes
        self.damage: Callable[[], Any] = lambda: None  # the open input's DamageReport now (set by the engine)
        self.events_dropped: Callable[[], int] = lambda: 0
        self._past_reconnects = self._past_dropped = 0  # of the runs that ended (a run restarts after a failure)

    def frame(self, frame: PreparedFrame, detections: Detections) -> None:
        now = time.perf_counter()
        with self.lock:
            self.state = "running"
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
            if frame.picture is not None:
                self._picture = (frame.picture, detections)

    def ended(self, outcome: Any) -> None:
        """The camera's input ended (`pipeline.InputOutcome`): its counts kept, its state said."""
        damage = outcome.damage
        with self.lock:
            self.damage = lambda: None
            self._past_dropped += damage.packets_failed + damage.corrupt_frames
            self._past_reconnects += damage.live_report.reconnects if damage.live_report is not None else 0
            self.state = "stopped" if outcome.interrupted or not outcome.error else "failed"
            self.error = outcome.error

    def _rate(self, window: deque[float]) -> float:
        if len(window) < 2:
            return 0.0
        span = max(time.perf_counter() - window[0], window[-1] - window[0])
        return round((len(window) - 1) / span, 2) if span > 0 else 0.0

    def status(self) -> CameraStatus:
        with self.lock:  # the open input's figures and those of the ended ones, never both for one input
            damage = self.damage()
            live = damage.live_report if damage is not None else None
            latency = np.asarray(self._latency) if self._latency else None
            state = "reconnecting" if live is not None and live.reconnecting and self.state == "running" \
                else self.state
            return CameraStatus(
                name=self.name, source=self.source, model=self.model, path=self.path, state=state,
                fps=self._rate(self._times), inference_fps=self._rate(self._inferred),
                latency_p50_ms=None if latency is None else round(float(np.percentile(latency, 50)), 1),
                latency_p95_ms=None if latency is None else round(float(np.percentile(latency, 95)), 1),
                frames=self.frames, inferences=self.inferences,
                reconnects=self._past_reconnects + (live.reconnects if live is not None else 0),
                dropped_frames=self._past_dropped + (
                    (damage.packets_failed + damage.corrupt_frames) if damage is not None else 0),
                events=self.events, events_dropped=self.events_dropped(),
                last_frame_time=self.last_frame_time, error=self.error)

    def latest_jpeg(self, names: Sequence[str]) -> bytes | None:
        """The last frame with its boxes drawn, as JPEG (made when asked: nothing is encoded otherwise)."""
        from PIL import ImageFont

        from zerocopy.sinks.draw import draw_detections

        with self.lock:
            found = self._picture
        if found is None:
            return None
        picture, detections = found
        img = picture.to_image().convert("RGB")
        draw_detections(img, detections, names, ImageFont.load_default())
        out = io.BytesIO()
        img.save(out, format="JPEG", quality=80)
        return out.getvalue()


class CameraSink(NullSink):
    """Feeds the cameras of one run (by their place in its list of inputs)."""

    def __init__(self, cameras: Sequence[Camera]):
        self.cameras = list(cameras)

    def begin(self, source: str, rate: float, input: int = 0) -> None:
        with self.cameras[input].lock:
            self.cameras[input].state = "running"

    def write(self, frame: PreparedFrame, detections: Detections, input: int = 0) -> None:
        self.cameras[input].frame(frame, detections)

    def on_events(self, events: Sequence[Any], input: int = 0) -> None:
        with self.cameras[input].lock:
            self.cameras[input].events += len(events)
