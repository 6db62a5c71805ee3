"""A photo's ``expected_dice`` form field, read by the shipped reader over real HTTP: POST
/api/v1/score fits the photo to the count sent (``expected_dice``, ``missing``, ``dropped`` in
its reading); a Morning Roll turn reads its photo for the dice it has to roll, and refuses a
field that says another count (the reader would drop a die the photo shows, and the turn would
count it missing: a bust)."""

from __future__ import annotations

import httpx
import pytest

from service.app import create_app
from service.settings import Settings

from dicecam_testing.cli import ROOT
from dicecam_testing.servers import LiveServer

SAMPLES = ROOT / "datasets" / "samples"
FIVE = (SAMPLES / "roll-s21-009.jpg").read_bytes()  # 1 1 1 3 4
SIX = (SAMPLES / "roll-s21-041.jpg").read_bytes()  # 1 1 4 4 5 5


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    settings = Settings(data_dir=tmp_path_factory.mktemp("expected-dice"))
    app = create_app(settings, tracker_app=None, submitter=None)  # the shipped reader
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url, timeout=60) as c:
        yield c


def send(c: httpx.Client, path: str, photo: bytes, **data: str) -> httpx.Response:
    return c.post(path, files={"photo": ("roll.jpg", photo, "image/jpeg")}, data=data)


def start(c: httpx.Client) -> dict:
    r = c.post("/api/v1/turns", json={"player": "tom", "game": "morning-roll"})
    assert r.status_code == 201, r.text
    return r.json()


def test_score_reads_the_photo_for_the_dice_count_sent(client):
    url = "/api/v1/score?game=morning-roll"
    r = send(client, url, FIVE)
    assert r.status_code == 200, r.text
    plain = r.json()["reading"]
    assert (plain["expected_dice"], plain["missing"], plain["bust"]) == (None, 0, False)
    assert sorted(r.json()["values"]) == [1, 1, 1, 3, 4]

    r = send(client, url, FIVE, expected_dice="6")  # six rolled, five seen: one missing
    assert r.status_code == 200, r.text
    reading = r.json()["reading"]
    assert (reading["expected_dice"], reading["missing"], reading["bust"]) == (6, 1, True)
    assert sorted(reading["values"]) == [1, 1, 1, 3, 4]

    r = send(client, url, FIVE, expected_dice="4")  # four rolled: the least likely box left out
    assert r.status_code == 200, r.text
    reading = r.json()["reading"]
    assert (reading["expected_dice"], reading["missing"], reading["dropped"]) == (4, 0, 1)
    assert len(r.json()["values"]) == 4 and len(reading["values"]) == 4


def test_a_turn_reads_its_photo_for_the_dice_it_has_to_roll(client):
    t = start(client)
    r = send(client, f"/api/v1/turns/{t['id']}/rolls", SIX, expected_dice="6")  # agrees
    assert r.status_code == 200, r.text
    view = r.json()
    assert (view["reading"]["expected_dice"], view["reading"]["missing"]) == (6, 0)
    assert sorted(view["last_roll"]["values"]) == [1, 1, 4, 4, 5, 5] and not view["bust"]

    t = start(client)
    r = send(client, f"/api/v1/turns/{t['id']}/rolls", FIVE, expected_dice="6")
    assert r.status_code == 200, r.text
    view = r.json()
    assert view["bust"] is True and view["turn_points"] == 0
    assert view["bust_reason"] == "1 die missing: the photo shows 5 of the 6 dice rolled"
    assert (view["reading"]["expected_dice"], view["reading"]["missing"]) == (6, 1)


def test_a_turn_refuses_an_expected_dice_of_another_count(client):
    """Read for 5, the six dice on the table lost one and the turn would bust: refused,
    naming the turn's count and the one sent, and the turn is as it was."""
    t = start(client)
    r = send(client, f"/api/v1/turns/{t['id']}/rolls", SIX, expected_dice="5")
    assert r.status_code == 422, r.text
    assert r.json()["detail"] == (
        "'expected_dice': expected the 6 dice this game has to roll (or no expected_dice), got 5"
    )
    after = client.get(f"/api/v1/turns/{t['id']}").json()
    assert after["rolls"] == 0 and after["dice_left"] == 6 and not after["over"]
    r = send(client, f"/api/v1/turns/{t['id']}/rolls", SIX)  # then sent without it: read for 6
    assert r.status_code == 200, r.text
    assert sorted(r.json()["last_roll"]["values"]) == [1, 1, 4, 4, 5, 5]
