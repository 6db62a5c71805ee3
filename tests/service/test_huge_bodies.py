"""A body of millions of values (within DICECAM_MAX_UPLOAD_MB) is refused without walking it.
Its 422 used to walk it whole: the tracker's NUL check (a second time for each roll), the
check that no password is echoed, the repr of it all for 80 characters: a 17 MB list took 13 s
in which the service and its tracker answered nobody (the camera page's health check waited
12.7 s), for anyone who could send a request, no login needed. Each walk now stops past the
most values a valid body can hold; what a valid body holds is still checked whole."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from service.http_errors import describe_validation_errors
from service.tracker.schemas import MAX_READING_BYTES, Credentials, TurnIn

ROLLS = 60  # the most rolls of a turn


class Untouchable(dict):
    """A value that fails the test when a walk reaches it (past the values it may look at)."""

    def _walked(self, *_: Any) -> Any:
        raise RuntimeError("walked past the values it needed")

    __iter__ = items = keys = values = __len__ = _walked


def test_an_input_too_large_to_echo_is_neither_walked_nor_echoed():
    error = {
        "type": "too_long",
        "loc": ("body", "turns"),
        "msg": "List should have at most 20 items after validation, not 5001",
        "input": [1] * 5000 + [Untouchable()],
    }
    assert describe_validation_errors([error]) == (
        "'turns': List should have at most 20 items after validation, not 5001"
    )
    small = {**error, "input": [1] * 30}  # still echoed, as before
    assert "(got [1, 1, 1" in describe_validation_errors([small])
    secret = {**error, "input": [{"password": "hunter2"}]}  # never echoed, as before
    assert "hunter2" not in describe_validation_errors([secret])


def test_the_nul_check_stops_past_the_values_a_valid_body_holds():
    with pytest.raises(ValidationError) as caught:  # a name that is a list: refused by its type
        Credentials.model_validate({"name": [1] * 100 + [Untouchable()], "password": "x"})
    assert [e["loc"] for e in caught.value.errors()] == [("name",)]
    big = [1] * 1_000_000 + [Untouchable()]  # more than sixty readings' worth
    body = {"player": "ann", "score": 50, "idempotency_key": "k" * 16}
    with pytest.raises(ValidationError) as caught:
        TurnIn.model_validate({**body, "rolls": [{"values": big}]})
    assert [e["loc"] for e in caught.value.errors()] == [("rolls", 0, "values")]


def test_a_nul_in_the_last_roll_of_the_largest_valid_turn_is_still_found():
    """Sixty rolls, each with a reading of nearly MAX_READING_BYTES: the whole is walked."""
    reading = {"v": [0] * (MAX_READING_BYTES // 2 - 100), "note": "fine"}
    rolls = [{"values": [1, 2, 3, 4, 5, 6], "reading": reading} for _ in range(ROLLS)]
    rolls[-1] = {**rolls[-1], "reading": {**reading, "note": "a\x00b"}}
    body = {"player": "ann", "score": 50, "idempotency_key": "k" * 16, "rolls": rolls}
    with pytest.raises(ValidationError) as caught:
        TurnIn.model_validate(body)
    detail = describe_validation_errors(caught.value.errors())
    assert f"NUL characters (\\u0000), got one in rolls.{ROLLS - 1}.reading.note" in detail


def test_a_turn_of_millions_of_values_is_refused_by_a_real_tracker(sqlite_tracker, join, turn):
    http, _ = sqlite_tracker
    auth = join(http, "ann")
    values = "[" + ",".join(["1"] * 2_000_000) + "]"  # 4 MB
    content = '{"player":"ann","score":50,"idempotency_key":"kkkkkkkk1","rolls":[{"values":'
    r = http.post(
        "/api/v1/turns",
        content=content + values + "}]}",
        headers={**auth, "content-type": "application/json"},
    )
    assert r.status_code == 422, r.text
    assert r.json()["detail"] == (
        "'rolls.0.values': List should have at most 6 items after validation, not 2000000"
    )
    many = turn("ann", rolls=[{"values": [1]}] * 100_000)
    r = http.post("/api/v1/turns", json=many, headers=auth)
    assert r.status_code == 422, r.text
    assert r.json()["detail"] == f"'rolls': expected at most {ROLLS} rolls, got 100000"
    r = http.post("/api/v1/turns", json=turn("ann"), headers=auth)  # nothing was stored
    assert r.status_code == 201, r.text


def test_the_nul_check_walks_exactly_the_values_a_valid_body_holds():
    """Credentials hold 64 values at most (the name's key is one): a NUL in the 64th is found
    and named; a body of one more is not walked, and refused by its fields' checks."""
    with pytest.raises(ValidationError) as caught:
        Credentials.model_validate({"name": ["a"] * 62 + ["b\x00"], "password": "x"})
    detail = describe_validation_errors(caught.value.errors())
    assert "NUL characters (\\u0000), got one in name.62" in detail
    with pytest.raises(ValidationError) as caught:
        Credentials.model_validate({"name": ["a"] * 63 + ["b\x00"], "password": "x"})
    assert [e["loc"] for e in caught.value.errors()] == [("name",)]
    assert "NUL" not in describe_validation_errors(caught.value.errors())
