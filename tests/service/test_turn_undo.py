"""Taking back a mis-tapped keep over real HTTP (``POST /api/v1/turns/{id}/undo``): the turn
awaits a keep of the same roll again, with the same options and advice; a roll, a finished turn
and a keep already taken back are refused with 409 and change nothing; the undo is saved like
any move (a restart gives the same turn, a stale copy in another service is refused), and a
Morning Roll turn submitted after it carries the score of the keeps that stood."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from service.api.submit import TrackerSubmitter
from service.app import create_app
from service.settings import Settings
from service.tracker import create_app as create_tracker

from dicecam_testing.turns import turns_service

SAME = ("state", "awaiting", "turn_points", "dice_left", "keeps", "history", "last_roll", "rolls")
"""What a keep taken back gives back as it was before the keep."""


def move(c: httpx.Client, turn_id: str, path: str, status: int = 200, **body: Any) -> dict:
    r = c.post(f"/turns/{turn_id}/{path}", json=body or None)
    assert r.status_code == status, r.text
    return r.json()


def started(c: httpx.Client, game: str = "morning-roll", **fields: Any) -> str:
    r = c.post("/turns", json={"player": "ann", "game": game, **fields})
    assert r.status_code == 201, r.text
    return r.json()["id"]


def rolled(c: httpx.Client, values: list[int], game: str = "morning-roll") -> tuple[str, dict]:
    """A new turn of ``game`` and its view after a first roll of ``values``."""
    turn_id = started(c, game)
    return turn_id, move(c, turn_id, "rolls", values=values)


@pytest.fixture(scope="module")
def service(tmp_path_factory) -> httpx.Client:
    with turns_service(tmp_path_factory.mktemp("data")) as srv:
        yield srv.client


@pytest.mark.parametrize(
    ("game", "roll", "kept", "then"),
    [
        ("morning-roll", [1, 1, 5, 2, 3, 4], [1, 1, 5], [1, 1]),  # the mis-tap of the issue
        ("morning-roll", [6, 5, 4, 3, 2, 1], [1, 2, 3, 4, 5, 6], [1]),  # a forced re-roll
        ("morning-roll", [1, 1, 1, 5, 5, 5], [1, 1, 1, 5, 5, 5], [1, 1, 1]),  # hot dice
        ("greed", [1, 1, 1, 5, 5], [1, 1, 1, 5, 5], [1, 1, 1, 5, 5]),  # its only keep
        ("farkle-five", [1, 5, 2, 3, 6], [1, 5], [1, 5]),
    ],
)
def test_a_keep_taken_back_gives_back_the_roll_with_its_options_and_advice(
    service, game, roll, kept, then
):
    turn_id, before = rolled(service, roll, game)
    assert before["take_back"] is None and before["keeps"]
    assert any(k["expected"] is not None for k in before["keeps"])  # advice to give back
    after_keep = move(service, turn_id, "keep", dice=kept)
    assert after_keep["awaiting"] in ("roll", "roll-or-bank")
    assert after_keep["take_back"]["dice"] == sorted(kept)

    undone = move(service, turn_id, "undo")
    assert {k: undone[k] for k in SAME} == {k: before[k] for k in SAME}
    assert (undone["take_back"], undone["forced_reroll"], undone["must_roll"]) == (
        None,
        False,
        False,
    )
    assert undone["taken_back"] == [
        {"roll": 1, "dice": sorted(kept), "forced_reroll": after_keep["forced_reroll"]}
    ]
    assert service.get(f"/turns/{turn_id}").json() == undone

    meant = move(service, turn_id, "keep", dice=then)  # the keep the player meant
    points = next(k["points"] for k in before["keeps"] if k["dice"] == sorted(then))
    left = len(roll) - len(then) or len(roll)  # every die scored: roll them all again
    assert (meant["turn_points"], meant["dice_left"]) == (points, left)


def test_only_one_keep_is_taken_back_and_never_a_roll(service):
    turn_id, _ = rolled(service, [1, 2, 2, 3, 5, 6])
    refused = move(service, turn_id, "undo", 409)["detail"]
    assert refused.startswith("a roll cannot be taken back (the dice showed 1 2 2 3 5 6)")
    assert "only a keep can be taken back, until the next roll" in refused

    move(service, turn_id, "keep", dice=[1])
    move(service, turn_id, "rolls", values=[1, 4, 4, 4, 6])
    move(service, turn_id, "keep", dice=[1, 4, 4, 4])
    shown = move(service, turn_id, "undo")  # the second keep only
    assert (shown["turn_points"], shown["dice_left"], shown["awaiting"]) == (100, 5, "keep")
    again = service.post(f"/turns/{turn_id}/undo")  # twice in a row: the roll is before it
    assert again.status_code == 409
    assert again.json()["detail"].startswith("nothing to take back: the keep of 1 4 4 4 (4 dice)")
    assert service.get(f"/turns/{turn_id}").json() == shown

    move(service, turn_id, "keep", dice=[1])
    rolled_again = move(service, turn_id, "rolls", values=[2, 3, 4, 6])  # a bust: final
    assert rolled_again["bust"] is True
    refused = move(service, turn_id, "undo", 409)["detail"]
    assert refused.startswith("this turn is over (bust): a finished turn is final")
    rolled_again.pop("reading")  # a roll's answer carries its reading
    assert service.get(f"/turns/{turn_id}").json() == rolled_again


def test_a_banked_turn_and_a_turn_without_a_keep_take_nothing_back(service):
    turn_id = started(service)
    assert move(service, turn_id, "undo", 409)["detail"] == (
        "nothing to take back: no keep yet in this turn "
        "(only a keep can be taken back, until the next roll)"
    )
    move(service, turn_id, "rolls", values=[1, 1, 1, 2, 3, 4])
    move(service, turn_id, "keep", dice=[1, 1, 1])
    banked = move(service, turn_id, "bank")
    refused = move(service, turn_id, "undo", 409)["detail"]
    assert refused.startswith("this turn is over (banked): a finished turn is final")
    assert service.get(f"/turns/{turn_id}").json() == banked
    assert move(service, "no-such-turn", "undo", 404)["detail"].startswith("no turn with id")


def test_an_undo_from_a_tab_that_saw_fewer_rolls_is_refused(service):
    turn_id, _ = rolled(service, [1, 1, 5, 2, 3, 4])
    move(service, turn_id, "keep", dice=[1, 1, 5])
    r = service.post(f"/turns/{turn_id}/undo?rolls=0")
    assert r.status_code == 409 and "moved on elsewhere" in r.json()["detail"]
    assert service.get(f"/turns/{turn_id}").json()["take_back"]["dice"] == [1, 1, 5]


def test_a_keep_taken_back_stays_taken_back_after_a_restart(tmp_path: Path):
    with turns_service(tmp_path) as first:
        turn_id, _ = rolled(first.client, [1, 1, 5, 2, 3, 4])
        move(first.client, turn_id, "keep", dice=[1, 1, 5])
        shown = move(first.client, turn_id, "undo")
    with turns_service(tmp_path) as second:
        assert second.client.get(f"/turns/{turn_id}").json() == shown
        kept = move(second.client, turn_id, "keep", dice=[1, 1])
        assert (kept["turn_points"], kept["dice_left"]) == (200, 4)


def test_a_stale_copy_in_another_service_cannot_take_back_a_keep(tmp_path: Path):
    with turns_service(tmp_path) as first:
        turn_id, _ = rolled(first.client, [1, 1, 5, 2, 3, 4])
        move(first.client, turn_id, "keep", dice=[1, 1, 5])
        with turns_service(tmp_path) as second:  # reads the turn at start: its copy
            assert second.client.get(f"/turns/{turn_id}").json()["take_back"]
            move(first.client, turn_id, "undo")
            meant = move(first.client, turn_id, "keep", dice=[1, 1])
            refused = move(second.client, turn_id, "undo", 409)["detail"]
            assert "moved by another dicecam on the same data folder" in refused
            assert "the file holds 4 moves, roll, keep, undo, keep" in refused
            view = second.client.get(f"/turns/{turn_id}").json()
            assert {k: view[k] for k in SAME} == {k: meant[k] for k in SAME}


def test_a_morning_roll_turn_sends_the_tracker_the_score_after_a_keep_taken_back(
    tmp_path: Path, clock, seed_players, serve
):
    tracker = create_tracker(f"sqlite:///{tmp_path / 'tracker.sqlite3'}", clock=clock)
    token = seed_players(tracker, ["ann"])["ann"]["Authorization"].removeprefix("Bearer ")
    data = tmp_path / "svc"
    submitter = TrackerSubmitter(data / "outbox", embedded=True)
    app = create_app(Settings(data_dir=data), tracker_app=tracker, submitter=submitter)
    url = serve(app).url
    with httpx.Client(base_url=url + "/api/v1", timeout=30) as c:
        turn_id = started(c, tracker_token=token)
        move(c, turn_id, "rolls", values=[1, 1, 5, 2, 3, 4])
        assert move(c, turn_id, "keep", dice=[1, 1, 5])["turn_points"] == 250
        move(c, turn_id, "undo")
        move(c, turn_id, "keep", dice=[1, 1])
        banked = move(c, turn_id, "bank")
        assert banked["submission"]["status"] == "submitted", banked["submission"]
        assert banked["submission"]["turn"]["score"] == 200
        r = c.get(url + "/tracker/api/v1/players/ann/turns")
        assert [t["score"] for t in r.json()["turns"]] == [200]
    tracker.state.db.dispose()


def test_a_finished_turn_offers_no_keep_to_take_back(service):
    turn_id, _ = rolled(service, [1, 1, 1, 2, 3, 4])
    assert move(service, turn_id, "keep", dice=[1, 1, 1])["take_back"]["dice"] == [1, 1, 1]
    banked = move(service, turn_id, "bank")  # its last roll still holds the keep
    assert banked["take_back"] is None
    assert service.get(f"/turns/{turn_id}").json()["take_back"] is None
    won_id, _ = rolled(service, [1, 1, 1, 1, 1], "farkle-five")  # five 1s win at once (F4)
    won = move(service, won_id, "keep", dice=[1, 1, 1, 1, 1])
    assert won["state"] == "banked" and won["take_back"] is None


def test_the_keep_offered_back_is_the_last_rolls_keep(service):
    turn_id, _ = rolled(service, [1, 2, 2, 3, 4, 6])
    move(service, turn_id, "keep", dice=[1])
    move(service, turn_id, "rolls", values=[5, 4, 4, 4, 6])
    second = move(service, turn_id, "keep", dice=[4, 4, 4, 5])
    assert second["taken_back"] == []  # keeps that stand are not listed as taken back
    assert second["take_back"] == {
        "dice": [4, 4, 4, 5],
        "points": 450,
        "forced_reroll": False,
        "wins_game": False,
    }


def test_take_back_keep_returns_the_keep_it_took_back():
    from service.turn_store import TurnStore
    from service.turn_undo import UNDO

    session = TurnStore().start("ann", "morning-roll")
    session.roll([1, 1, 5, 2, 3, 4])
    session.keep([1, 1, 5])
    assert session.undo() == {
        "dice": [1, 1, 5],
        "points": 250,
        "forced_reroll": False,
        "wins_game": False,
    }
    assert session.moves[-1] == {"op": UNDO, "dice": [1, 1, 5], "forced_reroll": False}
