"""A move the game stores cannot save (:meth:`service.session_store.SessionStore.save`): a 503
that says why and that the schema lists, and a move undone for every request that holds the
game, never written by the next one."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.app import create_app
from service.settings import Settings
from service.sheet_db import SheetDatabase
from service.sheet_store import SheetStore
from service.turn_store import TurnStore
from service.turns import TurnError

from dicecam_testing.servers import LiveServer
from dicecam_testing.sqlite_pragmas import FULL, READ_ONLY, full, read_only
from dicecam_testing.turns import QueueReader

BIG = {"note": "x" * 5000}
"""A reading larger than a page of the file: saved, it takes a new one."""


# -- over HTTP ------------------------------------------------------------------------------
MOVES = {
    "turns": [
        ("rolls", {"values": [1, 1, 1, 2, 3]}),
        ("keep", {"dice": [1, 1, 1]}),
        ("bank", None),
    ],
    "low-high/turns": [
        ("rolls", {"values": [1, 2, 3, 4, 5, 6] * 2 + [6]}),
        ("keep", {"face": 6}),
        ("end", None),
    ],
    "sheets": [("rolls", {"values": [1, 2, 3, 4, 5]}), ("split", {"reject": 3, "combos": [3, 9]})],
}
"""Each kind of game's moves, one of each route, in an order its rules take."""


def test_a_move_whose_save_fails_answers_503_with_the_reason_and_the_schema_lists_it(
    tmp_path: Path,
):
    app = create_app(
        Settings(data_dir=tmp_path), reader=QueueReader(), tracker_app=None, submitter=None
    )
    dbs = app.state.turns.database, app.state.sheets.database
    paths = app.openapi()["paths"]
    starts = {"turns": {"game": "greed"}, "low-high/turns": {}, "sheets": {}}
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url + "/api/v1", timeout=30) as c:
        for kind, moves in MOVES.items():
            game = c.post(f"/{kind}", json={"player": "ann", **starts[kind]})
            assert game.status_code == 201, game.text
            url = f"/{kind}/{game.json()['id']}"
            for op, body in moves:
                before = c.get(url).json()
                with read_only(*dbs):
                    r = c.post(f"{url}/{op}", json=body)
                assert r.status_code == 503, (kind, op, r.text)
                detail = r.json()["detail"]
                assert f"OperationalError: {READ_ONLY}" in detail, detail
                assert "its last move was undone, try again" in detail
                assert "[SQL:" not in detail  # the statement and its values stay in the log
                assert c.get(url).json() == before, (kind, op)  # undone
                r = c.post(f"{url}/{op}", json=body)  # the disk has room again
                assert r.status_code == 200, (kind, op, r.text)

                documented = paths[f"/api/v1/{kind}/{{{app_param(kind)}}}/{op}"]["post"]
                said = documented["responses"]["503"]
                assert "the move could not be saved" in said["description"], (kind, op)
                assert said["content"]["application/json"]["schema"] == {
                    "$ref": "#/components/schemas/ErrorBody"
                }
                if op == "rolls":  # a roll's photo may meet a reader that cannot take it too
                    assert "the dice reader could not be loaded" in said["description"]


def app_param(kind: str) -> str:
    """The name of the id in the paths of ``kind``'s games."""
    return {"turns": "turn_id", "low-high/turns": "turn_id", "sheets": "sheet_id"}[kind]


def test_a_failed_save_does_not_show_the_statement_and_its_values(tmp_path: Path):
    app = create_app(
        Settings(data_dir=tmp_path), reader=QueueReader(), tracker_app=None, submitter=None
    )
    body = {"player": "ann", "tracker_token": "ann-secret-token"}
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url + "/api/v1", timeout=30) as c:
        with read_only(app.state.turns.database):
            r = c.post("/turns", json=body)
        assert r.status_code == 503, r.text
        detail = r.json()["detail"]
        assert detail == (
            f"the turn could not be saved (OperationalError: {READ_ONLY}); the turn was not "
            "started, try again"
        )
        assert c.get("/open-games", params={"player": "ann"}).json()["games"] == []
        assert c.post("/turns", json=body).status_code == 201


# -- requests holding the game --------------------------------------------------------------
def test_a_move_waiting_on_a_game_whose_save_failed_does_not_write_the_undone_move(
    tmp_path: Path,
):
    db = SheetDatabase(tmp_path / "turns.sqlite3")
    store = SheetStore(db)
    game_id = store.start("low-high", "ann").id
    first = store.get(game_id, "low-high")  # a request rolls ...
    got, refused = threading.Event(), []

    def second_request() -> None:
        """Another tab keeps a set of that roll: it holds the game, then waits on its lock."""
        game = store.get(game_id, "low-high")
        got.set()
        with game.lock:
            try:
                game.keep(6)
                store.save(game)
            except TurnError as exc:
                refused.append(exc)

    with first.lock:
        waiting = threading.Thread(target=second_request)
        waiting.start()
        assert got.wait(5.0)
        first.roll([1, 2, 3, 4, 5, 6] * 2 + [6], reading=BIG)
        with full(db), pytest.raises(TurnError, match=FULL) as failed:
            store.save(first)  # ... and is told it was undone
        assert failed.value.status == 503
        assert store._items[game_id].moves == []  # the file's copy, held in its place
    waiting.join(5.0)
    assert not waiting.is_alive()

    assert [e.status for e in refused] == [409]  # not made on the roll that was undone
    assert "GET the low-high turn again" in str(refused[0])
    now = store.get(game_id, "low-high")
    assert now is not first and now.moves == [] and now.awaiting == "roll"
    restarted = SheetStore(SheetDatabase(tmp_path / "turns.sqlite3"))
    assert restarted.get(game_id, "low-high").moves == []  # the file holds no roll either
    now.roll([1, 2, 3, 4, 5, 6] * 2 + [6])  # the next request plays on the file's copy
    store.save(now)
    assert [m["op"] for m in store.get(game_id, "low-high").moves] == ["roll"]
    restarted.close()
    store.close()


def test_a_game_whose_file_cannot_be_read_back_either_keeps_no_undone_move(tmp_path: Path):
    store = SheetStore(SheetDatabase(tmp_path / "turns.sqlite3"))
    sheet = store.start("solitaire-dice", "ann")
    sheet.roll([1, 2, 3, 4, 5])
    with read_only(store.database), pytest.raises(TurnError, match=READ_ONLY) as failed:
        store.save(sheet)  # nor can the file's copy be read back meanwhile
    assert failed.value.status == 503
    assert "[SQL:" not in str(failed.value)
    again = store.get(sheet.id, "solitaire-dice")  # read back from the file once it reads
    assert again is not sheet and again.rolls == [] and again.awaiting == "roll"
    sheet.split(3, [3, 9])  # the stale copy's holder moves on: refused, nothing written
    with pytest.raises(TurnError, match="changed while this move waited") as stale:
        store.save(sheet)
    assert stale.value.status == 409
    assert store.get(sheet.id, "solitaire-dice").moves == []
    store.close()


# -- the camera page ------------------------------------------------------------------------
def service_of_one_game_each(tmp_path: Path) -> Any:
    """The service with stores of one game each, in memory only: a second game is refused 503
    within the hour (as :func:`test_store_full.full_service`), a reader that reads nothing."""
    app = create_app(
        Settings(data_dir=tmp_path), reader=QueueReader(), tracker_app=None, submitter=None
    )
    app.state.turns, app.state.sheets = TurnStore(max_turns=1), SheetStore(max_games=1)
    return app


@pytest.mark.browser
@pytest.mark.slow
def test_a_refused_start_clears_the_game_on_screen_whichever_game_was_asked_for(
    chromium, tmp_path: Path
):
    from playwright.sync_api import expect

    app = service_of_one_game_each(tmp_path)
    reason = "can let go of none of them yet: try again later"
    with LiveServer(app) as srv:
        page = chromium.new_context().new_page()
        page.goto(srv.url + "/")
        page.fill("#player", "ann")

        def start(game: str) -> None:
            page.select_option("#game", game)
            page.click("#new-turn")

        def cleared(earlier: str) -> None:
            """The reason said, no game on screen, the earlier one listed to resume."""
            expect(page.locator("#message")).to_contain_text(reason)
            expect(page.locator("#message")).to_have_class("bust")
            expect(page.locator("#turn-state")).to_have_attribute("data-state", "no turn")
            expect(page.locator("#turn-total")).to_have_text("0")
            expect(page.locator("#bank")).to_be_disabled()
            expect(page.locator("#sheet")).to_be_hidden()
            assert page.evaluate("[window.dicecam.turn, window.dicecam.sheet]") == [None, None]
            expect(page.locator("#open-games-list")).to_contain_text(f"Resume {earlier}")

        start("greed")  # each store now holds ann's game: full
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
        httpx.post(f"{srv.url}/api/v1/sheets", json={"player": "bob"}, timeout=30)
        for game in ("low-high", "solitaire-dice"):  # a Farkle turn on screen, a sheet refused
            start(game)
            cleared("Greed turn")
            page.click("#open-games-list button")  # nothing lost: it is played on
            expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
            expect(page.locator("#message")).to_contain_text("Resumed ann's turn")

        app.state.sheets.max_items = 2  # a Low-High turn on screen, a Farkle turn refused
        start("low-high")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "roll")
        start("farkle-five")
        cleared("Low-High turn")
