"""The server's log, at its most verbose, through a tracker registration, logins (one refused),
a token's use (one refused) and a turn submitted to the tracker: no password, token or photo
byte in any line, and each refused request leaves a WARNING line saying why."""

from __future__ import annotations

import logging

import httpx
import pytest

from service.app import create_app
from service.logs import log_config
from service.settings import Settings

from dicecam_testing.turns import QueueReader, dice, jpeg

LOGGERS = ("", "uvicorn", "uvicorn.error", "uvicorn.access", "dicecam")
HANDLED = ("", "uvicorn", "uvicorn.access")
"""The loggers whose records reach no other: the root, and uvicorn's that do not propagate."""


@pytest.fixture
def captured():
    """Every record of every logger at DEBUG (uvicorn's at its TRACE), as the handlers get them:
    ``lines, listen = captured``; ``listen()`` once the server is up (uvicorn's start configures
    its loggers anew)."""
    import logging.config

    logging.config.dictConfig(log_config("debug"))  # dicecam serve's set-up, most verbose
    lines: list[logging.LogRecord] = []
    handler = logging.Handler(level=1)
    handler.emit = lines.append
    before = {name: logging.getLogger(name).level for name in LOGGERS}

    def listen() -> None:
        for name in LOGGERS:
            logging.getLogger(name).setLevel(1)
        for name in HANDLED:
            logging.getLogger(name).addHandler(handler)

    yield lines, listen
    for name, level in before.items():
        logging.getLogger(name).removeHandler(handler)
        logging.getLogger(name).setLevel(level)


def test_no_secret_in_the_log_and_each_refusal_says_why(tmp_path, serve, captured, midday_zone):
    password = "Wh1sker-Sekret-42"
    reader = QueueReader()
    app = create_app(Settings(data_dir=tmp_path, outbox_retry_s=0), reader=reader)
    server = serve(app)
    lines, listen = captured
    listen()
    player = {"name": "lena", "password": password, "timezone": midday_zone}  # the tracker is open
    with httpx.Client(base_url=server.url, timeout=60) as c:
        assert c.post("/tracker/api/v1/players", json=player).status_code == 201
        assert c.post("/tracker/api/v1/players", json=player).status_code == 409
        login = {"name": "lena", "password": password}
        r = c.post("/api/v1/tracker/tokens", json=login)  # the camera page's login
        assert r.status_code == 201, r.text
        token = r.json()["token"]
        wrong = {"name": "lena", "password": password[::-1]}
        assert c.post("/api/v1/tracker/tokens", json=wrong).status_code == 401
        assert c.post("/tracker/api/v1/tokens", json=wrong).status_code == 401
        auth = {"Authorization": f"Bearer {token}"}
        assert c.get("/tracker/api/v1/me", headers=auth).status_code == 200
        bad = {"Authorization": f"Bearer {token[::-1]}"}
        assert c.get("/tracker/api/v1/me", headers=bad).status_code == 401
        turn = c.post("/api/v1/turns", json={"player": "lena", "tracker_token": token}).json()
        photo = jpeg()
        reader.rolls.append(dice([2, 2, 3, 4, 6, 6]))  # a bust: the turn ends and is sent
        files = {"photo": ("roll.jpg", photo, "image/jpeg")}
        r = c.post(f"/api/v1/turns/{turn['id']}/rolls", files=files)
        assert r.json()["submission"]["status"] == "submitted", r.text
        assert c.post("/api/v1/turns", json={"player": ""}).status_code == 422

    text = "\n".join(f"{r.levelname} {r.name}: {r.getMessage()}" for r in lines)
    assert '"POST /tracker/api/v1/players HTTP/1.1" 201' in text  # uvicorn's access log too
    for secret in (password, password[::-1], token, token[::-1], token[:12], token[-12:]):
        assert secret not in text, f"{secret[:4]}... is in the log"
    assert photo[-40:].hex() not in text and str(photo[-40:])[2:-1] not in text

    refused = [r.getMessage() for r in lines if r.name == "dicecam.requests"]
    assert all(r.levelno == logging.WARNING for r in lines if r.name == "dicecam.requests")
    expected = [
        "refused POST /tracker/api/v1/players (409): ",
        "refused POST /tracker/api/v1/tokens (401): ",  # the service's login asked the tracker
        "refused POST /api/v1/tracker/tokens (401): ",
        "refused POST /tracker/api/v1/tokens (401): ",
        "refused GET /tracker/api/v1/me (401): unknown or revoked token",
        "refused POST /api/v1/turns (422): 'player': ",
    ]
    assert len(refused) == len(expected), refused
    for line, start in zip(refused, expected, strict=True):
        assert line.startswith(start) and len(line) > len(start) + 10, line


def test_a_malformed_body_echoes_no_token_or_password_back_nor_into_the_log(
    tmp_path, serve, captured
):
    """A 422 says what came for a wrong field, but not for a token or a password: one sent as a
    number, or a body that came whole (a list) holding a password, was repeated in the answer
    and in the refusal's log line."""
    app = create_app(Settings(data_dir=tmp_path, outbox_retry_s=0), reader=QueueReader())
    server = serve(app)
    lines, listen = captured
    listen()
    token, password = 98765432109876543210, "Wh1sker-Sekret-42"
    with httpx.Client(base_url=server.url, timeout=60) as c:
        r = c.post("/api/v1/turns", json={"player": "lena", "tracker_token": token})
        assert r.status_code == 422 and "'tracker_token'" in r.json()["detail"], r.text
        answers = [r.text]
        for route in ("/tracker/api/v1/tokens", "/api/v1/tracker/tokens"):
            r = c.post(route, json=[{"name": "lena", "password": password}])
            assert r.status_code == 422, r.text
            answers.append(r.text)
    text = "\n".join([*answers, *(r.getMessage() for r in lines)])
    assert str(token) not in text and password not in text
    assert (
        "'round' (in the query): "
        in (
            httpx.get(f"{server.url}/tracker/api/v1/leaderboard?round=x", timeout=30).json()[
                "detail"
            ]
        )
    )  # other fields still say what came


def test_a_form_refused_with_a_page_says_why_in_the_log(tmp_path, serve, captured):
    """The tracker's forms answer a refusal with the form again (HTML, no JSON ``detail``): the
    WARNING line had the status only. It now says why, as for the JSON answers, with no
    password in any line."""
    password, wrong, short = "Wh1sker-Sekret-42", "Whisker-Wrong-99", "Sh0rt!x"
    app = create_app(Settings(data_dir=tmp_path, outbox_retry_s=0), reader=QueueReader())
    server = serve(app)
    lines, listen = captured
    listen()
    player = {"name": "lena", "password": password, "timezone": "UTC"}
    with httpx.Client(base_url=f"{server.url}/tracker", timeout=60) as c:
        assert c.post("/api/v1/players", json=player).status_code == 201
        assert c.post("/register", data=player).status_code == 409  # the name is taken
        short_one = {**player, "name": "mia", "password": short}
        assert c.post("/register", data=short_one).status_code == 422
        login = {"name": "lena", "password": wrong, "score": "300"}
        assert c.post("/add", data=login).status_code == 401
        zone = {"name": "lena", "password": password, "timezone": "Mars/Base"}
        assert c.post("/timezone", data=zone).status_code == 422
        assert c.get("/players/nobody").status_code == 404  # an error page

    refused = [r.getMessage() for r in lines if r.name == "dicecam.requests"]
    assert refused == [
        "refused POST /tracker/register (409): the name 'lena' is already taken",
        "refused POST /tracker/register (422): password: String should have at least 8 characters",
        "refused POST /tracker/add (401): wrong player name or password",
        "refused POST /tracker/timezone (422): timezone: expected an IANA time zone name such as "
        "'Europe/Paris' or 'America/Chicago', got 'Mars/Base'",
        "refused GET /tracker/players/nobody (404): no player named 'nobody'",
    ]
    text = "\n".join(r.getMessage() for r in lines)
    for secret in (password, wrong, short):
        assert secret not in text, f"{secret[:4]}... is in the log"


def test_a_503_is_a_refusal_the_log_says_why_and_a_500_is_not(tmp_path, serve, captured):
    """A 503 (the reader that cannot be loaded, a full read queue, the tracker down) is told
    as a refusal with its reason, as a 4xx is; a 500 is logged by the crash log instead."""
    from service.api.reader import ReaderService

    def no_model() -> None:
        raise FileNotFoundError("models/dicecam-reader.onnx")

    class Crashing:
        def read(self, image, expected_dice=None):
            raise RuntimeError("the model failed")

    app = create_app(Settings(data_dir=tmp_path), tracker_app=None, submitter=None)
    app.state.reader = ReaderService(factory=no_model)
    server = serve(app)
    lines, listen = captured
    listen()
    photo = {"photo": ("roll.jpg", jpeg(), "image/jpeg")}
    with httpx.Client(base_url=server.url, timeout=30) as c:
        assert c.post("/api/v1/read", files=photo).status_code == 503
        app.state.reader = ReaderService(reader=Crashing())
        assert c.post("/api/v1/read", files=photo).status_code == 500
    refused = [r.getMessage() for r in lines if r.name == "dicecam.requests"]
    assert refused == [
        "refused POST /api/v1/read (503): the dice reader could not be loaded "
        "(FileNotFoundError: models/dicecam-reader.onnx); type the values by hand meanwhile"
    ]


def test_a_refusal_sent_in_pieces_is_one_line_with_its_whole_detail(serve, captured):
    """An answer whose body comes in several chunks (a streamed answer) is logged once, when
    it ends, with the detail read from all of its chunks."""
    from starlette.applications import Starlette
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    from service.logs import RefusalLog

    async def halves():
        yield b'{"detail": "the first half '
        yield b'and the second"}'

    async def refused(request):
        return StreamingResponse(halves(), status_code=422, media_type="application/json")

    server = serve(RefusalLog(Starlette(routes=[Route("/pieces", refused)])))
    lines, listen = captured
    listen()
    with httpx.Client(base_url=server.url, timeout=30) as c:
        assert c.get("/pieces?token=secret").status_code == 422
    assert [r.getMessage() for r in lines if r.name == "dicecam.requests"] == [
        "refused GET /pieces (422): the first half and the second"
    ]


def test_a_400_is_a_refusal_the_log_says_why(tmp_path, serve, captured):
    app = create_app(Settings(data_dir=tmp_path), tracker_app=None, submitter=None)
    server = serve(app)
    lines, listen = captured
    listen()
    with httpx.Client(base_url=server.url, timeout=30) as c:
        bad_json = {"content-type": "application/json"}
        assert c.post("/api/v1/turns", content=b'{"player":', headers=bad_json).status_code == 400
    assert [r.getMessage() for r in lines if r.name == "dicecam.requests"] == [
        "refused POST /api/v1/turns (400): the request body is not valid JSON"
    ]


def test_a_refusals_detail_cannot_start_a_forged_line(serve, captured):
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from service.logs import RefusalLog

    async def echoes(request):  # a detail echoing what the client sent, control characters too
        said = request.query_params["name"]
        return JSONResponse({"detail": f"no player {said}"}, status_code=404)

    server = serve(RefusalLog(Starlette(routes=[Route("/echo", echoes)])))
    lines, listen = captured
    listen()
    with httpx.Client(base_url=server.url, timeout=30) as c:
        name = "ann\nWARNING refused GET /admin (403)\x1b[2K"
        assert c.get("/echo", params={"name": name}).status_code == 404
    assert [r.getMessage() for r in lines if r.name == "dicecam.requests"] == [
        "refused GET /echo (404): no player ann\\nWARNING refused GET /admin (403)\\x1b[2K"
    ]


def test_a_tracker_form_sent_as_broken_multipart_is_said_plainly_and_logged_once(
    tmp_path, serve, captured
):
    """A form posted as multipart the parser cannot read: the page and the log's one line say
    so with the type that came (was 'Invalid multipart data.'), and the multipart library's own
    warning ('Expected boundary character ...', printed bare past the log's format) is not
    written."""
    app = create_app(Settings(data_dir=tmp_path), reader=QueueReader())
    server = serve(app)
    lines, listen = captured
    listen()
    kind = "multipart/form-data; boundary=XYZ"
    with httpx.Client(base_url=f"{server.url}/tracker", timeout=30) as c:
        r = c.post("/add", content=b"garbage", headers={"content-type": kind})
    assert r.status_code == 400 and r.headers["content-type"].startswith("text/html")
    said = f"could not parse the multipart form: Invalid multipart data (content-type {kind!r})"
    assert said.replace("'", "&#x27;") in r.text
    assert [r.getMessage() for r in lines if r.name == "dicecam.requests"] == [
        f"refused POST /tracker/add (400): {said}"
    ]
    assert not [r for r in lines if r.name.startswith("python_multipart")]
