"""Morning Roll's day rules through the HTTP API, the server's clock deciding: one turn per
local day, 8am-8pm local, far time zones near midnight, the year rollover."""

from __future__ import annotations

import httpx
import pytest

from service.tracker import create_app


def test_second_turn_same_day_is_refused_and_next_day_accepted(tracker, join, turn):
    http, clock = tracker
    clock.set("2026-05-01T09:00:00+00:00")
    auth = join(http, "mike")
    assert http.post("/api/v1/turns", json=turn("mike", 500), headers=auth).status_code == 201
    clock.set("2026-05-01T19:59:00+00:00")
    r = http.post("/api/v1/turns", json=turn("mike", 2500), headers=auth)
    assert r.status_code == 409
    assert r.json() == {
        "detail": "mike already took a turn on 2026-05-01 (one turn per player per day)"
    }
    clock.set("2026-05-02T08:00:00+00:00")
    assert http.post("/api/v1/turns", json=turn("mike", 50), headers=auth).status_code == 201
    totals = http.get("/api/v1/leaderboard").json()["standings"]
    assert totals[0]["total"] == 550 and totals[0]["turns"] == 2


@pytest.mark.parametrize("utc_time", ["13:59", "02:01"])  # 7:59am and 8:01pm in Chicago (CST)
def test_outside_8am_8pm_local_is_refused(sqlite_tracker, utc_time, join, turn):
    http, clock = sqlite_tracker
    clock.set("2026-01-20T15:00:00+00:00")
    auth = join(http, "tom", "America/Chicago")
    day = "2026-01-20" if utc_time == "13:59" else "2026-01-21"
    clock.set(f"{day}T{utc_time}:00+00:00")
    r = http.post("/api/v1/turns", json=turn("tom"), headers=auth)
    assert r.status_code == 403
    assert r.json()["detail"].startswith(
        "scores can only be entered between 8am and 8pm local time"
    )
    assert ("07:59" if utc_time == "13:59" else "20:01") in r.json()["detail"]
    assert http.get("/api/v1/players/tom/turns").json()["turns"] == []


def test_turn_near_midnight_in_far_time_zones_lands_on_the_local_day(sqlite_tracker, join, turn):
    http, clock = sqlite_tracker
    clock.set("2026-03-10T18:30:00+00:00")  # Kiritimati (UTC+14): Mar 11 08:30
    kiri = join(http, "kenny", "Pacific/Kiritimati")
    r = http.post("/api/v1/turns", json=turn("kenny", 100), headers=kiri)
    assert r.status_code == 201 and r.json()["day"] == "2026-03-11"
    clock.set("2026-03-11T06:30:00+00:00")  # Pago Pago (UTC-11): Mar 10 19:30
    pago = join(http, "shea", "Pacific/Pago_Pago")
    r = http.post("/api/v1/turns", json=turn("shea", 150), headers=pago)
    assert r.status_code == 201 and r.json()["day"] == "2026-03-10"
    clock.set("2026-03-11T19:00:00+00:00")  # Pago Pago Mar 11 08:00: a new day
    r = http.post("/api/v1/turns", json=turn("shea", 200), headers=pago)
    assert r.status_code == 201 and r.json()["day"] == "2026-03-11"
    clock.set("2026-03-11T19:30:00+00:00")  # Kiritimati Mar 12 09:30: a new day
    r = http.post("/api/v1/turns", json=turn("kenny", 50), headers=kiri)
    assert r.status_code == 201 and r.json()["day"] == "2026-03-12"


def test_year_rollover_starts_a_new_round(tracker, join, turn):
    http, clock = tracker
    clock.set("2026-12-31T15:00:00+00:00")
    auth = join(http, "molly", "UTC")
    kiri = join(http, "jeff", "Pacific/Kiritimati")  # already 2027-01-01 05:00 there: closed
    assert http.post("/api/v1/turns", json=turn("molly", 1000), headers=auth).status_code == 201
    assert http.post("/api/v1/turns", json=turn("jeff", 50), headers=kiri).status_code == 403
    clock.set("2026-12-31T19:30:00+00:00")  # jeff: 2027-01-01 09:30
    r = http.post("/api/v1/turns", json=turn("jeff", 300), headers=kiri)
    assert r.json()["round"] == 2027
    clock.set("2027-01-01T10:00:00+00:00")
    r = http.post("/api/v1/turns", json=turn("molly", 200), headers=auth)
    assert (r.json()["day"], r.json()["round"]) == ("2027-01-01", 2027)

    now = http.get("/api/v1/leaderboard").json()
    assert now["round"] == 2027
    assert [(s["player"], s["total"]) for s in now["standings"]] == [("jeff", 300), ("molly", 200)]
    past = http.get("/api/v1/leaderboard", params={"round": 2026}).json()
    assert [(s["player"], s["total"]) for s in past["standings"]] == [("molly", 1000)]
    assert http.get("/api/v1/rounds").json() == {"current": 2027, "rounds": [2027, 2026]}
    page = http.get("/rounds/2026").text
    assert "Round 2026" in page and "molly" in page and "jeff" not in page


def test_replay_with_same_key_returns_stored_turn_even_after_hours(sqlite_tracker, join, turn):
    http, clock = sqlite_tracker
    clock.set("2026-07-04T12:00:00+00:00")
    auth = join(http, "bennett")
    body = turn("bennett", 750)
    first = http.post("/api/v1/turns", json=body, headers=auth)
    clock.set("2026-07-04T22:00:00+00:00")  # closed now; the outbox delivers late
    second = http.post("/api/v1/turns", json=body, headers=auth)
    assert (first.status_code, second.status_code) == (201, 200)
    assert second.json()["replayed"] is True
    assert {**second.json(), "replayed": False} == first.json()
    assert http.get("/api/v1/leaderboard").json()["standings"][0]["turns"] == 1


def test_another_players_key_is_refused_not_replayed_as_their_turn(sqlite_tracker, join, turn):
    """An idempotency key is one turn's: another player sending it gets a 409 naming it, not
    the first player's turn back as if it were their own replayed (their day stays free)."""
    http, clock = sqlite_tracker
    clock.set("2026-07-04T12:00:00+00:00")
    molly, jacob = join(http, "molly"), join(http, "jacob")
    first = http.post("/api/v1/turns", json=turn("molly", 750), headers=molly)
    key = first.json()["idempotency_key"]
    r = http.post("/api/v1/turns", json=turn("jacob", 50, idempotency_key=key), headers=jacob)
    assert r.status_code == 409, r.text
    assert r.json()["detail"] == (
        f"idempotency key {key!r} was already used for another player's turn"
    )
    assert http.get("/api/v1/players/jacob/turns").json()["turns"] == []
    own = http.post("/api/v1/turns", json=turn("jacob", 50), headers=jacob)
    assert own.status_code == 201 and own.json()["score"] == 50
    assert [t["score"] for t in http.get("/api/v1/players/molly/turns").json()["turns"]] == [750]


def test_settable_clock_is_what_the_server_uses(sqlite_url, clock, serve, join, turn):
    clock.set("2026-04-01T07:00:00+00:00")
    app = create_app(sqlite_url, clock=clock)
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
        auth = join(http, "kenny")
        assert http.post("/api/v1/turns", json=turn("kenny"), headers=auth).status_code == 403
        clock.set("2026-04-01T08:00:00+00:00")
        assert http.post("/api/v1/turns", json=turn("kenny"), headers=auth).status_code == 201
    app.state.db.dispose()


def test_the_night_clocks_go_back_is_still_one_day_one_turn(sqlite_tracker, join, turn):
    http, clock = sqlite_tracker
    clock.set("2026-10-31T13:30:00+00:00")  # Chicago: Oct 31 08:30 CDT
    auth = join(http, "tom", "America/Chicago")
    assert http.post("/api/v1/turns", json=turn("tom", 100), headers=auth).status_code == 201
    clock.set("2026-11-01T13:30:00+00:00")  # the same UTC hour after the change: 07:30 CST
    assert http.post("/api/v1/turns", json=turn("tom", 150), headers=auth).status_code == 403
    clock.set("2026-11-01T14:00:00+00:00")  # 08:00 CST
    r = http.post("/api/v1/turns", json=turn("tom", 200), headers=auth)
    assert r.status_code == 201 and r.json()["local_time"] == "2026-11-01T08:00:00-06:00"
    clock.set("2026-11-02T01:59:00+00:00")  # 19:59 CST, the 25-hour day still: no second turn
    assert http.post("/api/v1/turns", json=turn("tom", 250), headers=auth).status_code == 409
    days = [t["day"] for t in http.get("/api/v1/players/tom/turns").json()["turns"]]
    assert days == ["2026-11-01", "2026-10-31"]


def test_feb_29_and_the_last_evening_of_the_year_far_west(sqlite_tracker, join, turn):
    http, clock = sqlite_tracker
    clock.set("2028-02-28T18:30:00+00:00")  # Kiritimati: Feb 29 08:30
    kiri = join(http, "kenny", "Pacific/Kiritimati")
    r = http.post("/api/v1/turns", json=turn("kenny", 100), headers=kiri)
    assert r.status_code == 201 and r.json()["day"] == "2028-02-29"
    clock.set("2029-01-01T06:59:00+00:00")  # Pago Pago: Dec 31 19:59, the round's last minute
    pago = join(http, "shea", "Pacific/Pago_Pago")
    r = http.post("/api/v1/turns", json=turn("shea", 400), headers=pago)
    assert (r.json()["day"], r.json()["round"]) == ("2028-12-31", 2028)
    clock.set("2029-01-01T07:00:00+00:00")  # 20:00: the round is over for shea too
    assert http.post("/api/v1/turns", json=turn("shea", 50), headers=pago).status_code == 403
    board = http.get("/api/v1/leaderboard", params={"round": 2028}).json()["standings"]
    assert [(s["player"], s["total"], s["last_day"]) for s in board] == [
        ("shea", 400, "2028-12-31"),
        ("kenny", 100, "2028-02-29"),
    ]
