"""`/api/events` (a page of the stored events, newest first, filtered by `camera`, `label`, `zone`, `after`,
`before`, `limit`, continued after `cursor`: `store.paging`), `/api/events/ID` and each event's files:
`snapshot.jpg`, `thumbnail.jpg`, `clip.mp4` (with range requests: `files.file_answer`). A bad filter is a 400
naming it; an unknown or expired event a 404; a store that could not be opened a 503 saying why; a GET of a route
that changes an event (`event_changes`) a 405. All JSON."""

from __future__ import annotations

import math
from http import HTTPStatus
from typing import Any

from zerocopy.serve.answers import Answer, Request, as_json, whole_number
from zerocopy.serve.event_changes import not_allowed
from zerocopy.serve.files import file_answer
from zerocopy.store.events import DEFAULT_LIMIT, MAX_LIMIT, Cursor, EventFilter, StoreUnavailable
from zerocopy.store.marks import MARKS
from zerocopy.store.storage import Storage

FILTERS = ("camera", "label", "zone", "after", "before", "limit", "cursor")
FILES = {"snapshot.jpg": ("snapshot", "image/jpeg"), "thumbnail.jpg": ("thumbnail", "image/jpeg"),
         "clip.mp4": ("clip", "video/mp4")}


class BadFilter(ValueError):
    """A filter of `/api/events` that cannot be used (its message names it)."""


def event_answer(storage: Storage | None, rest: list[str], request: Request) -> Answer:
    """The answer to `/api/events` followed by `rest` (the path's parts after it)."""
    if storage is None:
        return as_json(HTTPStatus.NOT_FOUND, {"error": "events are not kept here (no event store)"})
    if len(rest) == 2 and rest[1] in MARKS:
        return not_allowed("GET", f"/api/events/{rest[0]}/{rest[1]}")
    if len(rest) > 2 or (len(rest) == 2 and rest[1] not in FILES):
        return as_json(HTTPStatus.NOT_FOUND, {"error": "not found; an event's files are /api/events/ID/" +
                                              ", ".join(FILES)})
    try:
        if not rest:
            filters = event_filters(request.query)
            after, limit = filters.pop("cursor", None), filters.pop("limit", DEFAULT_LIMIT)
            page = storage.store.page(EventFilter(**filters), after=after, limit=limit)
            return as_json(HTTPStatus.OK, page.to_json())
        event = storage.store.get(rest[0])
    except BadFilter as e:
        return as_json(HTTPStatus.BAD_REQUEST, {"error": str(e)})
    except StoreUnavailable as e:
        return as_json(HTTPStatus.SERVICE_UNAVAILABLE, {"error": str(e)})
    if event is None:
        return as_json(HTTPStatus.NOT_FOUND, {"error": f"no event {rest[0]!r} (unknown, or removed by retention)"})
    if len(rest) == 1:
        return as_json(HTTPStatus.OK, event.to_json())
    kind, content_type = FILES[rest[1]]
    path = getattr(event, kind)  # one of store.events.FILES
    if path is None:
        return as_json(HTTPStatus.NOT_FOUND, {"error": f"event {event.id!r} has no {kind}"})
    return file_answer(path, content_type, request.headers.get("range"), storage.store.open_file)


def event_filters(query: dict[str, list[str]]) -> dict[str, Any]:
    """`/api/events`' query → `EventFilter`'s keywords, with `limit` and `cursor` (a `Cursor`); `BadFilter` naming
    the first bad one (an unknown or repeated name, a time that is not a number, a limit that is not a whole number
    from 1 to `MAX_LIMIT`, a cursor no page gave)."""
    filters: dict[str, Any] = {}
    for name, values in query.items():
        if name not in FILTERS:
            raise BadFilter(f"unknown filter {name!r}; /api/events takes {', '.join(FILTERS)}")
        if len(values) != 1:
            raise BadFilter(f"{name} is given {len(values)} times; give it once")
        value = values[0].strip()
        if name in ("camera", "label", "zone"):
            if not value:
                raise BadFilter(f"{name} is empty; leave it out to have every {name}")
            filters[name] = value
        elif name == "limit":
            limit = whole_number(value, MAX_LIMIT + 1)  # of any length: 4,301 digits were a 500
            if limit is None or not 1 <= limit <= MAX_LIMIT:
                raise BadFilter(f"limit must be a whole number from 1 to {MAX_LIMIT}, not {value[:40]!r}")
            filters[name] = limit
        elif name == "cursor":
            try:
                filters[name] = Cursor.parse(value)
            except ValueError as e:
                raise BadFilter(f"cursor: {e}") from None
        else:
            try:
                filters[name] = float(value)
            except ValueError:
                filters[name] = math.nan
            if not math.isfinite(filters[name]):
                raise BadFilter(f"{name} must be a Unix time in seconds (e.g. 1795543378.5), not {value[:40]!r}")
    return filters
