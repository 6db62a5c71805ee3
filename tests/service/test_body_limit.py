"""service.body_limit on a real server: a body of exactly the limit is served, one byte more is
413, whether the client says the length or streams it; the app's own answer never follows a 413;
only writes under the prefix are counted."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from service.body_limit import BodyLimitMiddleware

LIMIT = 1000


async def _echo(request: Request) -> JSONResponse:
    try:
        body = await request.body()
    except ClientDisconnect:  # an app that answers anyway: its answer must not follow the 413
        return JSONResponse({"late": True})
    request.app.state.served.append(len(body))
    return JSONResponse({"got": len(body)})


@pytest.fixture
def server(serve):
    app = Starlette(routes=[Route(p, _echo, methods=["POST"]) for p in ("/api/echo", "/echo")])
    app.state.served = []
    app.add_middleware(BodyLimitMiddleware, max_bytes=LIMIT, detail="too large", prefix="/api/")
    live = serve(app)
    live.served = app.state.served
    return live


def _chunks(size: int, chunk: int = 300) -> Iterator[bytes]:
    for start in range(0, size, chunk):
        yield b"x" * min(chunk, size - start)


@pytest.mark.parametrize("streamed", [False, True], ids=["content-length", "chunked"])
def test_a_body_of_exactly_the_limit_is_served_and_one_byte_more_is_413(server, streamed):
    with httpx.Client(base_url=server.url, timeout=30) as http:
        for size, status in ((LIMIT, 200), (LIMIT + 1, 413)):
            content = _chunks(size) if streamed else b"x" * size
            r = http.post("/api/echo", content=content)
            assert r.status_code == status, (size, r.text)
            assert r.json() == ({"got": LIMIT} if status == 200 else {"detail": "too large"})
    assert server.served == [LIMIT]  # the app never answered the one over the limit


def test_a_streamed_body_over_the_limit_gets_the_413_alone(server, errors):
    """The app, told the client left, may still answer: that answer is dropped (sent after the
    413 it would be an error of the server), and the next request is served."""
    with httpx.Client(base_url=server.url, timeout=30) as http:
        r = http.post("/api/echo", content=_chunks(5 * LIMIT))
        assert (r.status_code, r.json()) == (413, {"detail": "too large"})
        assert r.headers["content-length"] == str(len(r.content))
        assert http.post("/api/echo", content=b"ok").json() == {"got": 2}
    assert server.served == [2]
    assert [r.getMessage() for r in errors] == []


def test_only_writes_under_the_prefix_are_counted(server):
    with httpx.Client(base_url=server.url, timeout=30) as http:
        assert http.post("/echo", content=b"x" * (3 * LIMIT)).json() == {"got": 3 * LIMIT}
        assert http.post("/api/echo", content=b"x" * (3 * LIMIT)).status_code == 413
