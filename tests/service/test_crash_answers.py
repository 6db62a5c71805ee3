"""Crash answers against real servers: a reader that fails on a photo and a crash of
``dicecam tracker`` on its own answer 500 with an error id and no internals, logged once with
the traceback; the schema says so; a Farkle keep takes JSON integers 1 to 6 only."""

from __future__ import annotations

import logging

import httpx
import pytest

from service.app import create_app
from service.body_limit import BodyLimitMiddleware
from service.host_guard import HostGuardMiddleware
from service.logs import RefusalLog
from service.security_headers import HEADERS, SecurityHeadersMiddleware
from service.settings import Settings

from dicecam_testing.turns import QueueReader, jpeg

SECRET = "onnx session exploded in /home/dicecam/models/dicecam-reader.onnx\n\x1b[2J"
SAID = "the dice reader failed on this photo: error {}, told in the server's log"


class CrashingReader:
    """A reader whose model fails on every photo, its message naming a path."""

    def read(self, image, expected_dice=None):
        raise RuntimeError(SECRET)


def _service(tmp_path, serve, reader) -> httpx.Client:
    app = create_app(
        Settings(data_dir=tmp_path, outbox_retry_s=0),
        reader=reader,
        tracker_app=None,
        submitter=None,
    )
    return httpx.Client(base_url=serve(app).url, timeout=30)


def _assert_crash_answer(r: httpx.Response, said: str, errors: list[logging.LogRecord]) -> str:
    """``r`` is the 500 saying ``said`` with its error id, logged once with the traceback."""
    assert r.status_code == 500, r.text
    assert r.headers["content-type"] == "application/json"
    assert r.headers["x-content-type-options"] == "nosniff"  # inside the security headers
    body = r.json()
    error_id = body["error_id"]
    assert body == {"detail": said.format(error_id), "error_id": error_id}
    for internal in ("RuntimeError", "exploded", "/home/", "onnx"):
        assert internal not in r.text
    (record,) = errors  # logged once: not again by uvicorn, unescaped
    assert record.name == "dicecam.service" and record.levelno == logging.ERROR
    first, *traceback = record.getMessage().split("\n")
    assert first.startswith(f"unhandled error {error_id} on "), first
    assert traceback and all(line.startswith("    ") and line.isprintable() for line in traceback)
    return "\n".join(traceback)


def test_a_reader_crash_says_the_photo_failed_and_only_the_log_says_why(tmp_path, serve, errors):
    with _service(tmp_path, serve, CrashingReader()) as http:
        r = http.post("/api/read", files={"photo": ("a.jpg", jpeg(), "image/jpeg")})
        traceback = _assert_crash_answer(r, SAID, errors)
        assert (
            errors[0]
            .getMessage()
            .startswith(
                f"unhandled error {r.json()['error_id']} on POST /api/read (500): RuntimeError\n"
            )
        )
        assert "    RuntimeError: " + repr(SECRET)[1:-1] in traceback  # the model's own words
        assert "the dice reader failed on this photo" in traceback
        assert http.get("/api/v1/health").json()["status"] == "ok"  # the service goes on


def test_a_reader_crash_on_a_turns_photo_leaves_the_turn_as_it_was(tmp_path, serve, errors):
    with _service(tmp_path, serve, CrashingReader()) as http:
        turn = http.post("/api/v1/turns", json={"player": "ann", "game": "farkle-five"}).json()
        url = f"/api/v1/turns/{turn['id']}"
        r = http.post(url + "/rolls", files={"photo": ("a.jpg", jpeg(), "image/jpeg")})
        _assert_crash_answer(r, SAID, errors)
        held = http.get(url).json()
        assert (held["awaiting"], held["rolls"], held["dice_left"]) == ("roll", 0, 5)
        r = http.post(url + "/rolls", json={"values": [1, 2, 3, 4, 6]})  # typed: it goes on
        assert r.status_code == 200 and r.json()["awaiting"] == "keep", r.text


def test_the_schema_says_what_a_500_answers(tmp_path, serve):
    with _service(tmp_path, serve, QueueReader()) as http:
        paths = http.get("/openapi.json").json()["paths"]
    said = {
        op["responses"]["500"]["description"]
        for p in paths.values()
        for op in p.values()
        if "500" in op["responses"]
    }
    (description,) = said  # every route of the service API that documents it, alike
    assert "nothing was changed" not in description
    assert "error id" in description and "log" in description


def _tracker(serve, sqlite_url: str) -> httpx.Client:
    """The tracker as ``dicecam tracker`` serves it on its own: no service around it."""
    from service.tracker import create_app as create_tracker_app

    app = create_tracker_app(sqlite_url, bind="127.0.0.1")
    return httpx.Client(base_url=serve(app).url, timeout=30)


@pytest.mark.parametrize("path", ["/api/v1/rounds", "/"])
def test_the_tracker_on_its_own_answers_a_crash_with_an_error_id(
    serve, sqlite_url, errors, monkeypatch, path
):
    from service.tracker import api, pages

    def crash(*args, **kwargs):
        raise RuntimeError(SECRET)

    monkeypatch.setattr(api.rules, "current_round", crash)
    monkeypatch.setattr(pages.rules, "current_round", crash)
    with _tracker(serve, sqlite_url) as http:
        r = http.get(path)
        said = "the service failed unexpectedly: error {}, told in the server's log"
        traceback = _assert_crash_answer(r, said, errors)
        assert (
            errors[0]
            .getMessage()
            .startswith(
                f"unhandled error {r.json()['error_id']} on GET {path} (500): RuntimeError\n"
            )
        )
        assert traceback.endswith("    RuntimeError: " + repr(SECRET)[1:-1])
        monkeypatch.undo()
        assert http.get("/api/v1/rounds").status_code == 200  # the tracker goes on


OUTER = [SecurityHeadersMiddleware, HostGuardMiddleware, RefusalLog, BodyLimitMiddleware]
"""The layers around the routes (CrashLog is the outermost, around them too)."""


def _crash_in(monkeypatch: pytest.MonkeyPatch, layer: type) -> None:
    async def crash(self, scope, receive, send):
        raise RuntimeError(SECRET)

    monkeypatch.setattr(layer, "__call__", crash)


@pytest.mark.parametrize("layer", OUTER, ids=lambda layer: layer.__name__)
@pytest.mark.parametrize("where", ["tracker", "service", "service's tracker"])
def test_a_crash_of_a_layer_around_the_routes_answers_with_an_error_id(
    tmp_path, serve, sqlite_url, errors, monkeypatch, layer, where
):
    """A crash of a middleware outside CrashLog got Starlette's plain-text 500 (the tracker),
    or a JSON one without the security headers, its traceback logged again by uvicorn (the
    service)."""
    if where == "tracker":
        http, path = _tracker(serve, sqlite_url), "/api/v1/rounds"
    else:
        app = create_app(Settings(data_dir=tmp_path, outbox_retry_s=0), submitter=None)
        http = httpx.Client(base_url=serve(app).url, timeout=30)
        path = "/tracker/api/v1/rounds" if where == "service's tracker" else "/api/v1/health"
    with http:
        _crash_in(monkeypatch, layer)
        r = http.post(path, json={})  # a POST: through the body limit too
        said = "the service failed unexpectedly: error {}, told in the server's log"
        traceback = _assert_crash_answer(r, said, errors)
        assert all(r.headers[name.decode()] == value.decode() for name, value in HEADERS)
        assert traceback.endswith("    RuntimeError: " + repr(SECRET)[1:-1])
        monkeypatch.undo()
        assert http.get(path).status_code == 200  # it goes on


def _farkle_turn_at_keep(http: httpx.Client) -> tuple[str, dict]:
    """A five-dice Farkle turn's address and its best keep, the roll waiting for a keep."""
    turn = http.post("/api/v1/turns", json={"player": "ann", "game": "farkle-five"}).json()
    url = f"/api/v1/turns/{turn['id']}"
    r = http.post(url + "/rolls", json={"values": [1, 3, 3, 3, 4]})
    r.raise_for_status()
    return url, r.json()["keeps"][0]


@pytest.mark.parametrize(
    ("dice", "detail"),
    [
        ([True], "'dice.0': Input should be a valid integer"),
        ([3.0, 3, 3], "'dice.0': Input should be a valid integer"),
        ([3, "3", 3], "'dice.1': Input should be a valid integer"),
        ([1, 7], "'dice.1': expected a face 1 to 6, got 7"),
        ([0], "'dice.0': expected a face 1 to 6, got 0"),
        ([], "'dice': List should have at least 1 item"),
    ],
)
def test_a_farkle_keep_takes_json_integers_1_to_6_only(tmp_path, serve, dice, detail):
    with _service(tmp_path, serve, QueueReader()) as http:
        url, best = _farkle_turn_at_keep(http)
        r = http.post(url + "/keep", json={"dice": dice})
        assert r.status_code == 422, r.text
        assert r.json()["detail"].startswith(detail), r.json()
        held = http.get(url).json()  # nothing kept: the roll still waits for its keep
        assert (held["awaiting"], held["turn_points"], held["dice_left"]) == ("keep", 0, 5)
        r = http.post(url + "/keep", json={"dice": best["dice"]})
        assert r.status_code == 200 and r.json()["turn_points"] == best["points"] > 0, r.text


def test_the_schema_shows_a_keeps_faces_1_to_6(tmp_path, serve):
    with _service(tmp_path, serve, QueueReader()) as http:
        schemas = http.get("/openapi.json").json()["components"]["schemas"]
    items = schemas["Keep"]["properties"]["dice"]["items"]
    assert items == {"type": "integer", "minimum": 1, "maximum": 6}


def test_a_crash_after_the_answer_began_cuts_it_short_and_is_logged_once(tmp_path, serve, errors):
    """A route that crashes mid-answer (a streamed body) cannot be answered 500 any more: the
    client gets the answer cut short, the log the crash once, escaped; a second answer sent
    after the first made uvicorn log it again, with its own traceback."""
    from fastapi.responses import StreamingResponse

    app = create_app(
        Settings(data_dir=tmp_path, outbox_retry_s=0),
        reader=QueueReader(),
        tracker_app=None,
        submitter=None,
    )

    async def rows():
        yield b'{"rows": ['
        raise RuntimeError(SECRET)

    app.add_api_route("/api/v1/export", lambda: StreamingResponse(rows()))
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
        with pytest.raises(httpx.RemoteProtocolError), http.stream("GET", "/api/v1/export") as r:
            assert r.status_code == 200
            r.read()
        assert http.get("/api/v1/health").json()["status"] == "ok"  # the service goes on
    crash = [r for r in errors if r.name == "dicecam.service"]
    (record,) = crash
    assert " on GET /api/v1/export (500): RuntimeError\n" in record.getMessage()
    assert all(line.isprintable() for line in record.getMessage().split("\n"))
    assert not [r for r in errors if r.exc_info], "a traceback logged again, unescaped"


def test_a_crash_logs_each_frame_of_its_traceback_on_lines_of_its_own(caplog):
    from service.logs import log_crash

    def failing() -> None:
        raise RuntimeError("sent: ann\nforged line")

    try:
        failing()
    except RuntimeError as exc:
        with caplog.at_level("ERROR", logger="dicecam.service"):
            error_id = log_crash({"method": "POST", "path": "/api/v1/read"}, exc)
    lines = caplog.records[-1].getMessage().split("\n")
    assert lines[0] == f"unhandled error {error_id} on POST /api/v1/read (500): RuntimeError"
    frame = next(i for i, line in enumerate(lines) if "in failing" in line)
    assert lines[frame].startswith('      File "') and lines[frame].endswith(", in failing")
    assert lines[frame + 1].strip() == 'raise RuntimeError("sent: ann\\nforged line")'
    assert lines[-1] == "    RuntimeError: sent: ann\\nforged line"  # the message: one line
