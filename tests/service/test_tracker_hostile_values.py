"""Values a hostile or careless client sends the tracker that JSON or pydantic would take as
something else, over a real tracker: each is refused with a 422 naming what was expected and
what came, and nothing is stored."""

from __future__ import annotations

import json

import pytest


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_reading_with_a_number_json_cannot_hold_is_refused_not_stored_as_null(
    sqlite_tracker, join, turn, number
):
    """Python's JSON parser takes NaN, Infinity and 1e999 (inf); stored, the reading came back
    with null where the number was: a 201 for a reading other than the one sent."""
    http, _ = sqlite_tracker
    auth = join(http, "deb")
    body = turn("deb", rolls=[{"values": [1, 5], "reading": {"confidence": 0.5}}])
    raw = json.dumps(body).replace('{"confidence": 0.5}', f'{{"confidence": {number}}}')
    r = http.post(
        "/api/v1/turns", content=raw, headers={**auth, "Content-Type": "application/json"}
    )
    assert r.status_code == 422, r.text
    assert r.json()["detail"].startswith(
        "'rolls.0.reading': expected a reading of finite numbers (as JSON has them), got NaN or "
        "Infinity in it"
    ), r.text
    assert http.get("/api/v1/players/deb/turns").json()["turns"] == []
