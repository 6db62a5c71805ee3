"""Request bodies are strict, against real servers: a JSON body with a key its route does not
take (a misspelt one) is refused with 422 naming that key and the keys taken, and nothing is
stored; a whole number in a form field is ASCII digits only (``int()`` took ``+3``, ``3_0``,
`` 3 `` and ``\\u0663``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from service.app import create_app
from service.settings import Settings

from dicecam_testing.servers import LiveServer
from dicecam_testing.turns import QueueReader, dice, jpeg


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[httpx.Client, QueueReader]]:
    """The service without a tracker on a real server (and SQLite file), with its reader."""
    reader = QueueReader()
    settings = Settings(data_dir=tmp_path_factory.mktemp("strict-bodies"), outbox_retry_s=0)
    app = create_app(settings, reader=reader, tracker_app=None, submitter=None)
    with LiveServer(app) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        yield http, reader


@pytest.fixture
def service(served) -> httpx.Client:
    return served[0]


def refused(r: httpx.Response, unknown: str, *taken: str) -> None:
    """``r`` is a 422 whose sentence names the ``unknown`` key and each key ``taken``."""
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert f"got the unknown key '{unknown}'" in detail, detail
    said = detail.split("expected only the key")[1].split(", got")[0]
    assert all(f"'{key}'" in said for key in taken), detail


def started(http: httpx.Client, path: str, **body: Any) -> str:
    r = http.post(path, json={"player": "ann", **body})
    assert r.status_code == 201, r.text
    return f"{path}/{r.json()['id']}"


def open_games(http: httpx.Client, player: str) -> list[dict[str, Any]]:
    r = http.get("/api/v1/open-games", params={"player": player})
    assert r.status_code == 200, r.text
    return r.json()["games"]


@pytest.mark.parametrize(
    ("path", "body", "unknown", "taken"),
    [
        ("/api/v1/turns", {"gmae": "greed"}, "gmae", ("player", "game", "rules", "on_board")),
        ("/api/v1/sheets", {"rule": {}}, "rule", ("player", "rules")),
        ("/api/v1/low-high/turns", {"rules": {}, "x": 1}, "x", ("player", "rules")),
    ],
)
def test_a_game_started_with_an_unknown_key_is_refused_and_not_stored(
    service, path, body, unknown, taken
):
    player = f"nobody-{unknown}"
    r = service.post(path, json={"player": player, **body})
    refused(r, unknown, *taken)
    assert open_games(service, player) == []  # no game was started under that name


def test_a_turns_moves_with_an_unknown_key_change_nothing(service):
    turn = started(service, "/api/v1/turns")
    before = service.get(turn).json()
    r = service.post(turn + "/rolls", json={"valuse": [1, 5, 2, 3, 4, 6]})
    refused(r, "valuse", "values", "off_table")
    r = service.post(turn + "/rolls", json={"values": [1, 5, 2, 3, 4, 6], "off": 1})
    refused(r, "off", "values", "off_table")
    assert service.get(turn).json() == before  # not rolled
    r = service.post(turn + "/rolls", json={"values": [1, 5, 2, 2, 4, 6]})
    assert r.status_code == 200, r.text
    rolled = service.get(turn).json()
    r = service.post(turn + "/keep", json={"dice": [1], "bank": True})
    refused(r, "bank", "dice", "forced_reroll")
    assert service.get(turn).json() == rolled  # nothing kept, not banked


def test_a_typed_roll_to_score_with_an_unknown_key_is_refused(service):
    r = service.post("/api/v1/score", params={"game": "farkle-five"}, json={"value": [1, 5]})
    refused(r, "value", "values", "off_table")
    r = service.post("/api/v1/score", params={"game": "farkle-five"}, json={"off_table": 1})
    assert r.status_code == 422 and r.json()["detail"].startswith('missing "values"'), r.text
    r = service.post("/api/v1/score", params={"game": "farkle-five"}, json={"values": [1, 5]})
    assert r.status_code == 200 and r.json()["values"] == [1, 5], r.text


def test_a_sheets_moves_with_an_unknown_key_change_nothing(service):
    sheet = started(service, "/api/v1/sheets")
    r = service.post(sheet + "/rolls", json={"values": [1, 2, 3, 4, 6]})
    assert r.status_code == 200, r.text
    rolled = service.get(sheet).json()
    split = {"reject": 1, "combos": [5, 10], "free_ride": False}
    refused(service.post(sheet + "/split", json=split), "free_ride", "reject", "combos")
    assert service.get(sheet).json() == rolled
    low_high = started(service, "/api/v1/low-high/turns")
    r = service.post(low_high + "/rolls", json={"values": [1] * 6 + [6] * 7})
    assert r.status_code == 200, r.text
    rolled = service.get(low_high).json()
    refused(service.post(low_high + "/keep", json={"face": 6, "all": 1}), "all", "face")
    assert service.get(low_high).json() == rolled


def test_the_calibration_and_the_tracker_login_refuse_unknown_keys(service):
    before = service.get("/api/v1/calibration").json()
    box = {"points": [[0, 0], [100, 0], [100, 80]], "width": 100, "height": 80, "name": "x"}
    refused(service.put("/api/v1/calibration", json=box), "name", "points", "image")
    assert service.get("/api/v1/calibration").json() == before
    login = {"name": "ann", "password": "long enough", "remember": True}
    tokens = service.post("/api/v1/tracker/tokens", json=login)
    refused(tokens, "remember", "name", "password", "turns")


def test_the_schema_shows_request_bodies_closed_and_answers_open(service):
    schema = service.get("/openapi.json").json()
    models = schema["components"]["schemas"]
    for name in ("NewTurn", "Keep", "NewGame", "Split", "KeepSet", "Login", "CalibrationIn"):
        assert models[name]["additionalProperties"] is False, name
    roll = schema["paths"]["/api/v1/turns/{turn_id}/rolls"]["post"]["requestBody"]["content"]
    assert roll["application/json"]["schema"]["additionalProperties"] is False
    assert "additionalProperties" not in models["OpenGames"]  # an answer may grow


def test_the_trackers_api_refuses_an_unknown_key_and_stores_nothing(sqlite_tracker, join):
    http, _ = sqlite_tracker
    headers = join(http, "ann", "UTC")
    turn = {"player": "ann", "score": 300, "idempotency_key": "key-00000001", "gmae": "greed"}
    r = http.post("/api/v1/turns", json=turn, headers=headers)
    refused(r, "gmae", "player", "score", "idempotency_key", "rolls")
    roll = {"values": [1, 5], "photo": "x"}
    turn = {**turn, "rolls": [roll]}
    del turn["gmae"]
    r = http.post("/api/v1/turns", json=turn, headers=headers)
    assert r.status_code == 422 and "'rolls.0': expected only the keys" in r.json()["detail"]
    assert http.get("/api/v1/players/ann/turns").json()["turns"] == []
    r = http.put("/api/v1/me/timezone", json={"tz": "Europe/Paris"}, headers=headers)
    refused(r, "tz", "timezone")
    assert http.get("/api/v1/me", headers=headers).json()["timezone"] == "UTC"


FORM_NUMBERS = ["+1", "1_0", "\u0661", "1.0", "0x1"]
"""Numbers Python's int() (or pydantic's lax integer: 1.0) took in a form field, or not."""


@pytest.mark.parametrize("text", [*FORM_NUMBERS, " 1 "])
def test_a_photo_rolls_form_takes_numbers_in_ascii_digits_only(service, text):
    turn = started(service, "/api/v1/turns")
    photo = {"photo": ("roll.jpg", jpeg(), "image/jpeg")}
    form = {"values": "1,5,2,2,4", "off_table": text}
    r = service.post(turn + "/rolls", files=photo, data=form)
    assert r.status_code == 422, r.text
    said = f"'off_table': expected a whole number in the digits 0-9, got {text!r}"
    assert r.json()["detail"] == said
    if text == text.strip():  # the values are written apart by commas or spaces
        values = f"1,5,{text},2,4"
        r = service.post(turn + "/rolls", files=photo, data={"values": values})
        assert r.status_code == 422, r.text
        assert (
            r.json()["detail"]
            == f"values must be whole numbers 1 to 6 like '1,5,5'; got {values!r}"
        )
    assert service.get(turn).json()["rolls"] == 0
    r = service.post("/api/v1/read", files=photo, data={"expected_dice": text})
    assert r.status_code == 422, r.text
    assert r.json()["detail"].startswith("'expected_dice': expected a whole number in the digits")


def test_a_negative_form_number_gets_the_range_check(service, served):
    turn = started(service, "/api/v1/turns")
    photo = {"photo": ("roll.jpg", jpeg(), "image/jpeg")}
    r = service.post(turn + "/rolls", files=photo, data={"values": "1,5", "off_table": "-1"})
    assert r.status_code == 422, r.text
    assert (
        r.json()["detail"] == "'off_table': expected a count of dice off the table 0 to 13, got -1"
    )
    r = service.post("/api/v1/read", files=photo, data={"expected_dice": "0"})
    assert r.json()["detail"] == "'expected_dice': expected a dice count of 1 or more, got 0"
    served[1].rolls.append(dice([1, 5, 2, 2]))
    r = service.post(turn + "/rolls", files=photo, data={"values": "1,5,2,2", "off_table": "2"})
    assert r.status_code == 200 and r.json()["rolls"] == 1, r.text  # digits still do


@pytest.mark.parametrize("text", [*FORM_NUMBERS, ""])
def test_the_add_roll_form_takes_a_score_in_ascii_digits_only(sqlite_tracker, join, text):
    http, _ = sqlite_tracker
    join(http, "ann", "UTC", password="long-password")
    key = http.get("/add").text.split('name="idempotency_key" value="')[1].split('"')[0]
    form = {"name": "ann", "password": "long-password", "idempotency_key": key}
    r = http.post("/add", data={**form, "score": text.replace("1", "300")})
    assert r.status_code == 422, r.text
    assert "expected a whole number in the digits 0-9" in r.text
    assert http.get("/api/v1/players/ann/turns").json()["turns"] == []


def test_a_form_number_of_more_digits_than_int_converts_is_refused_in_words(service):
    # int() refuses over 4300 digits with advice for the server's Python
    # ('use sys.set_int_max_str_digits()'), which the answer passed on to the client
    turn = started(service, "/api/v1/turns")
    photo = {"photo": ("roll.jpg", jpeg(), "image/jpeg")}
    many = "1" * 5000
    r = service.post(turn + "/rolls", files=photo, data={"values": "1,5", "off_table": many})
    assert r.status_code == 422, r.text
    assert r.json()["detail"] == (
        "'off_table': expected a whole number of at most 4300 digits, got one of 5000 digits"
    )
    r = service.post("/api/v1/read", files=photo, data={"expected_dice": "-" + many})
    assert r.status_code == 422, r.text
    assert r.json()["detail"] == (
        "'expected_dice': expected a whole number of at most 4300 digits, got one of 5000 digits"
    )
    assert service.get(turn).json()["rolls"] == 0


def test_a_huge_typed_roll_is_not_echoed_whole(service):
    # the 422 repeated the whole typed text: up to a megabyte in the answer (and on the page)
    turn = started(service, "/api/v1/turns")
    photo = {"photo": ("roll.jpg", jpeg(), "image/jpeg")}
    typed = "1,5,x," * 50_000
    r = service.post(turn + "/rolls", files=photo, data={"values": typed})
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert detail.startswith("values must be whole numbers 1 to 6 like '1,5,5'; got '1,5,x,1,5")
    assert detail.endswith(f"... ({len(repr(typed))} characters)") and len(detail) < 200, detail
    assert service.get(turn).json()["rolls"] == 0
