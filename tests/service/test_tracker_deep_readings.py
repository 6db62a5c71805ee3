"""A roll's reading nested deeper than MAX_READING_DEPTH is refused with 422, nothing stored.
One nested 300 deep (small, and valid JSON) was stored, but no JSON answer could hold it
(pydantic serializes 255 levels at most): the turn's 201 was a 500, and so were the turn and
the player's history for anyone asking, and a client's outbox sent it again for good. A
reading as deep as the limit is stored and served."""

from __future__ import annotations

import json

import pytest

from service.tracker.schemas import MAX_READING_DEPTH


def nested(levels: int) -> dict:
    """A reading ``levels`` deep: ``{"a": [[...]]}``."""
    return {"a": json.loads("[" * (levels - 1) + "]" * (levels - 1))}


@pytest.mark.parametrize("levels", [MAX_READING_DEPTH + 1, 300])
def test_a_reading_nested_too_deep_is_refused_and_nothing_stored(tracker, join, turn, levels):
    http, _ = tracker
    auth = join(http, "deb")
    body = turn("deb", rolls=[{"values": [1, 5], "reading": nested(levels)}])
    r = http.post("/api/v1/turns", json=body, headers=auth)
    assert r.status_code == 422, r.text
    assert r.json()["detail"] == (
        f"'rolls.0.reading': expected a reading nested at most {MAX_READING_DEPTH} levels deep "
        f"(a roll's dice as dicecam reads them), got one {levels} levels deep"
    )
    assert http.get("/api/v1/players/deb/turns").json()["turns"] == []
    r = http.post("/api/v1/turns", json=turn("deb"), headers=auth)  # the day is still free
    assert r.status_code == 201, r.text


def test_a_reading_as_deep_as_the_limit_is_stored_and_served(tracker, join, turn):
    http, _ = tracker
    auth = join(http, "deb")
    deepest = nested(MAX_READING_DEPTH)
    body = turn("deb", rolls=[{"values": [1, 5], "reading": deepest}])
    r = http.post("/api/v1/turns", json=body, headers=auth)
    assert r.status_code == 201, r.text
    turn_id = r.json()["id"]
    assert http.get(f"/api/v1/turns/{turn_id}").json()["rolls"][0]["reading"] == deepest
    assert http.get("/api/v1/players/deb/turns").status_code == 200
    assert http.get(f"/turns/{turn_id}").status_code == 200


def test_a_deep_branch_beside_a_shallow_one_is_measured_by_the_deep_one(tracker, join, turn):
    """The depth is the deepest branch's, whichever of the reading's keys comes last."""
    http, _ = tracker
    auth = join(http, "deb")
    for reading in (
        {"shallow": [], **nested(MAX_READING_DEPTH + 1)},
        {**nested(MAX_READING_DEPTH + 1), "shallow": []},
    ):
        body = turn("deb", rolls=[{"values": [1, 5], "reading": reading}])
        r = http.post("/api/v1/turns", json=body, headers=auth)
        assert r.status_code == 422, r.text
        assert f"got one {MAX_READING_DEPTH + 1} levels deep" in r.json()["detail"]
    assert http.get("/api/v1/players/deb/turns").json()["turns"] == []
