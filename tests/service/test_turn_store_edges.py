"""TurnStore at its edges (:mod:`service.turn_store`): a finished turn is handed to the
submitter once however often it is finished, a new login gives its token to open turns only,
and a retry that answers the receipt the turn has changes nothing."""

from __future__ import annotations

from typing import Any

from service.turn_store import TurnStore
from service.turns import MORNING_ROLL, TurnSession


class CountingSubmitter:
    """Takes every turn handed over, as a tracker that is up does, and remembers each."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def __call__(self, session: TurnSession) -> dict[str, Any]:
        self.sent.append(session.id)
        return {"status": "submitted", "turn": {"id": len(self.sent)}}


def test_a_finished_turn_is_handed_over_once() -> None:
    submitter = CountingSubmitter()
    store = TurnStore(submitter)
    turn = store.start("ann", MORNING_ROLL)
    turn.roll([2, 2, 3, 4, 6, 6])  # no scoring die: bust
    store.finish(turn)
    receipt = turn.submission
    store.finish(turn)  # again (a second request on the same finished turn)
    assert submitter.sent == [turn.id]
    assert turn.submission == receipt == {"status": "submitted", "turn": {"id": 1}}


def test_a_new_login_leaves_a_finished_turn_the_token_it_was_sent_with() -> None:
    store = TurnStore(CountingSubmitter())
    turn = store.start("ann", MORNING_ROLL, tracker_url="http://tracker-a", tracker_token="old")
    turn.roll([2, 2, 3, 4, 6, 6])
    store.finish(turn)
    open_turn = store.start("ann", MORNING_ROLL, tracker_url="http://tracker-a")
    assert store.relogin("ann", "http://tracker-a", "fresh", [turn.id, open_turn.id]) == 0
    assert (turn.tracker_token, open_turn.tracker_token) == ("old", "fresh")


class StillDownSubmitter(CountingSubmitter):
    """A tracker that stays down: each retry answers the receipt the turn already has."""

    def __call__(self, session: TurnSession) -> dict[str, Any]:
        return {"status": "queued", "detail": "cannot reach the tracker"}

    def retry(self, session: TurnSession, *, now: bool = False) -> dict[str, Any]:
        self.sent.append(session.id)
        return {"status": "queued", "detail": "cannot reach the tracker"}


def test_a_retry_that_answers_the_same_receipt_changes_nothing() -> None:
    submitter = StillDownSubmitter()
    store = TurnStore(submitter)
    turn = store.start("ann", MORNING_ROLL)
    turn.roll([2, 2, 3, 4, 6, 6])
    store.finish(turn)
    assert store.retry_queued() == 0  # tried, but no receipt changed
    assert submitter.sent == [turn.id]


def test_off_the_board_is_refused_for_a_game_without_an_entry_score() -> None:
    """Morning Roll has no entry score (0): a turn 'not on the board' is refused, naming what
    was expected; Greed's (300) and Five-dice Farkle's (500) are started so."""
    import pytest

    from service.turns import TurnError

    store = TurnStore()
    with pytest.raises(TurnError) as refused:
        store.start("ann", MORNING_ROLL, on_board=False)
    assert refused.value.status == 422
    assert (
        str(refused.value)
        == "expected on_board true for morning-roll: it has no entry score to make"
    )
    for game in ("greed", "farkle-five"):
        assert store.start("ann", game, on_board=False).on_board is False


def test_a_turn_off_the_board_is_advised_as_one_whatever_turns_came_before() -> None:
    """The store keeps one advisor per game, rules and on_board: a Greed turn off the board
    started after one on it is advised off the board."""
    store = TurnStore()
    store.start("ann", "greed").roll([1, 5, 2, 3, 4])
    late = store.start("bob", "greed", on_board=False)
    assert late.advisor.on_board is False
    assert late.advisor is not store.start("cy", "greed").advisor
