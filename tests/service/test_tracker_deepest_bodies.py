"""A body nested as deep as JSON parsing allows is refused with 4xx, never a 500. The tracker's
NUL check walked a body by recursion, and a reading's size check (json.dumps) recursed too: a
reading about 960 levels deep (8 KB, parsed) ran out of Python's stack, a 500 that a sender's
outbox retried for good. Deeper than parsing allows is a 400 from the parser."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from service.tracker.schemas import MAX_READING_DEPTH, RollIn, TurnIn


def deep_list(levels: int) -> list:
    """A list ``levels`` deep, built without recursion."""
    value: list = []
    for _ in range(levels - 1):
        value = [value]
    return value


@pytest.mark.parametrize("model", [RollIn, TurnIn])
def test_a_body_nested_deeper_than_the_stack_is_refused_by_its_checks(model):
    roll = {"values": [1, 5], "reading": {"a": deep_list(5000)}}
    body = roll if model is RollIn else {"player": "deb", "score": 0, "rolls": [roll]}
    with pytest.raises(ValidationError) as caught:
        model.model_validate(body)
    assert f"expected a reading nested at most {MAX_READING_DEPTH} levels deep" in str(caught.value)
    assert "got one 5001 levels deep" in str(caught.value)


def test_a_nul_deep_in_a_body_is_still_found():
    roll = {"values": [1], "reading": {"a": [[["x", "\x00"]]]}}
    with pytest.raises(ValidationError, match=r"got one in reading\.a\.0\.0\.1"):
        RollIn.model_validate(roll)


def test_no_reading_as_deep_as_json_parses_gives_a_500(tracker, join, turn):
    http, _ = tracker
    auth = join(http, "deb")
    answered = {}
    for levels in range(900, 1000):  # where the parser's limit falls depends on the stack
        body = json.dumps(turn("deb", rolls=[{"values": [1, 5], "reading": {"a": "X"}}]))
        text = body.replace('"X"', "[" * levels + "]" * levels)
        headers = {**auth, "content-type": "application/json"}
        answered[levels] = http.post("/api/v1/turns", content=text, headers=headers).status_code
    assert set(answered.values()) <= {400, 422}, answered
    assert 422 in answered.values()  # parsed, refused by the depth check (900 here)
    assert http.get("/api/v1/players/deb/turns").json()["turns"] == []
