"""More edges of the tracker's JSON API over a real tracker: a token only counts under the
``Bearer`` scheme."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("scheme", ["Basic", "Token"])
def test_a_good_token_under_another_scheme_is_refused(sqlite_tracker, join, scheme):
    http, _ = sqlite_tracker
    auth = join(http, "kenny")
    token = auth["Authorization"].removeprefix("Bearer ")
    r = http.get("/api/v1/me", headers={"Authorization": f"{scheme} {token}"})
    assert r.status_code == 401, r.text
    assert "expected an 'Authorization: Bearer <token>' header" in r.text
    assert f"got a '{scheme}' header" in r.text
    r = http.get("/api/v1/me", headers={"Authorization": f"bEaReR {token}"})
    assert r.status_code == 200, r.text  # the scheme in any case, as HTTP has it


def test_a_token_after_several_spaces_is_taken(sqlite_tracker, join):
    """One or more spaces may part the scheme from the token (RFC 9110's 1*SP)."""
    http, _ = sqlite_tracker
    token = join(http, "kenny")["Authorization"].removeprefix("Bearer ")
    r = http.get("/api/v1/me", headers={"Authorization": f"Bearer   {token}"})
    assert r.status_code == 200, r.text
    assert r.json()["name"] == "kenny"


@pytest.mark.parametrize("body", [["bob", "hunter2hunter2"], "bob", 7])
@pytest.mark.parametrize("path", ["/api/v1/players", "/api/v1/tokens", "/api/v1/turns"])
def test_a_body_that_is_no_json_object_is_refused_as_such(sqlite_tracker, join, path, body):
    """A JSON array, string or number is refused as not an object, what came named: not
    taken for an empty object whose every field is missing."""
    http, _ = sqlite_tracker
    auth = join(http, "kenny")
    r = http.post(path, json=body, headers=auth)
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert detail.startswith("the request body: Input should be a valid dictionary"), detail
    assert f"(got {body!r})" in detail and "Field required" not in detail
    assert http.get("/api/v1/players/bob/turns").status_code == 404
    assert http.get("/api/v1/players/kenny/turns").json()["turns"] == []
