"""A roll typed as JSON takes JSON integers only, against a real server: its ``values`` faces
1 to 6 and its ``off_table`` a count of dice 0 to 13 (``true``, ``3.0``, ``"3"`` are none), in
the usual 422 sentence, on a Farkle turn, a Solitaire Dice sheet, a Low-High turn and
``POST /api/v1/score``; a refused roll leaves the game as it was."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from service.app import create_app
from service.settings import Settings

from dicecam_testing.servers import LiveServer
from dicecam_testing.turns import QueueReader


@pytest.fixture(scope="module")
def service(tmp_path_factory) -> Iterator[httpx.Client]:
    """The service without a tracker on a real server, shared by this module's tests."""
    app = create_app(
        Settings(data_dir=tmp_path_factory.mktemp("strict"), outbox_retry_s=0),
        reader=QueueReader(),
        tracker_app=None,
        submitter=None,
    )
    with LiveServer(app) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        yield http


FIVE = [1, 2, 3, 4, 6]

BAD_ROLLS: list[tuple[dict[str, Any], str]] = [
    ({"values": [True, 2, 3, 4, 6]}, "'values.0': Input should be a valid integer (got True)"),
    ({"values": [1, 3.0, 3, 4, 6]}, "'values.1': Input should be a valid integer (got 3.0)"),
    ({"values": [1, 2, "3", 4, 6]}, "'values.2': Input should be a valid integer (got '3')"),
    ({"values": [1, 2, 3, 0, 6]}, "'values.3': expected a face 1 to 6, got 0"),
    ({"values": [1, 2, 3, 4, 7]}, "'values.4': expected a face 1 to 6, got 7"),
    ({"values": "1,2,3,4,6"}, "'values': Input should be a valid list"),
    ({"values": FIVE, "off_table": True}, "'off_table': Input should be a valid integer"),
    ({"values": FIVE, "off_table": 1.0}, "'off_table': Input should be a valid integer"),
    ({"values": FIVE, "off_table": 1.5}, "'off_table': Input should be a valid integer"),
    ({"values": FIVE, "off_table": "1"}, "'off_table': Input should be a valid integer"),
    (
        {"values": FIVE, "off_table": -1},
        "'off_table': expected a count of dice off the table 0 to 13, got -1",
    ),
    (
        {"values": [], "off_table": 99},
        "'off_table': expected a count of dice off the table 0 to 13, got 99",
    ),
]
"""Typed rolls each route refuses, with the start of its 422's sentence."""

GAMES = {  # where a game starts, and a roll it takes
    "farkle": ("/api/v1/turns", {"game": "farkle-five"}, FIVE),
    "solitaire": ("/api/v1/sheets", {}, FIVE),
    "low-high": ("/api/v1/low-high/turns", {}, [1] * 6 + [6] * 7),
}


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize(("body", "detail"), BAD_ROLLS)
def test_a_games_typed_roll_takes_json_integers_only(service, game, body, detail):
    start, extra, good = GAMES[game]
    created = service.post(start, json={"player": "ann", **extra})
    assert created.status_code == 201, created.text
    url = f"{start}/{created.json()['id']}"
    r = service.post(url + "/rolls", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["detail"].startswith(detail), r.json()
    held = service.get(url).json()  # nothing rolled: the game still waits for its first roll
    assert (held["rolls"], held["awaiting"]) == (0, "roll"), held
    r = service.post(url + "/rolls", json={"values": good})
    assert r.status_code == 200 and r.json()["rolls"] == 1, r.text


@pytest.mark.parametrize(("body", "detail"), BAD_ROLLS)
def test_score_takes_json_integers_only(service, body, detail):
    r = service.post("/api/v1/score", params={"game": "farkle-five"}, json=body)
    assert r.status_code == 422, r.text
    assert r.json()["detail"].startswith(detail), r.json()


@pytest.mark.parametrize(
    ("game", "body", "detail"),
    [
        (
            "farkle-five",
            {"values": FIVE, "off_table": 1},
            "cannot score [1, 2, 3, 4, 6] in farkle-five: expected at most 5 dice, got 5 on "
            "the table and 1 off it",
        ),
        (
            "solitaire-dice",
            {"values": FIVE, "off_table": 2},
            "cannot score [1, 2, 3, 4, 6] in solitaire-dice: expected at most 5 dice, got 5 "
            "on the table and 2 off it",
        ),
        (
            "low-high",
            {"values": [1, 2], "off_table": 12},
            "cannot score [1, 2] in low-high: expected at most 13 dice, got 2 on the table "
            "and 12 off it",
        ),
    ],
)
def test_score_refuses_more_dice_than_the_game_rolls(service, game, body, detail):
    r = service.post("/api/v1/score", params={"game": game}, json=body)
    assert r.status_code == 422, r.text
    assert r.json()["detail"] == detail


def test_score_takes_dice_off_the_table_within_the_games_count(service):
    r = service.post(
        "/api/v1/score", params={"game": "morning-roll"}, json={"values": FIVE, "off_table": 1}
    )
    assert r.status_code == 200, r.text
    assert (r.json()["bust"], r.json()["off_table"]) == (True, 1)


def test_the_schema_shows_a_typed_rolls_bounds(service):
    paths = service.get("/openapi.json").json()["paths"]
    for path in (
        "/api/v1/turns/{turn_id}/rolls",
        "/api/v1/sheets/{sheet_id}/rolls",
        "/api/v1/score",
    ):
        body = paths[path]["post"]["requestBody"]["content"]["application/json"]["schema"]
        assert body["required"] == ["values"], path
        assert body["properties"]["values"]["items"] == {
            "type": "integer",
            "minimum": 1,
            "maximum": 6,
        }
        off = body["properties"]["off_table"]
        assert (off["type"], off["minimum"], off["maximum"], off["default"]) == (
            "integer",
            0,
            13,
            0,
        )
