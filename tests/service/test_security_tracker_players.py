"""Attacks on the tracker's players over a real socket: an administrator raising their own score."""

from __future__ import annotations

import httpx
import pytest

from service.tracker import create_app, store


@pytest.fixture
def admins(sqlite_url, clock, monkeypatch, serve):
    """A tracker with two administrators, tom (from the environment) and ann: their headers."""
    monkeypatch.setenv("DICECAM_TRACKER_ADMIN_NAME", "tom")
    monkeypatch.setenv("DICECAM_TRACKER_ADMIN_PASSWORD", "admin-password")
    app = create_app(sqlite_url, clock=clock)
    with app.state.db.writing() as session:
        store.ensure_admin(session, "ann", "admin-password", "UTC", clock())
        session.commit()
    with httpx.Client(base_url=serve(app).url) as http:
        heads = {}
        for name in ("tom", "ann"):
            r = http.post("/api/v1/tokens", json={"name": name, "password": "admin-password"})
            heads[name] = {"Authorization": f"Bearer {r.json()['token']}"}
        yield http, heads
    app.state.db.dispose()


def test_an_administrator_cannot_raise_their_own_score(admins, turn):
    http, heads = admins
    own = http.post("/api/v1/turns", json=turn("tom", 500), headers=heads["tom"]).json()
    r = http.patch(
        f"/api/v1/turns/{own['id']}", json={"score": 100000, "reason": "mine"}, headers=heads["tom"]
    )
    assert r.status_code == 403, r.text
    assert "cannot raise their own score" in r.json()["detail"]
    assert "expected at most 500, got 100000" in r.json()["detail"]
    after = http.get(f"/api/v1/turns/{own['id']}").json()
    assert (after["score"], after["corrections"]) == (500, [])
    # lowering one's own typo is fine; another administrator may raise it
    r = http.patch(
        f"/api/v1/turns/{own['id']}", json={"score": 50, "reason": "typo"}, headers=heads["tom"]
    )
    assert r.status_code == 200 and r.json()["score"] == 50
    r = http.patch(
        f"/api/v1/turns/{own['id']}", json={"score": 450, "reason": "seen"}, headers=heads["ann"]
    )
    assert r.status_code == 200 and r.json()["score"] == 450
