"""The turn and sheet databases on one file, at the database level (service.game_db holds what
they share): a stale copy's save is refused in the same words, rows are listed and deleted by id
and by start time, each kind only its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.sheet_db import SheetDatabase
from service.sheets import SheetSession
from service.turn_db import TurnConflict, TurnDatabase
from service.turn_store import TurnStore
from service.turns import MORNING_ROLL


def test_a_stale_sheet_is_refused_and_the_file_keeps_the_moves_it_had(tmp_path: Path):
    db = SheetDatabase(tmp_path / "turns.sqlite3")
    sheet = SheetSession("ann")
    sheet.roll([1, 4, 4, 4, 6])
    sheet.split(1, [8, 10])
    db.save(sheet)
    stale = SheetSession("ann", id=sheet.id, created=sheet.created)
    stale.roll([2, 2, 3, 3, 5])
    with pytest.raises(TurnConflict) as refused:
        db.save(stale)
    assert str(refused.value) == (
        f"solitaire-dice {sheet.id} was moved by another dicecam on the same data folder "
        "(the file holds 2 moves, roll, split; this copy played roll)"
    )
    rows = db.load(lambda row: row, since=0)
    assert [(r.id, [m["op"] for m in r.moves]) for r in rows] == [(sheet.id, ["roll", "split"])]
    assert rows[0].moves[0]["values"] == [1, 4, 4, 4, 6]
    db.dispose()


def test_a_stale_turn_is_refused_in_the_same_words(tmp_path: Path):
    db = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos")
    played = TurnStore(database=db).start("ann", MORNING_ROLL)
    played.roll([1, 2, 3, 4, 6, 6])
    played.keep([1])
    db.save(played)
    stale = TurnStore().start("ann", MORNING_ROLL)  # the turn as another dicecam held it
    stale.id = played.id
    stale.roll([1, 1, 1, 4, 6, 6])
    with pytest.raises(TurnConflict) as refused:
        db.save(stale)
    assert str(refused.value) == (
        f"turn {played.id} was moved by another dicecam on the same data folder "
        "(the file holds 2 moves, roll, keep; this copy played roll)"
    )
    assert [m["op"] for m in db.load(lambda row, photos: row, since=0)[0].moves] == [
        "roll",
        "keep",
    ]
    db.dispose()


def test_rows_are_listed_and_deleted_by_id_and_start_each_table_its_own(tmp_path: Path):
    sheets = SheetDatabase(tmp_path / "turns.sqlite3")
    turns = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos")
    games = [SheetSession(p, created=t) for p, t in (("ann", 100.0), ("bo", 200.0), ("cy", 300.0))]
    for game in games:
        sheets.save(game)
    store = TurnStore(database=turns)
    turn = store.start("di", MORNING_ROLL)
    assert set(sheets.players(since=150)) == {(games[1].id, "bo"), (games[2].id, "cy")}
    assert sheets.recent(since=0, limit=2) == [games[2].id, games[1].id]
    assert sheets.recent(since=0, limit=-1) == []
    assert turns.players(since=0) == [(turn.id, "di")]
    assert turns.recent(since=0, limit=5) == [turn.id]
    sheets.delete([games[2].id], before=150)
    assert [g.id for g in sheets.load(lambda row: row, since=0)] == [games[1].id]
    assert [g.id for g in sheets.load(lambda row: row, since=0, ids=[games[0].id])] == []
    assert turns.recent(since=0, limit=5) == [turn.id]  # another table: untouched
    for db in (sheets, turns):
        db.dispose()


def test_a_copy_that_lags_behind_the_file_is_refused(tmp_path: Path):
    db = SheetDatabase(tmp_path / "turns.sqlite3")
    sheet = SheetSession("ann")
    sheet.roll([1, 4, 4, 4, 6])
    db.save(sheet)
    behind = SheetSession("ann", id=sheet.id, created=sheet.created)
    behind.roll([1, 4, 4, 4, 6])  # the same first move: a copy read before the split
    sheet.split(1, [8, 10])
    db.save(sheet)
    with pytest.raises(
        TurnConflict, match="the file holds 2 moves, roll, split; this copy played roll"
    ):
        db.save(behind)
    rows = db.load(lambda row: row, since=0)
    assert [m["op"] for m in rows[0].moves] == ["roll", "split"]
    db.dispose()


def test_moves_an_older_dicecam_wrote_without_the_newer_fields_are_played_on(tmp_path: Path):
    import json
    import sqlite3

    path = tmp_path / "turns.sqlite3"
    db = TurnDatabase(path, tmp_path / "photos")
    played = TurnStore(database=db).start("ann", MORNING_ROLL)
    played.roll([1, 2, 3, 4, 6, 6])
    played.keep([1])
    db.save(played)
    db.dispose()
    old = [  # as a dicecam before 'missing' and with no forced_reroll wrote them
        {"op": "roll", "values": [1, 2, 3, 4, 6, 6], "off_table": 0},
        {"op": "keep", "dice": [1]},
    ]
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE turns SET moves = ? WHERE id = ?", (json.dumps(old), played.id))
    raw.close()
    db = TurnDatabase(path, tmp_path / "photos")
    store = TurnStore(database=db)
    turn = store.get(played.id)
    turn.roll([5, 2, 3, 4, 6])
    db.save(turn)  # the file's moves start this copy's: no conflict
    moves = db.load(lambda row, photos: row, since=0)[0].moves
    assert [m["op"] for m in moves] == ["roll", "keep", "roll"]
    db.dispose()


def test_rows_of_another_layout_are_not_loaded(tmp_path: Path):
    import sqlite3

    path = tmp_path / "turns.sqlite3"
    db = SheetDatabase(path)
    newer, ours = SheetSession("ann", created=100.0), SheetSession("bo", created=200.0)
    for sheet in (newer, ours):
        sheet.roll([1, 4, 4, 4, 6])
        db.save(sheet)
    with sqlite3.connect(path) as raw:  # as a newer dicecam, of another layout, wrote it
        raw.execute("UPDATE roll_games SET format = 2 WHERE id = ?", (newer.id,))
    raw.close()
    assert [r.id for r in db.load(lambda row: row, since=0)] == [ours.id]
    assert db.recent(since=0, limit=5) == [ours.id]
    db.dispose()


def test_delete_before_keeps_a_row_started_at_that_very_instant(tmp_path: Path):
    db = SheetDatabase(tmp_path / "turns.sqlite3")
    games = [SheetSession(p, created=t) for p, t in (("ann", 199.5), ("bo", 200.0))]
    for game in games:
        db.save(game)
    db.delete(before=200.0)
    assert [g.id for g in db.load(lambda row: row, since=0)] == [games[1].id]
    db.dispose()


def test_a_turn_below_the_entry_score_is_read_back_so(tmp_path: Path):
    db = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos")
    turn = TurnStore(database=db).start("ann", "greed", on_board=False)  # G3: entry 1000
    turn.roll([1, 5, 2, 3, 4])
    db.save(turn)
    back = TurnStore(database=db).get(turn.id)  # as after a restart
    assert back.on_board is False
    back.keep([1, 5])
    back.bank()
    assert (back.points, back.scored) == (150, 0)  # below the entry score: banks nothing
    db.dispose()
