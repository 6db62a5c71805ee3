"""The service's :class:`~service.api.submit.TrackerSubmitter` at its edges, over real HTTP: a
turn of more rolls than the tracker keeps evidence of is sent with its first 60, and the
submitter's ``retries`` is how often a turn's POST is tried again before it waits in the
outbox. A real tracker (or a proxy in front of one that is down) on a real server."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from service.api.submit import EVIDENCE_ROLLS, TrackerSubmitter
from service.tracker.schemas import MAX_ROLLS
from service.turn_store import TurnStore
from service.turns import MORNING_ROLL

STRAIGHT = [1, 2, 3, 4, 5, 6]


def test_a_turn_of_61_rolls_is_sent_with_its_first_60(sqlite_tracker, join, tmp_path: Path, caplog):
    """A Morning Roll turn of hot dice can go on past the 60 rolls whose evidence the tracker
    keeps (``MAX_ROLLS``): the turn is sent, with its whole score, and its first 60 rolls, not
    refused for the 61st."""
    http, _ = sqlite_tracker
    token = join(http, "ann")["Authorization"][7:]
    store = TurnStore(TrackerSubmitter(tmp_path / "outbox", retries=0))
    turn = store.start("ann", MORNING_ROLL, tracker_url=str(http.base_url), tracker_token=token)
    for i in range(MAX_ROLLS + 1):
        values = STRAIGHT if i < MAX_ROLLS else [1] * 6  # the 61st roll is another one
        turn.roll(values)
        turn.keep(values)  # all six score: hot dice, roll them all again
    turn.bank()
    with caplog.at_level(logging.WARNING, "dicecam.service"):
        store.finish(turn)
    assert turn.submission["status"] == "submitted", turn.submission
    assert EVIDENCE_ROLLS == MAX_ROLLS  # the add-on's cut is the tracker's limit
    said = [r.getMessage() for r in caplog.records if "rolls: the tracker keeps" in r.getMessage()]
    assert said == [
        f"turn {turn.id} of ann has 61 rolls: the tracker keeps the evidence of 60, so the first "
        "60 are sent (the score counts them all)"
    ], caplog.text
    stored = turn.submission["turn"]
    assert stored["score"] == turn.points == 60 * 2500 + 8000  # the 61st roll counts too
    assert [r["values"] for r in stored["rolls"]] == [STRAIGHT] * MAX_ROLLS
    [kept] = http.get("/api/v1/players/ann/turns").json()["turns"]
    assert kept["score"] == turn.points


def refusing_for_now(posts: list[str]):
    """A proxy in front of a tracker being restarted: 503 to everything, each turn's POST
    noted in ``posts``."""

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        if (scope["method"], scope["path"]) == ("POST", "/api/v1/turns"):
            posts.append(scope["path"])
        body = json.dumps({"detail": "the tracker is being restarted"}).encode()
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 503, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


@pytest.mark.parametrize(("retries", "tries"), [(None, 2), (0, 1), (2, 3)])
def test_the_submitters_retries_are_the_tries_again_before_the_turn_waits(
    serve, tmp_path: Path, retries: int | None, tries: int
):
    """``TrackerSubmitter(retries=n)`` posts a turn 1 + n times (n is 1 unless told) while the
    tracker is down, then answers ``queued``: the turn waits in the outbox."""
    posts: list[str] = []
    server = serve(refusing_for_now(posts))
    told = {} if retries is None else {"retries": retries}
    store = TurnStore(TrackerSubmitter(tmp_path / "outbox", **told))
    turn = store.start("ann", MORNING_ROLL, tracker_url=server.url, tracker_token="t")
    turn.roll([1, 1, 1, 2, 3, 4])
    turn.keep([1, 1, 1])
    turn.bank()
    store.finish(turn)
    assert turn.submission["status"] == "queued", turn.submission
    assert "the tracker is being restarted" in turn.submission["detail"]
    assert len(posts) == tries
    assert len(list((tmp_path / "outbox" / "pending").glob("*.json"))) == 1
