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
