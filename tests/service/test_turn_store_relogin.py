"""A new login gives its token only to the turns of that player on that tracker that the page
logging in names: the turns whose token a tracker refused (receipt ``login``) wait for their own
player's next login (:meth:`service.turn_store.TurnStore.relogin`); another player's, the same
player's on another tracker, and any turn the page does not name keep theirs and keep waiting."""

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

    named = [lena.id, max_.id, lena_b.id]  # a page that somehow holds all three
    assert store.relogin(" lena ", "http://tracker-a", "fresh", named) == 1

    assert submitter.retried == [("Lena", "http://tracker-a", "fresh")]
    assert lena.tracker_token == "fresh" and lena.submission["status"] == "submitted"
    for other in (max_, lena_b):
        assert (other.tracker_token, other.submission) == ("dead", REFUSED)


def test_a_login_gives_its_token_only_to_the_turns_the_page_names() -> None:
    # anyone may start a turn under a player's name, with no token or a made-up one the
    # tracker refuses: the player's own login elsewhere must not hand that turn their token
    submitter = TokenRefusingSubmitter()
    store = TurnStore(submitter)
    made_up = _busted(store, "lena", "http://tracker-a")  # "dead": refused, waits for a login
    open_turn = store.start("lena", "morning-roll", tracker_url="http://tracker-a")
    own = store.start("lena", "morning-roll", tracker_url="http://tracker-a")

    assert store.relogin("lena", "http://tracker-a", "fresh") == 0  # names none: none takes it
    assert store.relogin("lena", "http://tracker-a", "fresh", [own.id]) == 0

    assert own.tracker_token == "fresh"  # submitted with it when it ends
    assert open_turn.tracker_token is None
    assert (made_up.tracker_token, made_up.submission) == ("dead", REFUSED)
    assert submitter.retried == []
    assert store.relogin("lena", "http://tracker-a", "fresh", [made_up.id]) == 1  # named: sent
    assert submitter.retried == [("lena", "http://tracker-a", "fresh")]


def test_a_named_turn_memory_let_go_of_takes_the_token_from_the_database(tmp_path) -> None:
    from service.turn_db import TurnDatabase

    db = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos")
    store = TurnStore(TokenRefusingSubmitter(), max_turns=1, database=db)
    own = store.start("lena", "morning-roll", tracker_url="http://tracker-a").id
    store.start("max", "greed")  # full: memory lets go of lena's open turn, its row stays
    assert own not in store._items

    assert store.relogin("lena", "http://tracker-a", "fresh", [own, "no-such-turn"]) == 0

    restarted = TurnStore(TokenRefusingSubmitter(), database=db)  # as saved
    assert restarted.get(own).tracker_token == "fresh"


def test_a_login_stands_when_the_database_cannot_read_a_named_turn_back(tmp_path, caplog):
    """A turn memory let go of, whose file cannot be read now (its table gone: a broken file),
    keeps its token, said in the log; the login goes on to the turns held in memory."""
    import sqlite3

    from service.turn_db import TurnDatabase

    path = tmp_path / "turns.sqlite3"
    db = TurnDatabase(path, tmp_path / "photos")
    store = TurnStore(TokenRefusingSubmitter(), max_turns=1, database=db)
    gone = store.start("lena", "morning-roll", tracker_url="http://tracker-a").id
    held = store.start("lena", "morning-roll", tracker_url="http://tracker-a")
    assert gone not in store._items and held.id in store._items
    db.engine.dispose()
    with sqlite3.connect(path) as broken:
        broken.execute("DROP TABLE turns")

    with caplog.at_level("WARNING", logger="dicecam.service"):
        assert store.relogin("lena", "http://tracker-a", "fresh", [gone, held.id]) == 0
    assert f"turn {gone}: not read back for a new login: " in caplog.text
    assert held.tracker_token == "fresh"
