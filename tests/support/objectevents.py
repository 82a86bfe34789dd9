"""Real `track.ObjectEvent`s made by hand for the event store's tests (tests/unit/store, the serve HTTP tests)."""

from zerocopy.track import ObjectEvent

T0 = 1_795_000_000.0  # a Unix time the events start at


def object_event(kind: str, ident: str, start: float = T0, *, camera: str = "front", label: str = "person",
                 score: float = 0.8, box=(10.0, 20.0, 110.0, 220.0), zones: tuple[str, ...] = (),
                 end: float | None = None) -> ObjectEvent:
    """An object's `kind` event ("new", "update", "end": `end` its end time) with `zones` entered so far."""
    return ObjectEvent(type=kind, id=ident, tracker_id=1, node="box1", camera=camera, source="rtsp://front.lan/1",
                       label=label, score=score, top_score=score, box=box, start_time=start,
                       end_time=end if kind == "end" else None, frame_time=start + 1, first_pts=0.0, last_pts=1.0,
                       frames=3, current_zones=zones[-1:], entered_zones=zones)
