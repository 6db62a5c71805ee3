"""House rules (the (option) items of READINGS.md) through the service: a turn started under
them is scored and advised under them, keeps them over a restart, and the score route takes
them too; unknown or ill-typed ones are refused naming the valid ones."""

from __future__ import annotations

import sqlite3

import httpx
import pytest

from service.app import create_app
from service.settings import Settings

from dicecam_testing.servers import LiveServer
from dicecam_testing.turns import QueueReader

FOUR_TWOS_AND_A_PAIR = [2, 2, 2, 2, 3, 3]  # three pairs only under M4's option


def serve(data_dir):
    app = create_app(
        Settings(data_dir=data_dir), reader=QueueReader(), tracker_app=None, submitter=None
    )
    return LiveServer(app)


def roll(c: httpx.Client, turn_id: str, values: list[int]) -> dict:
    r = c.post(f"/api/v1/turns/{turn_id}/rolls", json={"values": values})
    assert r.status_code == 200, r.text
    return r.json()


def points_of(turn: dict) -> set[int]:
    return {k["points"] for k in turn["keeps"]}


def test_games_list_each_games_house_rules_with_their_defaults(tmp_path):
    with serve(tmp_path) as srv:
        games = httpx.get(srv.url + "/api/v1/games", timeout=30).json()
    assert games["house_rules"]["morning-roll"] == {"three_pairs_any": False}
    assert games["house_rules"]["farkle-five"] == {"free_keep": False}
    assert games["house_rules"]["low-high"]["scoring"] == "dice"
    assert set(games["house_rules"]) == set(games["games"])


def test_a_turn_under_a_house_rule_is_scored_and_kept_under_it_over_a_restart(tmp_path):
    with serve(tmp_path) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        plain = c.post("/api/v1/turns", json={"player": "mike"}).json()
        assert plain["rules"] == {}
        assert 2500 not in points_of(roll(c, plain["id"], FOUR_TWOS_AND_A_PAIR))
        r = c.post("/api/v1/turns", json={"player": "tom", "rules": {"three_pairs_any": True}})
        assert r.status_code == 201, r.text
        house = r.json()
        assert house["rules"] == {"three_pairs_any": True}
        turn = roll(c, house["id"], FOUR_TWOS_AND_A_PAIR)
        assert 2500 in points_of(turn)
        best = turn["keeps"][0]  # the advisor, under the same rule, ranks the 2500 first
        assert best["points"] == 2500 and best["expected"] is not None
    with serve(tmp_path) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        again = c.get(f"/api/v1/turns/{house['id']}").json()
        assert again["rules"] == {"three_pairs_any": True} and 2500 in points_of(again)
        r = c.post(f"/api/v1/turns/{house['id']}/keep", json={"dice": FOUR_TWOS_AND_A_PAIR})
        assert r.status_code == 200, r.text
        assert r.json()["turn_points"] == 2500 and r.json()["forced_reroll"]


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"rules": {"free_keep": True}}, "unknown house rule(s) free_keep; valid: three_pairs_any"),
        ({"rules": {"three_pairs_any": "yes"}}, "must be true or false, got 'yes'"),
        ({"game": "greed", "rules": {"three_pairs_any": True}}, "valid: none"),
    ],
)
def test_a_bad_house_rule_is_refused_with_the_valid_ones(tmp_path, body, said):
    with serve(tmp_path) as srv:
        r = httpx.post(srv.url + "/api/v1/turns", json={"player": "heather", **body}, timeout=30)
    assert r.status_code == 422 and said in r.json()["detail"], r.text


def test_the_score_route_takes_house_rules(tmp_path):
    with serve(tmp_path) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        body = {"values": FOUR_TWOS_AND_A_PAIR}
        plain = c.post("/api/v1/score?game=morning-roll", json=body).json()
        house = c.post("/api/v1/score?game=morning-roll&rule=three_pairs_any=true", json=body)
        assert house.status_code == 200, house.text
        assert 2500 not in {k["points"] for k in plain["keeps"]}
        assert 2500 in {k["points"] for k in house.json()["keeps"]}
        r = c.post(
            "/api/v1/score?game=low-high&rule=scoring=pips&rule=cancel=descending",
            json={"values": [1] * 13},
        )
        assert r.status_code == 200, r.text
        for query, said in (
            ("game=morning-roll&rule=three_pairs_any", "expected a house rule as KEY=VALUE"),
            ("game=farkle-five&rule=three_pairs_any=true", "valid: free_keep"),
        ):
            r = c.post(f"/api/v1/score?{query}", json=body)
            assert r.status_code == 422 and said in r.json()["detail"], r.text
        r = c.post("/api/v1/score?game=morning-roll", json={"values": [1] * 7})
        assert r.status_code == 422  # the game is named once
        assert r.json()["detail"].count("morning-roll") == 1, r.json()["detail"]


def test_a_turns_file_of_an_older_dicecam_gets_the_rules_column(tmp_path):
    from service.turn_db import TurnDatabase

    path = tmp_path / "turns.sqlite3"
    with sqlite3.connect(path) as db:  # the table as dicecam wrote it before house rules
        db.execute(
            "CREATE TABLE turns (id VARCHAR(32) PRIMARY KEY, format INTEGER, player VARCHAR(80),"
            " game VARCHAR(40), created FLOAT, updated FLOAT, moves JSON, rolls JSON,"
            " outcome VARCHAR(16), submission JSON, tracker_url TEXT, tracker_token TEXT)"
        )
        db.execute(
            "INSERT INTO turns VALUES ('old1', 1, 'tom', 'morning-roll', 9e9, 9e9, '[]', '[]',"
            " NULL, NULL, NULL, NULL)"
        )
    TurnDatabase(path, tmp_path / "photos")
    with sqlite3.connect(path) as db:
        assert "rules" in {row[1] for row in db.execute("PRAGMA table_info(turns)")}
        assert db.execute("SELECT player, rules FROM turns").fetchall() == [("tom", None)]


def test_many_unknown_house_rules_are_refused_without_naming_them_all(tmp_path):
    """A million unknown rules took seconds and were all named back (9 MB): a body names at
    most 32 (a game has at most 3), and the rules object names five unknown ones at most."""
    many = {f"rule_{i:04}": True for i in range(1000)}
    with serve(tmp_path) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        for path, body in (
            ("/api/v1/turns", {"player": "heather", "rules": many}),
            ("/api/v1/low-high/turns", {"player": "heather", "rules": many}),
        ):
            r = c.post(path, json=body)
            assert r.status_code == 422, r.text
            detail = r.json()["detail"]
            assert "'rules': Dictionary should have at most 32 items" in detail, detail
            assert "rule_0999" not in detail
        seven = {f"rule_{i}": True for i in range(7)}
        r = c.post("/api/v1/turns", json={"player": "heather", "rules": seven})
    assert r.status_code == 422, r.text
    assert r.json()["detail"] == (
        "morning-roll: unknown house rule(s) rule_0, rule_1, rule_2, rule_3, rule_4 and 2 more; "
        "valid: three_pairs_any"
    )
