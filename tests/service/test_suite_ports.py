"""The ports the service tests serve on stay theirs when test processes run side by side
(``pytest -n 2``): the port ``unused_port`` gives is bound for the test, so another test
process cannot start a server on it, yet the test can; a server or a throwaway PostgreSQL
holds its port from its choice on, before it listens."""

from __future__ import annotations

import errno
import shutil
import socket

import httpx
import pytest
from fastapi import FastAPI

from dicecam_testing.postgres import ThrowawayPostgres
from dicecam_testing.servers import LiveServer


def _app() -> FastAPI:
    app = FastAPI()
    app.get("/ping")(lambda: {"pong": True})
    return app


def _taken(port: int) -> bool:
    """Whether another process binding ``port`` (as a server or ``free_port`` does) fails."""
    with socket.socket() as other:
        try:
            other.bind(("127.0.0.1", port))
        except OSError as exc:
            assert exc.errno == errno.EADDRINUSE, exc
            return True
        return False


def test_an_unused_port_refuses_connections_stays_taken_and_can_be_served_on(
    unused_port: int, serve
) -> None:
    assert _taken(unused_port)
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{unused_port}/ping", timeout=5)
    server = serve(_app(), port=unused_port)
    assert server.port == unused_port
    assert httpx.get(f"{server.url}/ping", timeout=10).json() == {"pong": True}


def test_a_served_port_is_taken_and_given_up_when_the_server_stops(serve) -> None:
    server = serve(_app())
    assert _taken(server.port)
    assert httpx.get(f"{server.url}/ping", timeout=10).json() == {"pong": True}
    server.__exit__(None, None, None)
    assert not _taken(server.port)


def test_a_server_holds_its_port_from_when_it_is_made() -> None:
    server = LiveServer(_app())
    try:
        assert _taken(server.port)  # before it listens: no other process can take it
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{server.url}/ping", timeout=5)
        server.start()
        assert httpx.get(f"{server.url}/ping", timeout=10).json() == {"pong": True}
    finally:
        server.stop()
    assert not _taken(server.port)


def test_a_throwaway_postgres_holds_its_port_until_it_listens() -> None:
    try:
        pg = ThrowawayPostgres()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    try:
        assert _taken(pg.port)  # chosen, held while initdb and pg_ctl run
    finally:
        pg._port.close()
        shutil.rmtree(pg.dir, ignore_errors=True)
    assert not _taken(pg.port)
