"""The routes that change an event (issue 38, item 5), serve's first that change state: `DELETE /api/events/ID`
(the event and its files, on the storage's thread: `Storage.delete`), `POST /api/events/ID/retain` and
`POST /api/events/ID/false_positive` (the mark set from a JSON body, `{"retain": true}`, or the query,
`?retain=true`). Each answers only the method its path takes (405 otherwise, with `Allow`), only what
`Gate.refuse_change` lets through (the bearer token, from this server's own origin), and a body only of JSON and of
at most `MAX_BODY` bytes (415, 413). An unknown event is a 404; a store that could not be opened a 503."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from concurrent.futures import Executor
from http import HTTPStatus

from zerocopy.serve.answers import Answer, Request, as_json, whole_number
from zerocopy.serve.gate import Gate
from zerocopy.store.events import StoreUnavailable
from zerocopy.store.marks import MARKS, mark
from zerocopy.store.storage import Storage

MAX_BODY = 1024  # bytes of a change's body (`{"false_positive": false}` takes 26)
READ = ("GET", "HEAD")


def methods_of(path: str) -> tuple[str, ...]:
    """The methods `path` takes: an event's, DELETE besides reading; a mark's, POST only; any other, reading."""
    parts = path.strip("/").split("/")
    if len(parts) == 3 and parts[:2] == ["api", "events"]:
        return (*READ, "DELETE")
    if len(parts) == 4 and parts[:2] == ["api", "events"] and parts[3] in MARKS:
        return ("POST",)
    return READ


def not_allowed(method: str, path: str) -> Answer:
    allowed = methods_of(path)
    return as_json(HTTPStatus.METHOD_NOT_ALLOWED, {"error": f"{method} is not served here; use {', '.join(allowed)}"},
                   headers=((b"allow", ", ".join(allowed).encode()),))


async def change_answer(scope: dict, receive: Callable, gate: Gate, storage: Storage | None,
                        pool: Executor) -> Answer:
    """The answer to a request whose method is not GET or HEAD (after `Gate.refuse`): its method checked, then the
    gate's check for changes, then its body read, then `change` on `pool`."""
    method, path = scope["method"], scope["path"]
    if method not in methods_of(path) or method in READ:
        return not_allowed(method, path)
    body = gate.refuse_change(scope) or await read_body(scope, receive)
    if isinstance(body, Answer):
        return body
    try:
        return await asyncio.get_running_loop().run_in_executor(pool, change, storage, method, path,
                                                                Request.of(scope), body)
    except Exception as e:  # a bug must not kill the server nor print a traceback
        return as_json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"{type(e).__name__}: {e}".splitlines()[0][:300]})


async def read_body(scope: dict, receive: Callable) -> bytes | Answer:
    """The request's body, or a 413 (the connection closed) once it is known to pass `MAX_BODY`."""
    too_large = as_json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": f"a change's body is at most {MAX_BODY} "
                                                             "bytes of JSON"}, headers=((b"connection", b"close"),))
    declared = dict(scope["headers"]).get(b"content-length", b"").decode("latin-1").strip()
    if declared and (whole_number(declared, MAX_BODY + 1) or 0) > MAX_BODY:
        return too_large
    body = b""
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client went away
            return body
        body += message.get("body", b"")
        if len(body) > MAX_BODY:
            return too_large
        if not message.get("more_body"):
            return body


def change(storage: Storage | None, method: str, path: str, request: Request, body: bytes) -> Answer:
    """The answer to a change whose method its path takes, let through by the gate."""
    if storage is None:
        return as_json(HTTPStatus.NOT_FOUND, {"error": "events are not kept here (no event store)"})
    parts = path.strip("/").split("/")
    event_id = parts[2]
    value = marked(parts[3], request, body) if method == "POST" else _json(body, request)
    if isinstance(value, Answer):
        return value
    try:
        if storage.store.get(event_id) is None:
            return as_json(HTTPStatus.NOT_FOUND, {"error": f"no event {event_id!r} (unknown, or removed)"})
        if method == "DELETE":
            freed = storage.delete(event_id)
            if freed is None:
                return as_json(HTTPStatus.ACCEPTED, {"deleted": event_id, "done": False, "note": "the storage is "
                                                     "behind: the event goes once it has written what came before"})
            return as_json(HTTPStatus.OK, {"deleted": event_id, "done": True, "bytes": freed.bytes})
        mark(storage.store.db, event_id, parts[3], value)
        event = storage.store.get(event_id)
    except StoreUnavailable as e:
        return as_json(HTTPStatus.SERVICE_UNAVAILABLE, {"error": str(e)})
    if event is None:  # (removed meanwhile)
        return as_json(HTTPStatus.NOT_FOUND, {"error": f"no event {event_id!r} (unknown, or removed)"})
    return as_json(HTTPStatus.OK, event.to_json())


def marked(name: str, request: Request, body: bytes) -> bool | Answer:
    """The value of the mark `name`, given once: `{"NAME": true|false}` as the body, or `?NAME=true|false`."""
    usage = f'give {name} once: the body {{"{name}": true}} (or false), or ?{name}=true (or false)'
    given = _json(body, request)
    if isinstance(given, Answer):
        return given
    values: list[bool] = []
    if given is not None:
        if not isinstance(given, dict) or set(given) != {name} or not isinstance(given[name], bool):
            return as_json(HTTPStatus.BAD_REQUEST, {"error": f"the body must be {{\"{name}\": true}} or false"})
        values.append(given[name])
    for key, texts in request.query.items():
        if key != name or any(t not in ("true", "false") for t in texts):
            return as_json(HTTPStatus.BAD_REQUEST, {"error": f"bad query {key}={texts[0][:40]!r}; {usage}"})
        values += [t == "true" for t in texts]
    if len(values) != 1:
        return as_json(HTTPStatus.BAD_REQUEST, {"error": usage})
    return values[0]


def _json(body: bytes, request: Request) -> object | Answer:
    """The body's JSON value (None if there is no body); 415 for a body of another type, 400 for one that is not
    JSON."""
    if not body:
        return None
    kind = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if kind != "application/json":
        return as_json(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, {"error": f"a change's body is JSON (Content-Type: "
                                                          f"application/json), not {kind[:60] or 'untyped'}"})
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as e:  # (UnicodeDecodeError and JSONDecodeError are ValueErrors)
        return as_json(HTTPStatus.BAD_REQUEST, {"error": f"the body is not JSON: {str(e)[:100]}"})
