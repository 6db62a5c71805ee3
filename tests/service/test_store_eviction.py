"""What the game stores let go of when full (:class:`service.session_store.SessionStore`): the
least recently used game, never one a player used in the last hour (without a database) nor a
finished turn the tracker's outbox does not hold yet; with a database a game let go of in
memory is read back from it."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from service.app import create_app
from service.settings import Settings
from service.sheet_db import SheetDatabase
from service.sheet_store import SheetStore
from service.turn_db import TurnDatabase
from service.turn_store import TurnStore
from service.turns import MORNING_ROLL, TurnError

from .conftest import LiveServer
from dicecam_testing.turns import QueueReader

HOUR = 3600.0


class Clock:
    """Epoch seconds that a test moves on."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def bust(store: TurnStore, player: str = "ann", **kw) -> str:
    """A Morning Roll turn started and busted (a die off the table), handed over; its id."""
    turn = store.start(player, MORNING_ROLL, **kw)
    turn.roll([2] * (turn.dice_left - 1), off_table=1)
    store.finish(turn)
    store.save(turn)
    assert turn.over
    return turn.id


def test_a_just_finished_turn_outlives_new_starts_and_the_least_used_goes(tmp_path: Path):
    clock = Clock()
    store = TurnStore(max_turns=3, clock=clock)
    done = bust(store)
    idle = store.start("bob", "greed").id
    kept = store.start("cy", "greed").id
    clock.now += 2 * HOUR  # all three idle past the hour
    store.get(done)  # the player reloads the finished turn's page
    store.get(kept)
    store.start("dee", "greed")  # full: the least recently used goes
    assert store.get(done).over and store.get(kept).player == "cy"
    with pytest.raises(TurnError, match="no turn with id") as err:
        store.get(idle)
    assert err.value.status == 404


def test_a_flood_of_new_games_is_refused_without_dropping_games_in_use():
    clock = Clock()
    store = SheetStore(max_games=3, clock=clock)
    games = [store.start("low-high", f"p{i}") for i in range(3)]
    with pytest.raises(TurnError, match="3 used in the last 1 h") as err:
        store.start("low-high", "flood")
    assert err.value.status == 503
    assert [store.get(g.id, "low-high").player for g in games] == ["p0", "p1", "p2"]
    clock.now += HOUR + 1  # idle long enough: the least recently used goes
    store.get(games[0].id, "low-high")
    assert store.start("low-high", "late").player == "late"
    with pytest.raises(TurnError, match="no low-high turn"):
        store.get(games[1].id, "low-high")


def test_with_a_database_a_game_let_go_of_in_memory_is_read_back(tmp_path: Path):
    db = SheetDatabase(tmp_path / "turns.sqlite3")
    store = SheetStore(db, max_games=2)
    first = store.start("low-high", "ann")
    first.roll([2] * 13)
    first.keep(2)  # no dice left: over
    store.save(first)
    for name in ("bob", "cy", "dee"):  # no hour's grace with a database: nothing is lost
        store.start("low-high", name)
    assert len(store._items) == 2
    again = store.get(first.id, "low-high")
    assert again.over and again.score == first.score
    assert len(store._items) == 2
    db.dispose()

    restarted = SheetStore(SheetDatabase(tmp_path / "turns.sqlite3"), max_games=2)
    assert restarted.get(first.id, "low-high").over  # still in the file after a restart
    assert len(restarted._items) == 2  # the file holds four: memory holds two
    assert sorted(g.player for g in restarted.open_of("bob") + restarted.open_of("cy")) == [
        "bob",
        "cy",
    ]
    restarted.close()


@pytest.mark.parametrize("status", ["failed", "queued"])
def test_a_finished_turn_not_yet_delivered_is_never_let_go_of(tmp_path: Path, status: str):
    class Unsent:
        """A submitter whose outbox cannot be written (a full disk: every turn ``failed``), or
        whose tracker is down (every turn ``queued`` in the outbox, sent with its token)."""

        def __init__(self) -> None:
            self.tried: list[str] = []

        def __call__(self, session):
            self.tried.append(session.id)
            if status == "failed":
                raise OSError("No space left on device")
            return {"status": "queued", "detail": "the tracker is down"}

        def retry(self, session, *, now: bool = False):
            self.tried.append(session.id)
            return None

    submitter = Unsent()
    db = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos")
    store = TurnStore(submitter, max_turns=2, database=db)
    unsent = bust(store, tracker_url="http://tracker.invalid", tracker_token="t")
    assert store.get(unsent).submission["status"] == status
    other = store.start("bob", "greed")
    for name in ("cy", "dee"):  # full: the unfinished turns go, the unsent one stays
        store.start(name, "greed")
    assert unsent in store._items and other.id not in store._items
    submitter.tried.clear()
    store.retry_queued()
    assert submitter.tried == [unsent]  # still tried again, with its token

    bust(store, "eve", tracker_url="http://tracker.invalid", tracker_token="t")
    with pytest.raises(TurnError, match="2 finished turns not yet handed to the tracker") as err:
        store.start("fay", "greed")  # both held turns wait: none can go
    assert err.value.status == 503
    db.dispose()


def test_a_player_reloading_a_finished_turn_gets_it_after_many_new_games(tmp_path: Path):
    app = create_app(
        Settings(data_dir=tmp_path), reader=QueueReader(), tracker_app=None, submitter=None
    )
    app.state.turns.max_items = app.state.sheets.max_items = 3
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        turn = c.post("/api/v1/turns", json={"player": "ann", "game": MORNING_ROLL}).json()
        n = turn["dice_left"]
        roll = {"values": [2] * (n - 1), "off_table": 1}
        done = c.post(f"/api/v1/turns/{turn['id']}/rolls", json=roll).json()
        assert done["over"]
        lh = c.post("/api/v1/low-high/turns", json={"player": "ann"}).json()
        c.post(f"/api/v1/low-high/turns/{lh['id']}/rolls", json={"values": [2] * 13})
        lh_done = c.post(f"/api/v1/low-high/turns/{lh['id']}/keep", json={"face": 2}).json()
        assert lh_done["over"]
        for i in range(5):  # more new games than either store holds
            assert c.post("/api/v1/turns", json={"player": f"p{i}", "game": "greed"}).is_success
            assert c.post("/api/v1/low-high/turns", json={"player": f"p{i}"}).is_success
        r = c.get(f"/api/v1/turns/{turn['id']}")
        assert r.status_code == 200 and r.json()["outcome"] == done["outcome"]
        assert r.json()["submission"] == done["submission"]
        r = c.get(f"/api/v1/low-high/turns/{lh['id']}")
        assert r.status_code == 200 and r.json()["score"] == lh_done["score"]


def test_a_sweep_deletes_day_old_games_memory_let_go_of_with_their_photos(tmp_path: Path):
    clock = Clock()
    db = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos")
    store = TurnStore(max_turns=1, database=db, clock=clock)
    old = store.start("ann", "greed")
    old.roll([1, 3, 4, 6, 2], photo=b"\xff\xd8\xff ann's roll")
    store.save(old)
    old_id = old.id
    del old  # no request uses it: memory holds only what the store holds
    clock.now += 12 * HOUR
    fresh = store.start("bob", "greed")  # full: memory lets go of ann's turn, its row stays
    assert list(store._items) == [fresh.id]
    assert len(list(db.photo_dir.glob(f"{old_id}-*.photo"))) == 1
    clock.now += 13 * HOUR  # ann's turn is a day and an hour old, bob's 13 hours
    assert store.sweep() == 0  # none held is a day old...
    assert [row.id for row in db.load(lambda row, _: row, since=0)] == [fresh.id]  # ...on disk
    assert not list(db.photo_dir.glob(f"{old_id}-*.photo"))
    with pytest.raises(TurnError, match="no turn with id"):
        store.get(old_id)
    assert store.get(fresh.id).player == "bob"
    db.dispose()


def test_a_game_started_a_day_after_another_deletes_its_row_and_photos(tmp_path: Path):
    clock = Clock()
    db = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos")
    store = TurnStore(database=db, clock=clock)
    old = store.start("ann", "greed", tracker_token="ann-token")
    old.roll([1, 3, 4, 6, 2], photo=b"\xff\xd8\xff ann's roll")
    store.save(old)
    assert len(list(db.photo_dir.glob(f"{old.id}-*.photo"))) == 1
    clock.now += 25 * HOUR  # no sweep ran meanwhile
    fresh = store.start("bob", "greed")  # memory drops ann's day-old turn: the file does too
    assert [row.id for row in db.load(lambda row, _: row, since=0)] == [fresh.id]
    assert not list(db.photo_dir.glob(f"{old.id}-*.photo"))
    db.dispose()


def test_a_game_unused_for_exactly_the_hour_may_go_and_one_exactly_a_day_old_stays():
    clock = Clock()
    store = SheetStore(max_games=1, clock=clock)
    first = store.start("low-high", "ann")
    clock.now += HOUR  # an hour unused, to the second: it may go (idle_s at least)
    second = store.start("low-high", "bob")
    with pytest.raises(TurnError, match="no low-high turn"):
        store.get(first.id, "low-high")
    clock.now += 24 * HOUR  # bob's game started a day ago, to the second
    assert store.sweep() == 0  # dropped only once over a day old, as the file's rows are
    assert store.get(second.id, "low-high").player == "bob"
    clock.now += 1
    assert store.sweep() == 1


def test_a_day_old_game_is_neither_listed_open_nor_read_back_before_a_sweep(tmp_path: Path):
    clock = Clock()
    db = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos")
    store = TurnStore(max_turns=1, database=db, clock=clock)
    in_file = store.start("ann", "greed").id  # memory lets go of it for the next one
    held = store.start("ann", "greed").id
    assert list(store._items) == [held]
    assert {t.id for t in store.open_of("ann")} == {in_file, held}
    clock.now += 24 * HOUR + 1  # both a day old; no sweep ran, no game started
    assert store.open_of("ann") == []
    with pytest.raises(TurnError, match="no turn with id") as gone:
        store.get(in_file)
    assert gone.value.status == 404
    db.dispose()
