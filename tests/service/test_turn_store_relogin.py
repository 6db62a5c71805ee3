"""A new login gives its token only to the turns of that player on that tracker: the turns whose
token a tracker refused (receipt ``login``) wait for their own player's next login
(:meth:`service.turn_store.TurnStore.relogin`); another player's, or the same player's on
another tracker, keep theirs and keep waiting."""

from __future__ import annotations

from typing import Any

from service.turn_store import TurnStore
from service.turns import TurnSession

REFUSED = {"status": "queued", "login": True, "detail": "the tracker refused the token"}


class TokenRefusingSubmitter:
    """Answers every hand-over as a tracker that refused the turn's token does; a retry waits
    while the turn's token is the refused one (as ``TrackerSubmitter.retry``), else is
    recorded with the token it was sent with and answered as stored."""

    def __init__(self) -> None:
        self.retried: list[tuple[str, str | None, str | None]] = []

    def __call__(self, session: TurnSession) -> dict[str, Any]:
        return dict(REFUSED)

    def retry(self, session: TurnSession, *, now: bool = False) -> dict[str, Any] | None:
        if (session.submission or {}).get("login"):  # as TrackerSubmitter: a refused token waits
            return None
        self.retried.append((session.player, session.tracker_url, session.tracker_token))
        return {"status": "submitted", "turn": {"id": len(self.retried)}}


def _busted(store: TurnStore, player: str, url: str) -> TurnSession:
    turn = store.start(player, "morning-roll", tracker_url=url, tracker_token="dead")
    turn.roll([2, 2, 3, 4, 6, 6])  # no scoring die: the turn is over
    store.finish(turn)
    assert turn.submission == REFUSED
    return turn


def test_a_login_sends_only_that_players_turns_on_that_tracker() -> None:
    submitter = TokenRefusingSubmitter()
    store = TurnStore(submitter)
    lena = _busted(store, "Lena", "http://tracker-a")
    max_ = _busted(store, "max", "http://tracker-a")
    lena_b = _busted(store, "lena", "http://tracker-b")

    assert store.relogin(" lena ", "http://tracker-a", "fresh") == 1

    assert submitter.retried == [("Lena", "http://tracker-a", "fresh")]
    assert lena.tracker_token == "fresh" and lena.submission["status"] == "submitted"
    for other in (max_, lena_b):
        assert (other.tracker_token, other.submission) == ("dead", REFUSED)
