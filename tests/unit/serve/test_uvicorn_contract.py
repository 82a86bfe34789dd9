"""What serve's HTTP server takes from uvicorn beyond its public API (zerocopy/serve/connections.py extends its h11
protocol class, `uvicorn.protocols.http.h11_impl.H11Protocol`, and asyncio's `_accept_connection`): each method
overridden still exists with the same parameters, and the attributes read are still there with the same meaning. A
new uvicorn (pyproject.toml pins its minor version for this) that changes any of it fails here, by name, rather than
somewhere in the e2e tests of tests/e2e/test_serve_http.py."""

from __future__ import annotations

import asyncio
import inspect
import socket

import h11
import pytest

pytest.importorskip("uvicorn")
from uvicorn.config import Config  # noqa: E402
from uvicorn.protocols.http.h11_impl import H11Protocol  # noqa: E402
from uvicorn.server import ServerState  # noqa: E402

from zerocopy.serve.connections import _Deadlines, _Loop, _protocol_class  # noqa: E402

OVERRIDDEN = ("connection_made", "data_received", "handle_events", "on_response_complete", "connection_lost",
              "send_400_response", "pause_writing", "resume_writing")


def parameters(function) -> list[str]:
    return list(inspect.signature(function).parameters)


@pytest.mark.parametrize("name", OVERRIDDEN)
def test_each_method_extended_is_uvicorns_with_the_same_parameters(name):
    assert name in vars(H11Protocol), f"uvicorn's H11Protocol has no {name} any more"
    assert parameters(getattr(_Deadlines, name)) == parameters(getattr(H11Protocol, name))


def test_the_attributes_read_are_there_and_mean_what_they_meant():
    async def made() -> None:
        config = Config(app=lambda scope, receive, send: None, http=_protocol_class(10.0, 4), lifespan="off",
                        log_config=None, h11_max_incomplete_event_size=16 * 1024)
        config.load()
        state = ServerState()
        protocol = _protocol_class(10.0, 4)(config=config, server_state=state, app_state={})
        ours, theirs = socket.socketpair()  # a connection without a server
        reader, writer = await asyncio.open_connection(sock=ours)
        protocol.connection_made(writer.transport)
        try:
            assert protocol.connections is state.connections and protocol in state.connections
            assert isinstance(protocol.conn, h11.Connection) and protocol.conn.their_state is h11.IDLE
            assert protocol.conn.trailing_data == (b"", False)  # what h11 holds of a request not parsed yet
            assert protocol.cycle is None and protocol.transport is writer.transport
            assert protocol.loop is asyncio.get_running_loop()
        finally:
            protocol.connection_lost(None)
            writer.close()
            theirs.close()

    asyncio.run(made())


def test_asyncios_accept_loop_takes_the_backlog_where_it_is_given():
    accept = asyncio.selector_events.BaseSelectorEventLoop._accept_connection
    assert parameters(accept)[:6] == ["self", "protocol_factory", "sock", "sslcontext", "server", "backlog"]
    assert issubclass(_Loop, asyncio.SelectorEventLoop)
