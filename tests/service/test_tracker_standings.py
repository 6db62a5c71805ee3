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
    with httpx.Client(base_url=serve(app).url) as http:
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
