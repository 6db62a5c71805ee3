"""Attacks on the tracker's players over a real socket: an administrator raising their own score,
and a newcomer registering a name that reads like another player's on the pages (an impostor
on the leaderboard)."""

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
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
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
    r = http.patch(  # by the smallest step too
        f"/api/v1/turns/{own['id']}", json={"score": 550, "reason": "mine"}, headers=heads["tom"]
    )
    assert r.status_code == 403 and "expected at most 500, got 550" in r.json()["detail"], r.text
    after = http.get(f"/api/v1/turns/{own['id']}").json()
    assert (after["score"], after["corrections"]) == (500, [])
    r = http.patch(  # at most 500: the same score may be noted (checked against the photo)
        f"/api/v1/turns/{own['id']}", json={"score": 500, "reason": "checked"}, headers=heads["tom"]
    )
    assert r.status_code == 200, r.text
    assert [(c["old_score"], c["new_score"]) for c in r.json()["corrections"]] == [(500, 500)]
    # lowering one's own typo is fine; another administrator may raise it
    r = http.patch(
        f"/api/v1/turns/{own['id']}", json={"score": 50, "reason": "typo"}, headers=heads["tom"]
    )
    assert r.status_code == 200 and r.json()["score"] == 50
    r = http.patch(
        f"/api/v1/turns/{own['id']}", json={"score": 450, "reason": "seen"}, headers=heads["ann"]
    )
    assert r.status_code == 200 and r.json()["score"] == 450


@pytest.mark.parametrize(
    ("first", "impostor"),
    [
        ("Ian", "lan"),  # capital i and small L
        ("Bob Smith", "Bob  Smith"),  # a page shows both as "Bob Smith"
        ("Arnie", "Amie"),
        ("wendy", "vvendy"),  # a double v
        ("Zoe10", "Zoel0"),
        ("OLIVER", "0LlVER"),
        ("heather", "Heather "),  # case and spaces: the same name
    ],
)
def test_a_name_that_reads_like_a_registered_one_is_refused(sqlite_tracker, first, impostor):
    http, _ = sqlite_tracker
    body = {"password": "hunter2hunter2", "timezone": "UTC"}
    assert http.post("/api/v1/players", json={"name": first, **body}).status_code == 201
    r = http.post("/api/v1/players", json={"name": impostor, **body})
    assert r.status_code == 409, r.text
    assert repr(first) in r.json()["detail"] or "already taken" in r.json()["detail"]
    r = http.post("/register", data={"name": impostor, **body})  # the form refuses it too
    assert r.status_code == 409 and "Registered" not in r.text
    names = [p["player"] for p in http.get("/api/v1/rollcall").json()["players"]]
    assert names == [first]


@pytest.mark.parametrize("name", ["неather", "Ｈeather", "he\u200bather", "heather\u0301"])
def test_names_outside_plain_ascii_are_refused(sqlite_tracker, name):
    http, _ = sqlite_tracker
    body = {"name": name, "password": "hunter2hunter2", "timezone": "UTC"}
    r = http.post("/api/v1/players", json=body)
    assert r.status_code == 422 and "expected a name of 1 to 40 letters" in r.json()["detail"]


@pytest.mark.parametrize(("first", "second"), [("Lan", "Ian"), ("Ali", "All"), ("Tim", "Tom")])
def test_names_that_look_different_are_both_taken(sqlite_tracker, first, second):
    http, _ = sqlite_tracker
    body = {"password": "hunter2hunter2", "timezone": "UTC"}
    for name in (first, second):
        assert http.post("/api/v1/players", json={"name": name, **body}).status_code == 201
