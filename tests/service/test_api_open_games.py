"""A player's open games over real HTTP (``GET /api/v1/open-games``): turns, Solitaire Dice
sheets and Low-High turns of the last day that are not over, newest first, each with the route
to resume it from another device; kept over a restart; bad queries are 422s that say why."""

from __future__ import annotations

import httpx
import pytest

from service.app import create_app
from service.settings import Settings

from dicecam_testing.servers import LiveServer
from dicecam_testing.turns import QueueReader


def serve(data_dir) -> tuple[LiveServer, object]:
    app = create_app(
        Settings(data_dir=data_dir), reader=QueueReader(), tracker_app=None, submitter=None
    )
    return LiveServer(app), app


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv, _ = serve(tmp_path_factory.mktemp("data"))
    with srv:
        yield srv


def post(client: httpx.Client, path: str, status: int = 200, **kw) -> dict:
    r = client.post(path, **kw)
    assert r.status_code == status, r.text
    return r.json()


def listed(client: httpx.Client, player: str, **query) -> list[dict]:
    r = client.get("/api/v1/open-games", params={"player": player, **query})
    assert r.status_code == 200, r.text
    return r.json()["games"]


def test_open_games_of_every_kind_newest_first_and_finished_ones_left_out(tmp_path):
    server, app = serve(tmp_path)
    with server as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        turn = post(c, "/api/v1/turns", 201, json={"player": "Heather", "game": "greed"})
        post(c, f"/api/v1/turns/{turn['id']}/rolls", json={"values": [1, 5, 2, 3, 3]})
        post(c, f"/api/v1/turns/{turn['id']}/keep", json={"dice": [1, 5]})
        sheet = post(c, "/api/v1/sheets", 201, json={"player": "heather "})
        post(c, f"/api/v1/sheets/{sheet['id']}/rolls", json={"values": [1, 4, 4, 4, 6]})
        low = post(c, "/api/v1/low-high/turns", 201, json={"player": "heather"})
        post(c, "/api/v1/sheets", 201, json={"player": "tom"})  # another player's
        done = post(c, "/api/v1/low-high/turns", 201, json={"player": "heather"})
        lh = f"/api/v1/low-high/turns/{done['id']}"
        post(c, f"{lh}/rolls", json={"values": [6] * 13})
        assert post(c, f"{lh}/keep", json={"face": 6})["over"]  # no dice left: over
        games = listed(c, "  HEATHER ")
        assert [(g["id"], g["game"]) for g in games] == [
            (low["id"], "low-high"),
            (sheet["id"], "solitaire-dice"),
            (turn["id"], "greed"),
        ]
        by_id = {g["id"]: g for g in games}
        assert by_id[turn["id"]] | {"started": None} == {
            "id": turn["id"],
            "game": "greed",
            "player": "Heather",
            "started": None,
            "rolls": 1,
            "awaiting": "roll-or-bank",
            "dice_left": 3,
            "score": 150,
            "url": f"/api/v1/turns/{turn['id']}",
        }
        assert (by_id[sheet["id"]]["awaiting"], by_id[sheet["id"]]["score"]) == ("split", 0)
        assert by_id[sheet["id"]]["url"] == f"/api/v1/sheets/{sheet['id']}"
        assert by_id[low["id"]]["url"] == f"/api/v1/low-high/turns/{low['id']}"
        assert by_id[low["id"]]["dice_left"] == 13
        for g in games:  # each url gives the game as its own route does
            assert c.get(g["url"]).json()["rolls"] == g["rolls"]
        assert [g["id"] for g in listed(c, "heather", game="solitaire-dice")] == [sheet["id"]]
        assert listed(c, "heather", game="morning-roll") == []
        assert listed(c, "nobody") == []

        # a game finished on one device leaves the list
        post(c, f"/api/v1/turns/{turn['id']}/bank?rolls=1")
        assert turn["id"] not in [g["id"] for g in listed(c, "heather")]
        # a day-old game is not offered (the service no longer plays it)
        app.state.sheets._items[sheet["id"]].created -= 24 * 3600
        assert [g["id"] for g in listed(c, "heather")] == [low["id"]]


def test_open_games_are_listed_after_a_restart_and_resumed_by_another_client(tmp_path):
    server, _ = serve(tmp_path)
    with server as srv, httpx.Client(base_url=srv.url, timeout=30) as phone:
        sheet = post(phone, "/api/v1/sheets", 201, json={"player": "jeff"})
        post(phone, f"/api/v1/sheets/{sheet['id']}/rolls", json={"values": [1, 4, 4, 4, 6]})
        turn = post(phone, "/api/v1/turns", 201, json={"player": "jeff"})
        post(phone, f"/api/v1/turns/{turn['id']}/rolls", json={"values": [1, 1, 2, 3, 4, 6]})

    server, _ = serve(tmp_path)  # restarted on the same data folder
    with server as srv, httpx.Client(base_url=srv.url, timeout=30) as laptop:
        games = {g["game"]: g for g in listed(laptop, "jeff")}
        assert set(games) == {"solitaire-dice", "morning-roll"}
        s = games["solitaire-dice"]
        assert (s["id"], s["rolls"], s["awaiting"]) == (sheet["id"], 1, "split")
        split = {"reject": 1, "combos": [8, 10]}
        view = post(laptop, f"{s['url']}/split?rolls={s['rolls']}", json=split)
        assert view["score"] == -400
        stale = laptop.post(f"{s['url']}/split?rolls=0", json=split)  # a tab left at roll 0
        assert stale.status_code == 409, stale.text
        assert stale.json()["detail"].startswith("this sheet moved on elsewhere")
        assert "the sheet has had 1; nothing was changed, GET the sheet again" in stale.text
        t = games["morning-roll"]
        view = post(laptop, f"{t['url']}/keep?rolls={t['rolls']}", json={"dice": [1, 1]})
        assert view["turn_points"] == 200


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ({}, "player"),
        ({"player": ""}, "player"),
        ({"player": "   "}, "expected a player's name, got only spaces"),
        ({"player": "x" * 81}, "player"),
        ({"player": "ann", "game": "farkle"}, "did you mean 'farkle-five'"),
    ],
)
def test_a_bad_query_is_a_422_that_says_why(server, query, says):
    r = httpx.get(f"{server.url}/api/v1/open-games", params=query, timeout=30)
    assert r.status_code == 422, r.text
    assert says in r.text
