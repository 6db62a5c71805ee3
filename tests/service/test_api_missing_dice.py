"""Dice missing from a roll's photo, over real HTTP: a Morning Roll bust by default
(``DICECAM_MISSING_DICE=bust``), or a 409 that asks the player to retake or type the values
(``ask``) with nothing of the turn lost; typed values are always counted strictly."""

from __future__ import annotations

import httpx
import pytest

from service.app import create_app
from service.settings import Settings
from vision import Die

from dicecam_testing.servers import LiveServer
from dicecam_testing.turns import QueueReader, dice, jpeg


def serve(tmp_path, mode: str | None):
    reader = QueueReader()
    settings = Settings(data_dir=tmp_path, **({"missing_dice": mode} if mode else {}))
    app = create_app(settings, reader=reader, tracker_app=None, submitter=None)
    srv = LiveServer(app).start()
    srv.reader = reader
    srv.client = httpx.Client(base_url=srv.url, timeout=30)
    return srv


@pytest.fixture
def bust_server(tmp_path):
    srv = serve(tmp_path, None)  # the default
    yield srv
    srv.client.close()
    srv.stop()


@pytest.fixture
def ask_server(tmp_path):
    srv = serve(tmp_path, "ask")
    yield srv
    srv.client.close()
    srv.stop()


def start(server, game: str = "morning-roll") -> dict:
    r = server.client.post("/api/v1/turns", json={"player": "tom", "game": game})
    assert r.status_code == 201, r.text
    return r.json()


def photo_roll(server, turn_id: str, found: list[Die], **data) -> httpx.Response:
    server.reader.rolls.append(found)
    return server.client.post(
        f"/api/v1/turns/{turn_id}/rolls",
        files={"photo": ("roll.jpg", jpeg(), "image/jpeg")},
        data=data,
    )


def test_missing_dice_bust_a_morning_roll_turn_by_default(bust_server):
    c = bust_server.client
    assert c.get("/api/v1/config").json()["missing_dice"] == "bust"
    t = start(bust_server)
    t = c.post(f"/api/v1/turns/{t['id']}/rolls", json={"values": [1, 1, 1, 5, 5, 2]}).json()
    t = c.post(f"/api/v1/turns/{t['id']}/keep", json={"dice": [1, 1, 1]}).json()
    assert (t["turn_points"], t["dice_left"]) == (1000, 3)
    r = photo_roll(bust_server, t["id"], dice([1, 5]))  # two scoring dice found, one not
    assert r.status_code == 200, r.text
    t = r.json()
    assert t["bust"] is True and t["over"] and t["turn_points"] == 0 and t["state"] == "bust"
    assert t["bust_reason"] == "1 die missing: the photo shows 2 of the 3 dice rolled"
    assert t["last_roll"]["missing"] == 1 and t["last_roll"]["off_table"] == 0
    assert t["reading"]["missing"] == 1 and t["reading"]["bust"] is True
    assert t["history"][-1] == {"dice": [1, 5], "off_table": 0, "missing": 1, "bust": True}
    assert c.get(f"/api/v1/turns/{t['id']}").json()["bust_reason"] == t["bust_reason"]


def test_typed_values_and_corrections_stay_strict(bust_server):
    c = bust_server.client
    t = start(bust_server)
    r = c.post(f"/api/v1/turns/{t['id']}/rolls", json={"values": [1, 5, 2, 3]})
    assert r.status_code == 422 and "should have 6 dice" in r.json()["detail"]
    r = photo_roll(bust_server, t["id"], dice([1, 5, 2, 3, 4]), values="1,5,2,3")
    # the message speaks of the values typed, not of the photo's five dice
    assert (
        r.status_code == 422
        and "should have 6 dice, but the values typed give 4 on the table (1 5 2 3); retake"
        in r.json()["detail"]
    )
    after = c.get(f"/api/v1/turns/{t['id']}").json()
    assert (after["rolls"], after["awaiting"], after["bust"]) == (0, "roll", False)


def test_other_games_ask_even_in_bust_mode(bust_server):
    t = start(bust_server, game="greed")
    r = photo_roll(bust_server, t["id"], dice([1, 5, 2]))
    assert r.status_code == 409, r.text
    body = r.json()
    assert (body["missing"], body["expected"], body["seen"]) == (2, 5, 3)
    assert body["detail"].startswith("2 dice missing")


def test_ask_mode_refuses_the_roll_and_loses_nothing(ask_server):
    c = ask_server.client
    assert c.get("/api/v1/config").json()["missing_dice"] == "ask"
    t = start(ask_server)
    t = c.post(f"/api/v1/turns/{t['id']}/rolls", json={"values": [1, 2, 2, 3, 4, 6]}).json()
    t = c.post(f"/api/v1/turns/{t['id']}/keep", json={"dice": [1]}).json()
    before = c.get(f"/api/v1/turns/{t['id']}").json()
    r = photo_roll(ask_server, t["id"], dice([5, 5, 2]))
    assert r.status_code == 409, r.text
    body = r.json()
    assert body["detail"] == (
        "2 dice missing: the photo shows 3 of the 5 dice rolled; retake the photo with every "
        "die in view, or type the values"
    )
    assert (body["missing"], body["expected"], body["seen"]) == (2, 5, 3)
    assert body["reading"]["missing"] == 2 and body["reading"]["bust"] is False
    assert c.get(f"/api/v1/turns/{t['id']}").json() == before  # nothing of the turn is lost
    # the retake shows every die
    r = photo_roll(ask_server, t["id"], dice([5, 5, 2, 3, 4]))
    assert r.status_code == 200, r.text
    assert r.json()["awaiting"] == "keep" and r.json()["turn_points"] == 100
    # a die off the table still busts at once, whatever else is missing
    t = c.post(f"/api/v1/turns/{t['id']}/keep", json={"dice": [5, 5]}).json()
    r = photo_roll(ask_server, t["id"], dice([1], off=1))
    assert r.status_code == 200, r.text
    assert r.json()["bust"] and r.json()["bust_reason"] == "1 die left the table (1 more missing)"


def test_reading_reports_missing_dice_with_the_mode(ask_server):
    ask_server.reader.rolls.append(dice([1, 2, 3, 4]))
    r = ask_server.client.post(
        "/api/v1/read",
        files={"photo": ("roll.jpg", jpeg(), "image/jpeg")},
        data={"expected_dice": "6"},
    )
    assert r.status_code == 200, r.text
    assert (r.json()["missing"], r.json()["bust"]) == (2, False)


def test_the_setting_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("DICECAM_MISSING_DICE", "ask")
    assert Settings().missing_dice == "ask"
    monkeypatch.setenv("DICECAM_MISSING_DICE", "maybe")
    with pytest.raises(ValueError, match="bust"):
        Settings()
