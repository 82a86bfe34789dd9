"""What `zerocopy serve`'s HTTP side answers (the server itself is `http.py`): `/health`, `/metrics` (Prometheus,
built at scrape time), `/api/cameras`, each camera's `latest.jpg` and `live.mp4` (its record stream as it comes),
all read from the engine when asked (`StatusSource`)."""

from __future__ import annotations

from collections.abc import Iterator
from http import HTTPStatus
from typing import Any, NamedTuple, Protocol

from zerocopy.publish.ledger import KINDS
from zerocopy.record.live import NoLive, open_live
from zerocopy.record.ring import PacketRing
from zerocopy.serve.answers import Answer, Request, as_json
from zerocopy.serve.decode_gate import gate_metrics
from zerocopy.serve.event_routes import event_answer
from zerocopy.serve.page import PAGE_PATHS, page_answer
from zerocopy.serve.recording_routes import RECORDING_ROUTES, recording_answer
from zerocopy.serve.status import STATES, CameraStatus
from zerocopy.serve.tallies import analytics_metrics
from zerocopy.store.metrics import storage_metrics
from zerocopy.store.storage import Storage

BEHIND = 100  # messages waiting for a connected broker from which /health is "degraded" (fewer: awaiting its ack)


class Health(NamedTuple):
    """Whether the service can work, and why (`StatusSource.healthy`)."""

    ok: bool
    reason: str  # "ok", or why not (e.g. "every camera failed")


class HealthAnswer(NamedTuple):
    """`/health`'s answer before it is written as JSON (`health`)."""

    status: int  # 200 or 503
    value: dict[str, Any]  # what it says (`as_json`'s value): status ("ok", "degraded", "unhealthy"), reason, broker


class StatusSource(Protocol):
    """What the server reads (the engine). `latest`: whether cameras keep their last picture for latest.jpg.
    `cameras(stats)` takes `publisher_stats()` when the caller has read it already, else reads it.
    `model_compiles()`: how many times each model was compiled since the start. `storage`: where events are kept
    (None: nowhere; `/api/events` answers 404). `ring(name)`: the ring of the camera's record stream (None: it does
    not record)."""

    latest: bool
    storage: Storage | None

    def model_compiles(self) -> dict[str, int]: ...
    def cameras(self, publisher_stats: dict | None = None) -> list[CameraStatus]: ...
    def latest_jpeg(self, name: str) -> bytes | None: ...
    def ring(self, name: str) -> PacketRing | None: ...
    def healthy(self) -> Health: ...
    def publisher_stats(self) -> dict | None: ...


class ServeCollector:
    """Prometheus metrics built at scrape time from each camera's status, read then (and the publisher's
    counters, where the engine has a publisher: `publisher_stats()`)."""

    def __init__(self, source: StatusSource):
        self.source = source

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        labels = ["camera", "path"]
        fam = {
            "fps": GaugeMetricFamily("zerocopy_camera_fps", "frames per second read (last seconds; decoded, or left "
                                     "undecoded by the decode gate)", labels=labels),
            "inference_fps": GaugeMetricFamily("zerocopy_camera_inference_fps",
                                               "frames per second inferred (last seconds)", labels=labels),
            "latency": GaugeMetricFamily("zerocopy_camera_latency_seconds", "frame arrival to result, over the "
                                         "last inferred frames", labels=[*labels, "quantile"]),
            "frames": CounterMetricFamily("zerocopy_camera_frames", "frames read since the start (decoded, or left "
                                          "undecoded by the decode gate)", labels=labels),
            "inferences": CounterMetricFamily("zerocopy_camera_inferences", "frames inferred since the start",
                                              labels=labels),
            "reconnects": CounterMetricFamily("zerocopy_camera_reconnects", "times the source dropped and was "
                                              "opened again", labels=labels),
            "dropped": CounterMetricFamily("zerocopy_camera_dropped_frames", "packets that failed to decode and "
                                           "corrupt frames", labels=labels),
            "events": CounterMetricFamily("zerocopy_camera_events", "object events made (new, update, end)",
                                          labels=labels),
            "last": GaugeMetricFamily("zerocopy_camera_last_frame_timestamp_seconds", "Unix time of the last frame",
                                      labels=labels),
            "state": GaugeMetricFamily("zerocopy_camera_state", "1 for the camera's state, 0 for the others",
                                       labels=["camera", "state"]),
        }
        stats = self.source.publisher_stats()  # read once a scrape: the cameras' events_dropped, the MQTT metrics
        statuses = self.source.cameras(stats)
        for s in statuses:
            lv = [s.name, s.path or "none"]
            fam["fps"].add_metric(lv, s.fps)
            fam["inference_fps"].add_metric(lv, s.inference_fps)
            for q, ms in (("0.5", s.latency_p50_ms), ("0.95", s.latency_p95_ms)):
                if ms is not None:
                    fam["latency"].add_metric([*lv, q], ms / 1e3)
            fam["frames"].add_metric(lv, s.frames)
            fam["inferences"].add_metric(lv, s.inferences)
            fam["reconnects"].add_metric(lv, s.reconnects)
            fam["dropped"].add_metric(lv, s.dropped_frames)
            fam["events"].add_metric(lv, s.events)
            if s.last_frame_time is not None:
                fam["last"].add_metric(lv, s.last_frame_time)
            for state in STATES:
                fam["state"].add_metric([s.name, state], 1.0 if s.state == state else 0.0)
        yield from fam.values()
        yield from analytics_metrics(statuses)
        yield from gate_metrics(statuses)
        if self.source.storage is not None:
            yield from storage_metrics(self.source.storage.stats())
        compiles = CounterMetricFamily("zerocopy_model_compiles", "times a model was compiled since the start (once "
                                       "per model and device while cameras come and go)", labels=["model"])
        for model, n in sorted(self.source.model_compiles().items()):
            compiles.add_metric([model], n)
        yield compiles
        if stats:
            published = CounterMetricFamily("zerocopy_mqtt_published", "MQTT messages the broker acknowledged "
                                            "(events) or that were written to it (detections)", labels=["kind"])
            dropped = CounterMetricFamily("zerocopy_mqtt_dropped", "MQTT messages never delivered (offline queue "
                                          "full, broker away)", labels=["kind"])
            for kind in KINDS:
                counts = stats.get(kind) or {}
                published.add_metric([kind], counts.get("published", 0))
                dropped.add_metric([kind], counts.get("dropped", 0))
            yield published
            yield dropped
            yield GaugeMetricFamily("zerocopy_mqtt_queued", "MQTT messages waiting for the broker",
                                    value=stats.get("queued", 0))
            yield CounterMetricFamily("zerocopy_mqtt_reconnects", "times the broker connection was made again",
                                      value=stats.get("reconnects", 0))
            yield GaugeMetricFamily("zerocopy_mqtt_connected", "1 while connected to the broker",
                                    value=1.0 if stats.get("connected") else 0.0)


def metrics_registry(source: StatusSource):
    """A registry of the cameras' metrics and this process's CPU seconds, RSS and open files."""
    from prometheus_client import CollectorRegistry, ProcessCollector

    registry = CollectorRegistry(auto_describe=False)
    registry.register(ServeCollector(source))
    ProcessCollector(registry=registry)
    return registry


def health(source: StatusSource, requires_broker: bool = False) -> HealthAnswer:
    """`/health`: "unhealthy" (503) when no camera can work; "degraded" when the broker is not connected or
    `BEHIND` messages or more wait for it (200, or 503 with `requires_broker`); else "ok". `broker` is null
    without `[publish]`."""
    ok, why = source.healthy()
    stats = source.publisher_stats()
    broker = None if stats is None else {"connected": bool(stats.get("connected")),
                                         "queued": int(stats.get("queued", 0)), "dropped": int(stats.get("dropped", 0))}
    if not ok:
        return HealthAnswer(HTTPStatus.SERVICE_UNAVAILABLE, {"status": "unhealthy", "reason": why, "broker": broker})
    if stats is not None and broker is not None and (not broker["connected"] or broker["queued"] >= BEHIND):
        state = "the broker is connected" if broker["connected"] else \
            f"the broker is not connected ({stats.get('last_error') or 'no answer yet'})"
        reason = f"{state}; {broker['queued']} message(s) queued, {broker['dropped']} dropped"
        return HealthAnswer(HTTPStatus.SERVICE_UNAVAILABLE if requires_broker else HTTPStatus.OK,
                            {"status": "degraded", "reason": reason, "broker": broker})
    return HealthAnswer(HTTPStatus.OK, {"status": "ok", "reason": why, "broker": broker})


def route(source: StatusSource, registry: Any, path: str, requires_broker: bool = False,
          request: Request | None = None) -> Answer:
    """The answer to a GET of `path` (already percent-decoded); `request`: its query and headers."""
    if path in PAGE_PATHS:  # the page (serve/page/): its own files
        return page_answer(path, (request or Request()).headers.get("if-none-match"))
    if path == "/health":
        answer = health(source, requires_broker)
        return as_json(answer.status, answer.value)
    if path == "/metrics":
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return Answer(HTTPStatus.OK, CONTENT_TYPE_LATEST, generate_latest(registry))
    if path in ("/api/cameras", "/api/cameras/"):
        return as_json(HTTPStatus.OK, [s.to_json() for s in source.cameras()])
    parts = path.strip("/").split("/")
    if parts[:2] == ["api", "events"]:
        return event_answer(source.storage, parts[2:], request or Request())
    if len(parts) in (3, 4) and parts[:2] == ["api", "cameras"]:
        name = parts[2]
        found = [s for s in source.cameras() if s.name == name]
        if not found:
            return as_json(HTTPStatus.NOT_FOUND, {"error": f"no camera named {name!r}"})
        if len(parts) == 3:
            return as_json(HTTPStatus.OK, found[0].to_json())
        if parts[3] == "latest.jpg":
            jpeg = source.latest_jpeg(name)
            if jpeg is None:
                why = "has no frame yet" if source.latest else "keeps no latest picture ([http] latest = false)"
                return as_json(HTTPStatus.NOT_FOUND, {"error": f"camera {name!r} {why}"})
            return Answer(HTTPStatus.OK, "image/jpeg", jpeg)
        if parts[3] in RECORDING_ROUTES:
            return recording_answer(source.storage, name, parts[3], request or Request())
        if parts[3] == "live.mp4":
            return live_answer(source, name)
    return as_json(HTTPStatus.NOT_FOUND, {"error": "not found; try /health, /metrics, /api/cameras, "
                                        "/api/cameras/NAME/latest.jpg, /api/cameras/NAME/live.mp4, /api/events"})


def live_answer(source: StatusSource, name: str) -> Answer:
    """The camera's live video (`record.live`): its record stream as fragmented MP4 from its newest keyframe, sent
    as it comes; its codec in the Content-Type (`codecs=`), the Unix time its first picture arrived in
    `X-Live-Start`. 404 for a camera that does not record, or whose codec is not H.264 or H.265; 503 (`Retry-After`)
    while it has no keyframe yet, or when `MAX_VIEWERS` are watching already."""
    ring = source.ring(name)
    if ring is None:
        return as_json(HTTPStatus.NOT_FOUND, {"error": f"camera {name!r} does not record (no [storage], record = "
                                              "false, or a local device): live video is its record stream"})
    try:
        stream = open_live(ring)
    except NoLive as e:
        if e.retry_s is None:
            return as_json(HTTPStatus.NOT_FOUND, {"error": f"camera {name!r}: {e}"})
        return as_json(HTTPStatus.SERVICE_UNAVAILABLE, {"error": f"camera {name!r}: {e}"},
                       headers=((b"retry-after", str(e.retry_s).encode()),))
    return Answer(HTTPStatus.OK, f'video/mp4; codecs="{stream.codec}"', stream,
                  ((b"x-live-start", f"{stream.start_wall:.3f}".encode()),))
