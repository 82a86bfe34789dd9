"""A camera's recordings over HTTP (issue 38; docs/serve.md, *Recordings*): `/api/cameras/NAME/recordings` (its
segments overlapping a time: start, end, bytes, motion, objects, oldest first, at most `MAX_SEGMENTS`, a day at most
a request) and `/api/cameras/NAME/clip.mp4` (an export of a time, an hour at most: `record.export`, kept a while by
`exports.Exports`, answered with range requests by `files.file_answer`). Times are Unix seconds, like the events'.
Bad times are a 400 in one line; a time without footage a 404; no store a 404, a store that cannot be read a 503;
too many exports at once a 503 with `Retry-After`. Blocking: called on the server's pool."""

from __future__ import annotations

import math
import time
from http import HTTPStatus

from zerocopy.record.clip import ClipError
from zerocopy.record.ring import NoFootage
from zerocopy.serve.answers import Answer, Request, as_json
from zerocopy.serve.exports import MAX_BUSY, RETRY_S, Busy, exports_of
from zerocopy.serve.files import file_answer
from zerocopy.store.database import StoreUnavailable
from zerocopy.store.storage import Storage

RECORDING_ROUTES = ("recordings", "clip.mp4")
MAX_LIST_S = 86400.0  # the widest time /recordings answers (a day: the timeline's)
LIST_S = 3600.0  # the time it answers when `after` is left out: the hour before `before`
MAX_SEGMENTS = 10_000  # rows one answer holds at most (`more`: ask again after the last one's end)
MAX_EXPORT_S = 3600.0  # the longest export
CUT_AT_GAP = b"x-zerocopy-cut-at-gap"


class BadTimes(ValueError):
    """A request's times that cannot be used (its message says why)."""


def recording_answer(storage: Storage | None, camera: str, route: str, request: Request) -> Answer:
    """The answer to `/api/cameras/CAMERA/ROUTE` (`route` one of `RECORDING_ROUTES`; the camera is known)."""
    if storage is None:
        return as_json(HTTPStatus.NOT_FOUND, {"error": "recordings are not kept here (no [storage])"})
    try:
        if route == "recordings":
            after, before = times(request.query, ("after", "before"), MAX_LIST_S)
            return _listing(storage, camera, after, before)
        start, end = times(request.query, ("start", "end"), MAX_EXPORT_S)
        return _export(storage, camera, start, end, request.headers.get("range"))
    except BadTimes as e:
        return as_json(HTTPStatus.BAD_REQUEST, {"error": str(e)})
    except StoreUnavailable as e:
        return as_json(HTTPStatus.SERVICE_UNAVAILABLE, {"error": str(e)})


def times(query: dict[str, list[str]], names: tuple[str, str], widest: float) -> tuple[float, float]:
    """The two times `names` of a query (Unix seconds), the second after the first and at most `widest` after it;
    `BadTimes` naming the first thing wrong. `after`/`before` may be left out (the hour before now); `start` and
    `end` may not."""
    first, second = names
    unknown = sorted(set(query) - set(names))
    if unknown:
        raise BadTimes(f"unknown parameter {unknown[0]!r}; this route takes {first} and {second} (Unix seconds)")
    found: dict[str, float] = {}
    for name in names:
        values = query.get(name)
        if values is None:
            continue
        if len(values) != 1:
            raise BadTimes(f"{name} is given {len(values)} times; give it once")
        try:
            found[name] = float(values[0].strip())
        except ValueError:
            found[name] = math.nan
        if not math.isfinite(found[name]) or found[name] < 0:
            raise BadTimes(f"{name} must be a Unix time in seconds (e.g. 1795543378.5), not {values[0][:40]!r}")
    if first == "after":
        found.setdefault(second, time.time())
        found.setdefault(first, found[second] - LIST_S)
    for name in names:
        if name not in found:
            raise BadTimes(f"{name} is missing: give {first} and {second} (Unix seconds)")
    if found[second] <= found[first]:
        raise BadTimes(f"{second} ({found[second]:.3f}) must come after {first} ({found[first]:.3f})")
    if found[second] - found[first] > widest:
        raise BadTimes(f"{second} - {first} is {found[second] - found[first]:.0f} s: at most {widest:.0f} s "
                       "a request; ask for the rest in another")
    return found[first], found[second]


def _listing(storage: Storage, camera: str, after: float, before: float) -> Answer:
    segments = storage.segments(camera, after, before)
    more = len(segments) > MAX_SEGMENTS
    return as_json(HTTPStatus.OK, {"camera": camera, "after": after, "before": before, "more": more,
                                   "segments": [s.to_json() for s in segments[:MAX_SEGMENTS]]})


def _export(storage: Storage, camera: str, start: float, end: float, range_header: str | None) -> Answer:
    try:
        fd, result = exports_of(storage).open(camera, start, end)
    except Busy:
        return as_json(HTTPStatus.SERVICE_UNAVAILABLE,
                       {"error": f"{MAX_BUSY} exports are being made already (the most at once); try again shortly"},
                       headers=((b"retry-after", str(RETRY_S).encode()),))
    except NoFootage:
        return as_json(HTTPStatus.NOT_FOUND, {"error": f"camera {camera!r} has no recording between {start:.3f} and "
                                              f"{end:.3f}"})
    except (ClipError, OSError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        return as_json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"cannot make the export: {why}"})
    answer = file_answer(result.path, "video/mp4", range_header, lambda _: fd)
    said = [(b"x-zerocopy-start", f"{result.first_wall:.3f}".encode()),
            (b"x-zerocopy-seconds", f"{result.seconds:.3f}".encode())]
    if result.cut_at_gap:
        said.append((CUT_AT_GAP, b"1"))
    return answer._replace(headers=(*answer.headers, *said))
