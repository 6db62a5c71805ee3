"""The game stores when full (:class:`service.session_store.SessionStore`): one copy of a game
however requests read it back, a bounded load at start, and the 503 of a full store in the
schema and on the camera page."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import pytest

from service.app import create_app
from service.settings import Settings
from service.sheet_db import SheetDatabase
from service.sheet_store import SheetStore
from service.sheets import SheetSession
from service.turn_db import TurnDatabase
from service.turn_store import TurnStore
from service.turns import MORNING_ROLL, TurnSession

from dicecam_testing.servers import LiveServer
from dicecam_testing.turns import QueueReader

SOLITAIRE = SheetSession.game


class Outbox:
    """A submitter whose outbox cannot be written (a full disk): every turn ``failed``."""

    def __init__(self) -> None:
        self.tried: list[str] = []

    def __call__(self, session: TurnSession) -> dict:
        self.tried.append(session.id)
        raise OSError("No space left on device")

    def retry(self, session: TurnSession, *, now: bool = False) -> None:
        return None


def bust(store: TurnStore, player: str) -> str:
    """A Morning Roll turn started, busted (a die off the table) and handed over; its id."""
    turn = store.start(player, MORNING_ROLL, tracker_url="http://tracker.invalid")
    turn.roll([2] * (turn.dice_left - 1), off_table=1)
    store.finish(turn)
    store.save(turn)
    return turn.id


def step(store: SheetStore, sheet_id: str) -> None:
    """A player's next move on the sheet, as a request makes it: the sheet read (back), then
    under its lock a roll when it waits for one, else a split of that roll; saved."""
    sheet = store.get(sheet_id, SOLITAIRE)
    with sheet.lock:
        if sheet.awaiting == "roll":
            sheet.roll([1, 2, 3, 4, 5])
        else:
            sheet.split(3, [3, 9])
        store.save(sheet)


def test_a_game_let_go_of_while_a_request_uses_it_is_read_back_as_that_copy(tmp_path: Path):
    store = SheetStore(SheetDatabase(tmp_path / "turns.sqlite3"), max_games=1)
    sheet_id = store.start(SOLITAIRE, "ann").id
    in_use = store.get(sheet_id, SOLITAIRE)  # a request holds it (reading a photo, say)
    store.start(SOLITAIRE, "bob")  # memory lets go of it meanwhile
    again = store.get(sheet_id, SOLITAIRE)  # a second request reads it back
    assert again is in_use
    in_use.roll([1, 2, 3, 4, 5])
    store.save(in_use)
    assert again.awaiting == "split"
    store.close()


def test_two_requests_reading_back_one_game_at_once_lose_no_move(tmp_path: Path):
    db = SheetDatabase(tmp_path / "turns.sqlite3")
    store = SheetStore(db, max_games=1)
    sheet_id = store.start(SOLITAIRE, "ann").id
    store.start(SOLITAIRE, "bob")  # ann's sheet is in the file only
    loaded, go = threading.Event(), threading.Event()
    load = db.load

    def slow_load(*args, **kw):
        """The slow thread's read-back reads the file, then is slow to hold what it read."""
        out = load(*args, **kw)
        if threading.current_thread().name == "slow":
            loaded.set()
            go.wait(1.0)
        return out

    db.load = slow_load
    errors: list[Exception] = []

    def slow_step() -> None:
        try:
            step(store, sheet_id)
        except Exception as exc:
            errors.append(exc)

    slow = threading.Thread(target=slow_step, name="slow")
    slow.start()
    assert loaded.wait(5.0)
    step(store, sheet_id)  # the other request reads it back and moves it meanwhile
    store.start(SOLITAIRE, "cy")  # and memory lets go of it again
    go.set()
    slow.join(5.0)
    assert errors == []
    db.load = load
    store.start(SOLITAIRE, "dee")
    moves = [m["op"] for m in store.get(sheet_id, SOLITAIRE).moves]
    assert moves == ["roll", "split"]  # both requests' moves, one after the other
    store.close()


class Announced:
    """A lock that says when the thread named ``second`` starts waiting on it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.second_waits = threading.Event()

    def __enter__(self) -> None:
        if threading.current_thread().name == "second":
            self.second_waits.set()
        self._lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


def test_a_request_waiting_on_another_ones_read_back_gets_that_copy(tmp_path: Path):
    db = SheetDatabase(tmp_path / "turns.sqlite3")
    store = SheetStore(db, max_games=1)
    sheet_id = store.start(SOLITAIRE, "ann").id
    store.start(SOLITAIRE, "bob")  # ann's sheet is in the file only
    store._reading = reading = Announced()
    loaded, go = threading.Event(), threading.Event()
    load = db.load

    def slow_load(*args, **kw):
        """The first request's read-back is slow to hold what it read."""
        out = load(*args, **kw)
        if threading.current_thread().name == "first":
            loaded.set()
            go.wait(5.0)
        return out

    db.load = slow_load
    got: dict[str, SheetSession] = {}

    def get() -> None:
        got[threading.current_thread().name] = store.get(sheet_id, SOLITAIRE)

    first = threading.Thread(target=get, name="first")
    first.start()
    assert loaded.wait(5.0)
    second = threading.Thread(target=get, name="second")
    second.start()  # finds it nowhere in memory and waits on the first one's read-back
    assert reading.second_waits.wait(5.0)
    go.set()
    first.join(5.0), second.join(5.0)
    db.load = load
    assert got["second"] is got["first"]  # the copy the first read back, not a second one
    sheet = got["first"]
    with sheet.lock:
        sheet.roll([1, 2, 3, 4, 5])
        store.save(sheet)  # the copy the store gives: saved, not refused as changed
    assert store.get(sheet_id, SOLITAIRE).awaiting == "split"
    store.close()


def test_a_game_read_back_into_a_memory_full_of_unsent_turns_is_served(tmp_path: Path):
    db = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos")
    store = TurnStore(Outbox(), max_turns=2, database=db)
    game = store.start("ann", "greed").id
    unsent = [bust(store, "bob"), bust(store, "cy")]  # neither may go: ann's goes
    assert list(store._items) == unsent
    turn = store.get(game)  # no room: served without being held, not refused
    assert turn.player == "ann" and list(store._items) == unsent
    turn.roll([1, 1, 1, 2, 3])
    store.save(turn)
    assert store.get(game) is turn  # one copy while it is in use
    del turn
    assert store.get(game).rolls[0].values == [1, 1, 1, 2, 3]  # the file's, once let go of
    db.dispose()


class Counted:
    """A database's ``load`` that counts the games it rebuilds (what memory takes in)."""

    def __init__(self, database) -> None:
        self.loaded = 0
        self._load = database.load
        database.load = self

    def __call__(self, *args, **kw) -> list:
        out = self._load(*args, **kw)
        self.loaded += len(out)
        return out


def test_a_restart_after_a_flood_loads_the_newest_games_and_every_unsent_turn(tmp_path: Path):
    db = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos")
    store = TurnStore(Outbox(), max_turns=20, database=db)
    unsent = bust(store, "ann")  # the least recently saved of all
    flood = [store.start(f"p{i}", "greed").id for i in range(12)]
    db.dispose()

    db = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos")
    counted = Counted(db)
    outbox = Outbox()
    restarted = TurnStore(outbox, max_turns=3, database=db)
    assert counted.loaded == 3  # not the 13 the file holds
    assert sorted(restarted._items) == sorted([unsent, *flood[-2:]])
    restarted.retry_queued()
    assert outbox.tried == [unsent]  # handed over again after the restart
    assert restarted.get(flood[0]).player == "p0"  # the others are read back when asked for
    db.dispose()


def test_a_restart_loads_no_more_sheets_than_memory_holds(tmp_path: Path):
    store = SheetStore(SheetDatabase(tmp_path / "turns.sqlite3"), max_games=20)
    ids = [store.start(SOLITAIRE, f"p{i}").id for i in range(8)]
    store.close()
    db = SheetDatabase(tmp_path / "turns.sqlite3")
    counted = Counted(db)
    restarted = SheetStore(db, max_games=2)
    assert counted.loaded == 2 and list(restarted._items) == ids[-2:]
    restarted.close()


def test_a_restart_loads_the_games_moved_last_not_those_started_last(tmp_path: Path):
    db = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos")
    store = TurnStore(max_turns=20, database=db)
    first = store.start("ann", "greed")
    later = [store.start(f"p{i}", "greed").id for i in range(3)]
    first.roll([1, 1, 1, 2, 3])  # the game started first is the one moved last
    store.save(first)
    db.dispose()
    db = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos")
    restarted = TurnStore(max_turns=2, database=db)
    assert list(restarted._items) == [later[-1], first.id]  # least recently saved first
    db.dispose()


def full_service(tmp_path: Path):
    """The service with stores of one game each, in memory only (the turns' file could not
    be opened): a second game is refused 503 within the hour."""
    app = create_app(
        Settings(data_dir=tmp_path), reader=QueueReader(), tracker_app=None, submitter=None
    )
    app.state.turns, app.state.sheets = TurnStore(max_turns=1), SheetStore(max_games=1)
    return app


def test_a_full_store_refuses_a_new_game_with_a_503_the_schema_documents(tmp_path: Path):
    app = full_service(tmp_path)
    paths = app.openapi()["paths"]
    starts = {
        "/api/v1/turns": {"player": "ann", "game": "greed"},
        "/api/v1/sheets": {"player": "ann"},
        "/api/v1/low-high/turns": {"player": "ann"},  # the store of sheets holds ann's
    }
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        assert c.post("/api/v1/turns", json=starts["/api/v1/turns"]).status_code == 201
        assert c.post("/api/v1/sheets", json=starts["/api/v1/sheets"]).status_code == 201
        for path, body in starts.items():
            r = c.post(path, json={**body, "player": "flood"})
            assert r.status_code == 503, (path, r.text)
            assert r.json()["detail"].startswith("the service holds 1 game (1 used in the last")
            documented = paths[path]["post"]["responses"]["503"]
            assert "holds as many games" in documented["description"]
            schema = documented["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/ErrorBody"}


@pytest.mark.browser
@pytest.mark.slow
def test_the_camera_page_says_why_a_full_service_refused_a_game_and_starts_it_again(
    chromium, tmp_path: Path
):
    from playwright.sync_api import expect

    app = full_service(tmp_path)
    with LiveServer(app) as srv:
        for path, body in (("/turns", {"player": "bob", "game": "greed"}), ("/sheets", {})):
            r = httpx.post(f"{srv.url}/api/v1{path}", json={"player": "bob", **body}, timeout=30)
            assert r.status_code == 201  # each store holds bob's game: full
        games = (("greed", "turns", "awaiting_roll"), ("low-high", "sheets", "roll"))
        for game, store, started in games:
            page = chromium.new_context().new_page()
            page.goto(srv.url + "/")
            page.fill("#player", "ann")
            page.select_option("#game", game)
            page.click("#new-turn")
            message = page.locator("#message")
            expect(message).to_contain_text("the service holds 1 game (1 used in the last 1 h)")
            expect(message).to_contain_text("can let go of none of them yet: try again later")
            expect(page.locator("#turn-state")).to_have_attribute("data-state", "no turn")
            expect(page.locator("#new-turn")).to_be_enabled()
            getattr(app.state, store).max_items = 2  # room again: the player tries again
            page.click("#new-turn")
            expect(page.locator("#turn-state")).to_have_attribute("data-state", started)
            assert "try again later" not in message.text_content()
