"""The refusal log at its edges: which statuses are refusals, a path or an answer a client
shapes (a newline in the path, a detail of megabytes, a JSON answer that is not an object),
and the ``dicecam`` loggers' lines coming out through uvicorn's handler."""

from __future__ import annotations

import logging
import logging.config

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from service.logs import DETAIL_BYTES, RefusalLog, log_config


@pytest.fixture
def refusals():
    """The messages of ``dicecam.requests``, as its records come (attach once a server is up)."""
    logger = logging.getLogger("dicecam.requests")
    lines: list[str] = []
    handler = logging.Handler(level=1)
    handler.emit = lambda record: lines.append(record.getMessage())
    before = logger.level

    def listen() -> list[str]:
        logger.setLevel(1)
        logger.addHandler(handler)
        return lines

    yield listen
    logger.removeHandler(handler)
    logger.setLevel(before)


async def answer(request):
    """Answers with the status and body the query asks for."""
    status = int(request.query_params["status"])
    body = request.query_params.get("body", '{"detail": "why"}')
    return Response(body, status_code=status, media_type="application/json")


async def large(request):
    return JSONResponse({"detail": "x" * (DETAIL_BYTES * 4)}, status_code=400)


@pytest.fixture
def server(serve):
    return serve(RefusalLog(Starlette(routes=[Route("/answer", answer), Route("/big", large)])))


def test_4xx_and_503_are_refusals_and_other_answers_are_not(server, refusals):
    lines = refusals()
    with httpx.Client(base_url=server.url, timeout=30) as c:
        for status in (200, 302, 399, 400, 499, 500, 502, 503, 504):
            assert c.get("/answer", params={"status": status}).status_code == status
    assert lines == [f"refused GET /answer ({s}): why" for s in (400, 499, 503)]


def test_a_newline_in_the_path_is_logged_escaped(server, refusals):
    lines = refusals()
    with httpx.Client(base_url=server.url, timeout=30) as c:
        assert c.get("/a%0AWARNING%20forged%1B[2K").status_code == 404  # no such route
    assert lines == ["refused GET /a\\nWARNING forged\\x1b[2K (404)"]


@pytest.mark.parametrize("body", ["[1, 2]", '"a string"', "7", "null"])
def test_a_json_answer_that_is_not_an_object_is_sent_whole_and_logged(server, refusals, body):
    lines = refusals()
    with httpx.Client(base_url=server.url, timeout=30) as c:
        r = c.get("/answer", params={"status": 409, "body": body})
    assert (r.status_code, r.text) == (409, body)
    assert lines == ["refused GET /answer (409)"]


def test_a_detail_of_megabytes_is_not_kept_nor_logged_whole(server, refusals):
    """At most DETAIL_BYTES of an answer are kept for its detail: a larger one is cut (and,
    no longer JSON, logged without it); the client still gets it whole."""
    lines = refusals()
    with httpx.Client(base_url=server.url, timeout=30) as c:
        r = c.get("/big")
    assert r.status_code == 400 and len(r.json()["detail"]) == DETAIL_BYTES * 4
    assert lines == ["refused GET /big (400)"]


def test_the_dicecam_loggers_write_through_uvicorns_handler_at_the_level_given(capsys):
    logging.config.dictConfig(log_config("warning"))
    try:
        logging.getLogger("dicecam.requests").warning("refused GET /x (404): why")
        logging.getLogger("dicecam.service").info("not at warning")
    finally:
        logging.config.dictConfig(log_config("info"))
    err = capsys.readouterr().err
    assert "WARNING:  refused GET /x (404): why" in err.splitlines()
    assert "not at warning" not in err


def test_a_crash_on_a_path_with_a_newline_is_logged_escaped(serve):
    """The crash line's path is what the client sent: it cannot start a forged line."""
    from service.logs import CrashLog

    async def crashes(scope, receive, send):
        raise RuntimeError("the route failed")

    logger = logging.getLogger("dicecam.service")
    records: list[logging.LogRecord] = []
    handler = logging.Handler(level=1)
    handler.emit = records.append
    server = serve(CrashLog(crashes))
    logger.addHandler(handler)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as c:
            r = c.get("/a%0AERROR%20forged")
    finally:
        logger.removeHandler(handler)
    assert r.status_code == 500
    [record] = records
    first = record.getMessage().split("\n")[0]
    assert first.endswith(" on GET /a\\nERROR forged (500): RuntimeError"), first
