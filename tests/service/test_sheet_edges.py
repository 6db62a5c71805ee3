"""Solitaire Dice sheets and Low-High turns at their edges, over real HTTP and on the store: a
roll of the wrong size says whether the photo or the values typed gave it, a sheet or turn a
day old is no longer played, a stored game comes back as it was."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest

from service.app import create_app
from service.settings import Settings
from service.turns import TurnError

from dicecam_testing.servers import LiveServer
from dicecam_testing.turns import QueueReader, dice, jpeg


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    reader = QueueReader()
    app = create_app(
        Settings(data_dir=tmp_path_factory.mktemp("data")),
        reader=reader,
        tracker_app=None,
        submitter=None,
    )
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url, timeout=30) as client:
        srv.reader, srv.client = reader, client
        yield srv


def post(client: httpx.Client, path: str, status: int = 200, **kw) -> dict:
    r = client.post(path, **kw)
    assert r.status_code == status, r.text
    return r.json()


def test_a_roll_of_the_wrong_size_says_whether_the_photo_or_the_values_gave_it(server):
    c, reader = server.client, server.reader
    url = f"/api/v1/sheets/{post(c, '/api/v1/sheets', 201, json={'player': 'ann'})['id']}"
    reader.rolls.append(dice([1, 2, 3, 4, 5, 6]))  # a die too many on the photo
    r = c.post(f"{url}/rolls", files={"photo": ("roll.jpg", jpeg(), "image/jpeg")})
    assert r.status_code == 422, r.text
    assert "should have 5 dice, but the photo shows 6 ([1, 2, 3, 4, 5, 6])" in r.json()["detail"]
    r = c.post(f"{url}/rolls", json={"values": [1, 2, 3]})
    assert r.status_code == 422, r.text
    assert "should have 5 dice, but the values typed give 3 ([1, 2, 3])" in r.json()["detail"]
    reader.rolls.append(dice([1, 2, 3, 4, 5]))  # the photo's values corrected by hand: typed
    files = {"photo": ("roll.jpg", jpeg(), "image/jpeg")}
    r = c.post(f"{url}/rolls", files=files, data={"values": "1,2"})
    assert r.status_code == 422, r.text
    assert "but the values typed give 2 ([1, 2])" in r.json()["detail"]
    assert c.get(url).json()["rolls"] == 0


def test_a_low_high_turn_ended_with_dice_unrolled_has_none_left_to_roll(server):
    c = server.client
    turn = post(c, "/api/v1/low-high/turns", 201, json={"player": "tom"})
    url = f"/api/v1/low-high/turns/{turn['id']}"
    post(c, f"{url}/rolls", json={"values": [1, 1, 1, 1, 2, 4, 4, 4, 5, 5, 5, 5, 6]})
    assert post(c, f"{url}/keep", json={"face": 5})["dice_left"] == 9
    view = post(c, f"{url}/end")
    assert (view["over"], view["outcome"], view["dice_left"]) == (True, "ended", 0)
    assert c.get(url).json()["dice_left"] == 0
    games = c.get("/api/v1/open-games", params={"player": "tom"}).json()["games"]
    assert turn["id"] not in [g["id"] for g in games]
    r = c.post(f"{url}/rolls", json={"values": [6] * 9})  # the dice left: no roll of this turn
    assert r.status_code == 409 and "this low-high turn is over" in r.json()["detail"]


def test_a_stored_game_comes_back_with_its_start_and_is_played_for_a_day_only(tmp_path):
    from service.sheet_db import SheetDatabase
    from service.sheet_store import SheetStore

    start = time.time() - 3600  # an hour ago: not the time it is read back
    now = [start]
    store = SheetStore(SheetDatabase(tmp_path / "turns.sqlite3"), clock=lambda: now[0])
    sheet = store.start("solitaire-dice", "ann")
    sheet.roll([1, 4, 4, 4, 6], reading={"values": [1, 4, 4, 4, 6]}, source="photo")
    store.save(sheet)
    store.close()

    store = SheetStore(SheetDatabase(tmp_path / "turns.sqlite3"), clock=lambda: now[0])
    back = store.get(sheet.id, "solitaire-dice")
    assert (back.id, back.created) == (sheet.id, start)
    assert (back.rolls[0].source, back.rolls[0].reading) == ("photo", {"values": [1, 4, 4, 4, 6]})
    now[0] = start + store.max_age_s - 1  # a second short of a day: still played
    assert store.get(sheet.id, "solitaire-dice") is back
    now[0] = start + store.max_age_s + 1  # a second past it: gone, though memory holds it
    with pytest.raises(TurnError) as gone:
        store.get(sheet.id, "solitaire-dice")
    assert gone.value.status == 404
    assert str(gone.value) == f"no sheet with id {sheet.id!r} (sheets are kept a day)"
    store.close()


def test_a_game_not_held_says_what_it_is_and_how_long_games_are_kept():
    from service.sheet_store import SheetStore

    store = SheetStore()  # no database: in memory only
    turn = store.start("low-high", "tom")
    with pytest.raises(TurnError) as missing:
        store.get(turn.id, "solitaire-dice")  # a Low-High turn is no sheet
    assert str(missing.value) == (
        f"no sheet with id {turn.id!r} (sheets are kept in memory until restart)"
    )
    with pytest.raises(TurnError) as missing:
        store.get("nope", "low-high")
    assert missing.value.status == 404
    assert str(missing.value) == (
        "no low-high turn with id 'nope' (low-high turns are kept in memory until restart)"
    )


def test_open_games_give_the_name_trimmed_the_start_in_utc_and_a_url_under_the_mount(tmp_path):
    from fastapi import FastAPI

    outer = FastAPI()
    app = create_app(
        Settings(data_dir=tmp_path), reader=QueueReader(), tracker_app=None, submitter=None
    )
    outer.mount("/dicecam", app)
    before = time.time()
    with LiveServer(outer, root_path="/dicecam") as srv, httpx.Client(timeout=30) as c:
        sheet = post(c, f"{srv.url}/api/v1/sheets", 201, json={"player": "  Ann  "})
        assert sheet["player"] == "Ann"
        r = c.get(f"{srv.url}/api/v1/open-games", params={"player": "ann"})
        assert r.status_code == 200, r.text
        (game,) = r.json()["games"]
        assert game["player"] == "Ann"
        assert game["url"] == f"/dicecam/api/v1/sheets/{sheet['id']}"
        started = datetime.fromisoformat(game["started"])
        assert started.utcoffset() == timedelta(0)  # said in UTC, not as a local time
        assert before - 1 <= started.timestamp() <= time.time() + 1
        host = srv.url.removesuffix("/dicecam")
        assert c.get(f"{host}{game['url']}").json()["id"] == sheet["id"]


def test_a_saved_game_its_rules_no_longer_allow_is_skipped_and_the_others_load(tmp_path, caplog):
    import json
    import sqlite3

    from service.sheet_db import SheetDatabase
    from service.sheet_store import SheetStore

    path = tmp_path / "turns.sqlite3"
    store = SheetStore(SheetDatabase(path))
    kept, broken = store.start("solitaire-dice", "ann"), store.start("low-high", "tom")
    for game, values in ((kept, [1, 4, 4, 4, 6]), (broken, [2] * 13)):
        game.roll(values)
        store.save(game)
    store.close()
    illegal = [{"op": "roll", "values": [2] * 13}, {"op": "keep", "face": 5}]  # no 5 rolled
    with sqlite3.connect(path) as raw:
        raw.execute(
            "UPDATE roll_games SET moves = ? WHERE id = ?", (json.dumps(illegal), broken.id)
        )
    raw.close()

    store = SheetStore(SheetDatabase(path))  # as at a restart: the service still starts
    assert store.get(kept.id, "solitaire-dice").last_values == [1, 4, 4, 4, 6]
    with pytest.raises(TurnError, match="no low-high turn with id"):
        store.get(broken.id, "low-high")
    assert f"low-high {broken.id} could not be restored and is skipped" in caplog.text
    assert "expected the face of a set of good dice (2)" in caplog.text
    store.close()


def test_a_closed_store_holds_its_file_open_no_more(tmp_path):
    import os

    from service.sheet_db import SheetDatabase
    from service.sheet_store import SheetStore

    path = tmp_path / "turns.sqlite3"

    def open_on_file() -> list[str]:
        fds = Path("/proc/self/fd")
        return [
            target
            for fd in os.listdir(fds)
            if (target := os.path.realpath(fds / fd)).startswith(str(path))
        ]

    store = SheetStore(SheetDatabase(path))
    store.start("solitaire-dice", "ann")  # saved: a connection to the file is open
    assert open_on_file()
    store.close()
    assert open_on_file() == []


class GateLock:
    """A session's lock that says when a request waits on it (held by the test meanwhile)."""

    def __init__(self) -> None:
        self.inner, self.waiting = threading.Lock(), threading.Event()

    def __enter__(self) -> None:
        self.waiting.set()
        self.inner.acquire()

    def __exit__(self, *exc: object) -> None:
        self.inner.release()


def test_a_split_chosen_on_a_roll_the_sheet_left_while_it_waited_is_refused(tmp_path):
    app = create_app(
        Settings(data_dir=tmp_path), reader=QueueReader(), tracker_app=None, submitter=None
    )
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        sid = post(c, "/api/v1/sheets", 201, json={"player": "ann"})["id"]
        post(c, f"/api/v1/sheets/{sid}/rolls", json={"values": [1, 4, 4, 4, 6]})
        sheet = app.state.sheets.get(sid, "solitaire-dice")
        sheet.lock = gate = GateLock()
        gate.inner.acquire()  # another device's moves are under way
        answer: list[httpx.Response] = []
        split = {"reject": 1, "combos": [8, 10]}
        tab = threading.Thread(
            target=lambda: answer.append(c.post(f"/api/v1/sheets/{sid}/split?rolls=1", json=split))
        )
        tab.start()
        assert gate.waiting.wait(10)  # this tab's split, chosen on roll 1, waits for the lock
        sheet.split(1, [8, 10])  # the other device splits roll 1 and rolls the same again
        sheet.roll([1, 4, 4, 4, 6])
        gate.inner.release()
        tab.join(30)
        assert answer[0].status_code == 409, answer[0].text
        assert "expected a move after roll 1, the sheet has had 2" in answer[0].json()["detail"]
        view = c.get(f"/api/v1/sheets/{sid}").json()
        assert (view["rolls"], view["awaiting"], len(view["history"])) == (2, "split", 1)


def test_a_sheet_or_low_high_turn_for_a_name_of_only_spaces_is_refused(server):
    """They started a game of player '' (201), as a turn did before it was refused the same."""
    for path in ("/api/v1/sheets", "/api/v1/low-high/turns"):
        for name in ("   ", "\t \n"):
            refused = post(server.client, path, 422, json={"player": name})
            assert refused == {"detail": "expected a player's name, got only spaces"}, path
        assert post(server.client, path, 201, json={"player": "  tom  "})["player"] == "tom"
