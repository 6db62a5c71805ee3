"""Solitaire Dice sheets and Low-High turns over real HTTP: a whole sheet to its end (S4) scored
as the scoring package scores it, illegal splits refused, photo rolls read as turn rolls are,
Low-High turns in both scoring variants as :class:`scoring.LowHighTurn` plays them."""

from __future__ import annotations

import random

import httpx
import pytest

from scoring import LowHigh, LowHighTurn, SolitaireSheet
from service.app import create_app
from service.settings import Settings

from dicecam_testing.servers import LiveServer
from dicecam_testing.turns import QueueReader, dice, jpeg


def serve(data_dir, reader: QueueReader | None = None) -> LiveServer:
    app = create_app(
        Settings(data_dir=data_dir),
        reader=reader or QueueReader(),
        tracker_app=None,
        submitter=None,
    )
    return LiveServer(app)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    reader = QueueReader()
    with serve(tmp_path_factory.mktemp("data"), reader) as srv:
        srv.reader = reader
        srv.client = httpx.Client(base_url=srv.url, timeout=30)
        yield srv
        srv.client.close()


def post(client: httpx.Client, path: str, status: int = 200, **kw) -> dict:
    r = client.post(path, **kw)
    assert r.status_code == status, r.text
    return r.json()


def new_sheet(client: httpx.Client, player: str = "ann") -> dict:
    return post(client, "/api/v1/sheets", 201, json={"player": player})


def play_sheet(client, sheet_id: str, rng: random.Random, mirror: SolitaireSheet, rolls: int):
    """Roll ``rolls`` times (or to the sheet's end), taking a legal split at random each time,
    and mark the same splits on ``mirror``; returns the last view."""
    view = client.get(f"/api/v1/sheets/{sheet_id}").json()
    for _ in range(rolls):
        if view["over"]:
            break
        values = [rng.randint(1, 6) for _ in range(5)]
        view = post(client, f"/api/v1/sheets/{sheet_id}/rolls", json={"values": values})
        expected = [
            {**o, "score_change": o["score_after"] - mirror.score} for o in mirror.options(values)
        ]
        assert view["awaiting"] == "split" and view["splits"] == expected
        chosen = rng.choice(view["splits"])
        body = {"reject": chosen["reject"], "combos": chosen["combos"]}
        view = post(client, f"/api/v1/sheets/{sheet_id}/split", json=body)
        mirror.apply(values, chosen["reject"], chosen["combos"])
        assert view["score"] == mirror.score == chosen["score_after"]
        assert view["over"] == mirror.finished == chosen["ends_game"]
    return view


def test_a_whole_sheet_to_the_eighth_reject(server):
    c = server.client
    sheet = new_sheet(c)
    assert (sheet["awaiting"], sheet["score"], sheet["splits"]) == ("roll", 0, [])
    mirror = SolitaireSheet()
    view = play_sheet(c, sheet["id"], random.Random(5), mirror, rolls=200)
    assert view["over"] and view["awaiting"] == "nothing" and view["dice_left"] == 0
    assert max(view["rejects"].values()) == 8  # S4: the eighth reject of one face ends it
    assert view["marks"] == {str(k): v for k, v in mirror.marks.items()}
    assert view["rejects"] == {str(k): v for k, v in mirror.rejects.items()}
    assert view["free_rides"] == mirror.free_rides > 0  # S3 came up on the way
    assert len(view["history"]) == view["rolls"] == mirror.turns
    assert c.get(f"/api/v1/sheets/{sheet['id']}").json() == view
    r = c.post(f"/api/v1/sheets/{sheet['id']}/rolls", json={"values": [1, 2, 3, 4, 5]})
    assert r.status_code == 409 and "over" in r.json()["detail"]


def test_illegal_splits_are_refused_and_change_nothing(server):
    c = server.client
    sid = new_sheet(c)["id"]
    url = f"/api/v1/sheets/{sid}"
    r = c.post(f"{url}/split", json={"reject": 1, "combos": [8, 10]})
    assert r.status_code == 409 and "roll the five dice first" in r.json()["detail"]
    post(c, f"{url}/rolls", json={"values": [1, 4, 4, 4, 6]})
    r = c.post(f"{url}/split", json={"reject": 2, "combos": [8, 10]})
    detail = r.json()["detail"]
    assert r.status_code == 422 and "reject 2 with combos [8, 10] is not legal" in detail
    assert "legal: reject 1 combos [8, 10], reject 4 combos [5, 10]" in detail
    for body in (
        {"reject": 1, "combos": [8]},
        {"reject": 7, "combos": [8, 10]},
        {"combos": [8, 10]},
        {"reject": None, "combos": [8, 10]},  # no free ride before three reject faces
    ):
        assert c.post(f"{url}/split", json=body).status_code == 422, body
    r = c.post(f"{url}/rolls", json={"values": [2, 2, 3, 3, 5]})
    assert r.status_code == 409 and "split the last roll [1, 4, 4, 4, 6]" in r.json()["detail"]
    view = c.get(url).json()
    assert (view["score"], view["rolls"], view["awaiting"], view["history"]) == (0, 1, "split", [])
    # three reject faces: a roll showing one must reject it; one showing none is a free ride
    for values, reject, combos in (
        ([1, 4, 4, 4, 6], 1, [8, 10]),
        ([2, 4, 4, 4, 6], 2, [8, 10]),
        ([3, 4, 4, 4, 6], 3, [8, 10]),
    ):
        if values != [1, 4, 4, 4, 6]:
            post(c, f"{url}/rolls", json={"values": values})
        post(c, f"{url}/split", json={"reject": reject, "combos": combos})
    post(c, f"{url}/rolls", json={"values": [3, 4, 4, 5, 6]})
    r = c.post(f"{url}/split", json={"reject": 4, "combos": [8, 11]})
    assert r.status_code == 422 and "legal: reject 3 combos" in r.json()["detail"]
    view = post(c, f"{url}/split?rolls=3", status=409, json={"reject": 3, "combos": [8, 11]})
    assert "expected a move after roll 3, the sheet has had 4" in view["detail"]
    view = post(c, f"{url}/split", json={"reject": 3, "combos": [8, 11]})
    view = post(c, f"{url}/rolls", json={"values": [4, 4, 5, 5, 6]})
    assert all(s["free_ride"] and s["reject"] is None for s in view["splits"])
    view = post(c, f"{url}/split", json={"reject": None, "combos": [8, 10]})
    assert view["free_rides"] == 1 and view["rejects"]["3"] == 2
    assert c.get("/api/v1/sheets/nope").status_code == 404


def test_a_photo_roll_is_read_and_missing_or_off_table_dice_are_refused(server):
    c, reader = server.client, server.reader
    url = f"/api/v1/sheets/{new_sheet(c)['id']}"
    reader.rolls.append(dice([2, 3, 3, 5, 6]))
    view = post(c, f"{url}/rolls", files={"photo": ("roll.jpg", jpeg(), "image/jpeg")})
    assert view["last_roll"]["values"] == [2, 3, 3, 5, 6]
    assert view["last_roll"]["source"] == "photo" and view["reading"]["expected_dice"] == 5
    assert view["splits"] == [
        {**o, "score_change": o["score_after"]} for o in SolitaireSheet().options([2, 3, 3, 5, 6])
    ]
    split = view["splits"][0]  # an offered split says more than a split sent (its score after)
    post(c, f"{url}/split", json={"reject": split["reject"], "combos": split["combos"]})
    reader.rolls.append(dice([1, 1, 2, 6]))
    r = c.post(f"{url}/rolls", files={"photo": ("roll.jpg", jpeg(), "image/jpeg")})
    assert r.status_code == 409, r.text
    assert (r.json()["missing"], r.json()["expected"], r.json()["seen"]) == (1, 5, 4)
    reader.rolls.append(dice([1, 1, 2, 6], off=1))
    r = c.post(f"{url}/rolls", files={"photo": ("roll.jpg", jpeg(), "image/jpeg")})
    assert r.status_code == 422 and "1 die left the table: roll again" in r.json()["detail"]
    form = {"values": "1,1,2,6,6"}  # the photo's values corrected by hand
    reader.rolls.append(dice([1, 1, 2, 6]))
    files = {"photo": ("roll.jpg", jpeg(), "image/jpeg")}
    view = post(c, f"{url}/rolls", files=files, data=form)
    assert view["last_roll"]["values"] == [1, 1, 2, 6, 6] and view["rolls"] == 2


def lowhigh_turn(client, rules: dict, rolls: list[list[int]], keeps: list[int]) -> dict:
    """Play a Low-High turn over HTTP and on :class:`LowHighTurn` with the same moves, then
    end it. Returns the last view, checked against the scoring turn."""
    turn = LowHighTurn(LowHigh(**rules))
    view = post(client, "/api/v1/low-high/turns", 201, json={"player": "tom", "rules": rules})
    url = f"/api/v1/low-high/turns/{view['id']}"
    for values, face in zip(rolls, keeps, strict=True):
        bad_before = len(turn.bad)
        sets = turn.roll(values)
        view = post(client, f"{url}/rolls", json={"values": values})
        assert view["sets"] == sets and view["bad"] == turn.bad
        assert view["last_bad"] == turn.bad[bad_before:]  # this roll's dice that went bad (L1)
        if turn.state == "over":  # L3: every die went bad
            break
        turn.keep(face)
        view = post(client, f"{url}/keep", json={"face": face})
        assert (view["good"], view["score"]) == (turn.good, turn.score)
    if turn.state != "over":
        turn.end()
        view = post(client, f"{url}/end")
    assert (view["good"], view["bad"], view["score"]) == (turn.good, turn.bad, turn.score)
    assert view["over"] and view["awaiting"] == "nothing"
    assert view["scores"] == {
        "dice": LowHigh().turn_score(turn.good, turn.bad),
        "pips": LowHigh(scoring="pips", cancel=turn.rules.cancel).turn_score(turn.good, turn.bad),
    }
    assert client.get(url).json()["score"] == turn.score
    return view


ROLLS = [[1, 1, 1, 1, 2, 4, 4, 4, 5, 5, 5, 5, 6], [1, 1, 2, 3, 3, 4, 4, 5, 6], [1, 2, 3, 5, 6]]


@pytest.mark.parametrize(
    ("rules", "score"),
    [({}, 2), ({"scoring": "pips"}, 10), ({"scoring": "pips", "cancel": "descending"}, 2)],
    ids=["dice", "pips", "pips-descending"],
)
def test_a_low_high_turn_scores_as_the_rules_do(server, rules, score):
    view = lowhigh_turn(server.client, rules, ROLLS, [1, 4, 6])
    assert view["outcome"] == "ended" and view["good"] == [1, 1, 1, 1, 4, 4, 6]
    assert (view["bad"], view["score"]) == ([1, 1, 1, 2, 3], score)  # 7 good, 5 bad


def test_a_low_high_turn_ends_when_every_die_goes_bad_or_none_is_left(server):
    view = lowhigh_turn(server.client, {"scoring": "pips"}, [[5] * 6 + [6] * 7, [1] * 7], [5, 1])
    assert (view["outcome"], view["bad"], view["sets"]) == ("all-bad", [1] * 7, [])
    view = lowhigh_turn(server.client, {}, [[2] * 13], [2])
    assert (view["outcome"], view["score"], view["dice_left"]) == ("no-dice-left", 13, 0)


def test_low_high_moves_out_of_turn_are_refused(server):
    c = server.client
    view = post(c, "/api/v1/low-high/turns", 201, json={"player": "tom"})
    url = f"/api/v1/low-high/turns/{view['id']}"
    assert c.post(f"{url}/end").status_code == 409
    assert c.post(f"{url}/keep", json={"face": 1}).status_code == 409
    r = c.post(f"{url}/rolls", json={"values": [1, 2, 3]})
    assert r.status_code == 422 and "should have 13 dice" in r.json()["detail"]
    post(c, f"{url}/rolls", json={"values": ROLLS[0]})
    r = c.post(f"{url}/keep", json={"face": 3})
    assert (
        r.status_code == 422
        and "expected the face of a set of good dice (1, 2, 4, 5, 6)" in (r.json()["detail"])
    )
    assert c.post(f"{url}/rolls", json={"values": ROLLS[1]}).status_code == 409
    r = c.post(f"{url}/end")
    assert r.status_code == 409 and "keep a set" in r.json()["detail"]
    r = c.post("/api/v1/low-high/turns", json={"player": "tom", "rules": {"scoring": "stones"}})
    assert r.status_code == 422 and "'dice' or 'pips'" in r.json()["detail"]
    assert c.get(f"/api/v1/sheets/{view['id']}").status_code == 404  # not a sheet


def test_sheets_and_low_high_turns_survive_a_restart(tmp_path):
    reader = QueueReader()
    rng, mirror = random.Random(2), SolitaireSheet()
    with serve(tmp_path, reader) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        sheet = new_sheet(c, "jeff")
        play_sheet(c, sheet["id"], rng, mirror, rolls=4)
        reader.rolls.append(dice([6, 6, 5, 1, 2]))
        files = {"photo": ("roll.jpg", jpeg(), "image/jpeg")}
        before = post(c, f"/api/v1/sheets/{sheet['id']}/rolls", files=files)
        del before["reading"]  # only a roll's answer carries it
        rules = {"scoring": "pips", "cancel": "descending"}
        turn = post(c, "/api/v1/low-high/turns", 201, json={"player": "tom", "rules": rules})
        lh = f"/api/v1/low-high/turns/{turn['id']}"
        post(c, f"{lh}/rolls", json={"values": ROLLS[0]})
        post(c, f"{lh}/keep", json={"face": 1})
        lh_before = post(c, f"{lh}/rolls", json={"values": ROLLS[1]})
        del lh_before["reading"]
    assert (tmp_path / "turns.sqlite3").is_file()

    with serve(tmp_path, reader) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        after = c.get(f"/api/v1/sheets/{sheet['id']}").json()
        assert after == before and after["last_roll"]["reading"]["values"] == [6, 6, 5, 1, 2]
        chosen = after["splits"][0]
        mirror.apply([6, 6, 5, 1, 2], chosen["reject"], chosen["combos"])
        sent = {"reject": chosen["reject"], "combos": chosen["combos"]}
        post(c, f"/api/v1/sheets/{sheet['id']}/split", json=sent)
        view = play_sheet(c, sheet["id"], rng, mirror, rolls=200)
        assert view["over"] and view["score"] == mirror.score and view["rolls"] == mirror.turns
        assert c.get(lh).json() == lh_before
        post(c, f"{lh}/keep", json={"face": 4})
        view = post(c, f"{lh}/end")
        good, bad = [1, 1, 1, 1, 4, 4], [1, 1]
        assert (view["good"], view["bad"]) == (good, bad)
        # descending: the two 4s are cancelled first, the four 1s score
        assert view["score"] == LowHigh(**rules).turn_score(good, bad) == 4

    with serve(tmp_path, reader) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        assert c.get(f"/api/v1/sheets/{sheet['id']}").json()["over"]  # finished stays finished
        r = c.post(f"{lh}/rolls", json={"values": [1]})
        assert r.status_code == 409 and "over" in r.json()["detail"]


def test_sheets_older_than_a_day_are_dropped(tmp_path):
    from service.sheet_db import SheetDatabase
    from service.sheet_store import SheetStore

    db = SheetDatabase(tmp_path / "turns.sqlite3")
    store = SheetStore(db)
    fresh = store.start("solitaire-dice", "ann")
    old = store.start("low-high", "jeff")
    old.roll([2] * 13)
    old.created -= 2 * 24 * 3600  # as if the process had been down for two days
    store.save(old)
    db.dispose()

    db = SheetDatabase(tmp_path / "turns.sqlite3")
    store = SheetStore(db)
    assert store.get(fresh.id, "solitaire-dice").player == "ann"
    with pytest.raises(Exception, match="no low-high turn with id"):
        store.get(old.id, "low-high")
    assert oct((tmp_path / "turns.sqlite3").stat().st_mode & 0o777) == "0o600"
    db.dispose()


def test_a_database_that_cannot_be_opened_keeps_sheets_in_memory(tmp_path, caplog):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the database folder should be")
    settings = Settings(data_dir=tmp_path, turns_database=blocker / "turns.sqlite3")
    app = create_app(settings, reader=QueueReader(), tracker_app=None, submitter=None)
    assert "sheets are kept in memory only" in caplog.text
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        sid = new_sheet(c)["id"]
        assert post(c, f"/api/v1/sheets/{sid}/rolls", json={"values": [1, 2, 3, 4, 5]})["splits"]
