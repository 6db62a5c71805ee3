"""What players see of the standings over a round: corrected scores, ties, the roll call of
players who joined mid-year or far from UTC."""

from __future__ import annotations

import httpx
import pytest

from service.tracker import create_app


@pytest.fixture
def admin_tracker(sqlite_url, clock, monkeypatch, serve):
    monkeypatch.setenv("DICECAM_TRACKER_ADMIN_NAME", "tom")
    monkeypatch.setenv("DICECAM_TRACKER_ADMIN_PASSWORD", "admin-password")
    app = create_app(sqlite_url, clock=clock)
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
        token = http.post("/api/v1/tokens", json={"name": "tom", "password": "admin-password"})
        yield http, clock, {"Authorization": f"Bearer {token.json()['token']}"}
    app.state.db.dispose()


@pytest.mark.parametrize("score", [75, 1010, 25])
def test_a_correction_is_a_morning_roll_score_too(admin_tracker, join, turn, score):
    http, _, admin = admin_tracker
    auth = join(http, "mike")
    stored = http.post("/api/v1/turns", json=turn("mike", 5000), headers=auth).json()
    r = http.patch(
        f"/api/v1/turns/{stored['id']}", json={"score": score, "reason": "typo"}, headers=admin
    )
    assert r.status_code == 422, r.text
    assert f"expected a Morning Roll score, a multiple of 50, got {score}" in r.json()["detail"]
    after = http.get(f"/api/v1/turns/{stored['id']}").json()
    assert (after["score"], after["corrections"]) == (5000, [])
    r = http.patch(
        f"/api/v1/turns/{stored['id']}", json={"score": 0, "reason": "bust"}, headers=admin
    )
    assert r.status_code == 200 and r.json()["score"] == 0


def test_roll_call_dates_are_each_players_own_days(sqlite_tracker, join, turn):
    http, clock = sqlite_tracker
    clock.set("2026-12-31T19:30:00+00:00")  # Kiritimati: 2027-01-01 09:30; Pago Pago: Dec 31 08:30
    kiri = join(http, "kenny", "Pacific/Kiritimati")
    join(http, "shea", "Pacific/Pago_Pago")
    assert http.post("/api/v1/turns", json=turn("kenny", 50), headers=kiri).status_code == 201
    call = {p["player"]: p for p in http.get("/api/v1/rollcall").json()["players"]}
    assert (call["kenny"]["joined"], call["kenny"]["last_day"]) == ("2027-01-01", "2027-01-01")
    assert call["kenny"]["rolled_today"] is True
    assert (call["shea"]["joined"], call["shea"]["rolled_today"]) == ("2026-12-31", False)
    page = http.get("/rollcall").text
    assert "(1 turn, joined 2027-01-01 - rolled today)" in page
    assert "(0 turns, joined 2026-12-31)" in page


def test_ties_share_a_rank_and_pages_count_turns_in_words(sqlite_tracker, join, turn):
    http, clock = sqlite_tracker
    clock.set("2026-05-01T12:00:00+00:00")
    auths = {name: join(http, name) for name in ("molly", "jacob", "bennett", "stefan")}
    for name, score in (("molly", 600), ("jacob", 300), ("bennett", 600)):
        assert http.post("/api/v1/turns", json=turn(name, score), headers=auths[name]).is_success
    clock.set("2026-05-02T12:00:00+00:00")
    assert http.post("/api/v1/turns", json=turn("jacob", 300), headers=auths["jacob"]).is_success
    board = http.get("/api/v1/leaderboard").json()["standings"]
    assert [(s["rank"], s["player"], s["total"], s["turns"]) for s in board] == [
        (1, "bennett", 600, 1),  # the same total: the same rank, the better best turn first
        (1, "molly", 600, 1),
        (1, "jacob", 600, 2),
    ]
    assert "stefan" not in [s["player"] for s in board]  # no turn this round: on the roll call
    call = http.get("/rollcall").text
    assert (
        "(2 turns, joined 2026-05-01 - rolled today)" in call
        and "(1 turn, joined 2026-05-01)" in call
    )
    assert "(0 turns, joined 2026-05-01)" in call
    assert "1 turn." in http.get("/players/molly").text
