"""The refusal log at its edges: which statuses are refusals, a path or an answer a client
shapes (a newline in the path, a detail of megabytes, a JSON answer that is not an object),
and the ``dicecam`` loggers' lines coming out through uvicorn's handler."""

from __future__ import annotations

import json
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


def _crash_line(serve, path: str) -> str:
    """The first line the service logs for a GET of ``path`` from an app that crashes, after
    checking that the answer was a 500."""
    from service.logs import CrashLog

    async def crashes(scope, receive, send):
        raise RuntimeError("the route failed")

    logger = logging.getLogger("dicecam.service")
    records: list[logging.LogRecord] = []
    handler = logging.Handler(level=1)
    handler.emit = records.append
    url = serve(CrashLog(crashes)).url
    logger.addHandler(handler)
    try:
        assert httpx.get(f"{url}{path}", timeout=30).status_code == 500
    finally:
        logger.removeHandler(handler)
    [record] = records
    return record.getMessage().split("\n")[0]


def test_a_crash_on_a_path_with_a_newline_is_logged_escaped(serve):
    """The crash line's path is what the client sent: it cannot start a forged line."""
    first = _crash_line(serve, "/a%0AERROR%20forged")
    assert first.endswith(" on GET /a\\nERROR forged (500): RuntimeError"), first


def test_a_path_sent_5000_characters_long_is_logged_clipped(tmp_path, serve, sqlite_url):
    """The add-on's and the tracker's refusal line named the path whole: a 5,000-character id
    in the URL made a 5 kB line (the answer quoted it clipped since 36d2041). It is named by
    its first 80 characters and its length, as the answer's sentence quotes a long input."""
    from service.app import create_app
    from service.settings import Settings
    from service.tracker import create_app as create_tracker

    long = "y" * 5000
    app = create_app(Settings(data_dir=tmp_path), tracker_app=None, submitter=None)
    tracker = create_tracker(sqlite_url, bind="127.0.0.1")  # standalone: its own refusal log
    logger = logging.getLogger("dicecam.requests")
    lines: list[str] = []
    handler = logging.Handler(level=1)
    handler.emit = lambda record: lines.append(record.getMessage())
    before = logger.level
    urls = serve(app).url, serve(tracker).url
    logger.setLevel(1)
    logger.addHandler(handler)
    try:
        assert httpx.get(f"{urls[0]}/api/v1/turns/{long}", timeout=30).status_code == 404
        assert httpx.get(f"{urls[1]}/api/v1/players/{long}/turns", timeout=30).status_code == 404
    finally:
        logger.removeHandler(handler)
        logger.setLevel(before)
        tracker.state.db.dispose()
    service_line, tracker_line = lines
    assert service_line.startswith(f"refused GET /api/v1/turns/{long[:66]}... (5014 characters)")
    assert tracker_line.startswith(f"refused GET /api/v1/players/{long[:64]}... (5022 characters)")
    assert all(len(line) < 400 for line in lines), [len(line) for line in lines]


def test_a_long_word_in_a_detail_or_a_crashs_path_is_logged_clipped(server, refusals, serve):
    """A detail no handler clipped (a page's say_why, another app's answer) and the crash line's
    path are clipped in the log as a refusal's path is."""
    long = "z" * 3000  # a detail of under DETAIL_BYTES: one longer is not logged at all
    lines = refusals()
    with httpx.Client(base_url=server.url, timeout=30) as c:
        body = json.dumps({"detail": f"no player named {long} here"})
        assert c.get("/answer", params={"status": 404, "body": body}).status_code == 404
    assert lines == [
        f"refused GET /answer (404): no player named {long[:80]}... (3000 characters) here"
    ]
    first = _crash_line(serve, f"/turns/{long}{long}")
    assert first.endswith(f" on GET /turns/{long[:73]}... (6007 characters) (500): RuntimeError")
