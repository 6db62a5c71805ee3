"""A NUL character in what the tracker stores or looks up: PostgreSQL refuses it, so a comment,
a reading, a name typed at login or in an address with one was a 500 (and a client's outbox
would retry it forever); now it is a 422 (or 404, 401) on both databases, nothing stored."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("extra", "where"),
    [
        ({"comment": "nice\x00roll"}, "in comment"),
        ({"rolls": [{"values": [1], "reading": {"note": "a\x00b"}}]}, "in rolls.0.reading.note"),
        ({"rolls": [{"values": [1], "reading": {"k\x00": [1]}}]}, "rolls.0.reading (a key)"),
    ],
)
def test_a_turn_with_a_nul_character_is_refused(tracker, join, turn, extra, where):
    http, _ = tracker
    auth = join(http, "nina")
    r = http.post("/api/v1/turns", json=turn("nina", **extra), headers=auth)
    assert r.status_code == 422, r.text
    assert "expected text without NUL characters" in r.json()["detail"]
    assert where in r.json()["detail"]
    assert http.get("/api/v1/players/nina/turns").json()["turns"] == []
    r = http.post("/api/v1/turns", json=turn("nina"), headers=auth)  # the day is still free
    assert r.status_code == 201, r.text


def test_names_with_a_nul_character_are_not_found(tracker, join):
    http, _ = tracker
    join(http, "nina")
    assert http.get("/players/ni%00na").status_code == 404
    assert http.get("/api/v1/players/ni%00na/turns").status_code == 404
    r = http.post("/api/v1/tokens", json={"name": "ni\x00na", "password": "hunter2hunter2"})
    assert r.status_code == 422 and "NUL" in r.json()["detail"]
    r = http.post(
        "/add",
        data={"name": "ni\x00na", "password": "x" * 8, "score": "50", "idempotency_key": "k" * 16},
    )
    assert r.status_code == 422 and "NUL" in r.text
    r = http.post("/api/v1/players", json={"name": "x\x00", "password": "p" * 8, "timezone": "UTC"})
    assert r.status_code == 422


def test_a_password_may_hold_a_nul_character(tracker, join):
    http, _ = tracker
    join(http, "nina", password="hunter2\x00hunter2")
    r = http.post("/api/v1/tokens", json={"name": "nina", "password": "hunter2\x00hunter2"})
    assert r.status_code == 201, r.text
    r = http.post("/api/v1/tokens", json={"name": "nina", "password": "hunter2"})
    assert r.status_code == 401
