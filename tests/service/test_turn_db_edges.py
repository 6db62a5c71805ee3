"""The turn database at its edges (:mod:`service.turn_db`): a roll's photo on disk readable by
its owner only, and what a save, a load and a start leave of the photo files."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest

from service.turn_db import TurnDatabase
from service.turn_store import TurnStore
from service.turns import MORNING_ROLL, TurnError, TurnSession

from dicecam_testing.sqlite_pragmas import READ_ONLY, read_only

PHOTO = b"\xff\xd8\xff ann's roll"


def test_a_rolls_photo_is_saved_readable_by_its_owner_only(tmp_path: Path):
    db = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos")
    store = TurnStore(database=db)
    turn = store.start("ann", "greed", tracker_token="ann-token")
    turn.roll([1, 3, 4, 6, 2], photo=PHOTO)
    store.save(turn)
    (path,) = db.photo_dir.glob(f"{turn.id}-0-*.photo")
    assert path.read_bytes() == PHOTO
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # a player's photo: no other user's
    db.dispose()


def test_a_roll_typed_in_after_one_with_a_photo_leaves_that_photo_on_disk(tmp_path: Path):
    db = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos")
    store = TurnStore(database=db)
    turn = store.start("ann", "greed")
    turn.roll([1, 1, 1, 2, 3], photo=PHOTO)
    store.save(turn)
    turn.keep([1, 1, 1])
    store.save(turn)
    turn.roll([5, 2])  # typed in: no photo of its own
    store.save(turn)
    assert [p.read_bytes() for p in db.photo_dir.glob(f"{turn.id}-*.photo")] == [PHOTO]
    again = TurnStore(database=TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos"))
    assert [r.photo for r in again.get(turn.id).rolls] == [PHOTO, None]
    again.database.dispose()
    db.dispose()


def taking(session: TurnSession) -> dict[str, Any]:
    """A tracker that is up: it takes the turn (and its photos) handed over."""
    return {"status": "submitted", "turn": {"id": 1}}


def test_a_hand_over_whose_save_fails_leaves_the_files_copy_its_photo(tmp_path: Path):
    db = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos")
    store = TurnStore(taking, database=db)
    turn = store.start("ann", MORNING_ROLL)
    turn.roll([2, 2, 3, 4, 6, 6], photo=PHOTO)  # no scoring die: bust, over
    store.save(turn)
    store.finish(turn)  # handed over: the turn lets go of its photo
    assert turn.submission is not None and not turn.rolls[0].has_photo
    with read_only(db), pytest.raises(TurnError, match=READ_ONLY) as failed:
        store.save(turn)
    assert failed.value.status == 503
    again = store.get(turn.id)  # the file's copy: not handed over, its photo still to send
    assert again.submission is None
    assert [r.photo for r in again.rolls] == [PHOTO]
    db.dispose()


def test_a_row_that_cannot_be_played_again_is_skipped_and_the_others_load(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    from sqlalchemy import update

    from service.turn_db import TurnRow

    db = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos")
    store = TurnStore(database=db)
    bad, good = store.start("ann", "greed"), store.start("bob", "greed")
    good.roll([1, 1, 1, 2, 3])
    store.save(good)
    with db.engine.begin() as c:  # a game this dicecam does not know (a newer one wrote it)
        c.execute(update(TurnRow).where(TurnRow.id == bad.id).values(game="yacht"))
    restarted = TurnStore(database=TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos"))
    assert restarted.get(good.id).rolls[0].values == [1, 1, 1, 2, 3]
    with pytest.raises(TurnError) as gone:
        restarted.get(bad.id)
    assert gone.value.status == 404
    assert f"turn {bad.id} could not be restored and is skipped" in caplog.text
    restarted.database.dispose()
    db.dispose()


def test_a_finished_turn_of_another_layout_is_not_listed_as_finished(tmp_path: Path):
    from sqlalchemy import update

    from service.turn_db import FORMAT, TurnRow

    db = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos")
    store = TurnStore(database=db)
    ours, newer = store.start("ann", MORNING_ROLL), store.start("bob", MORNING_ROLL)
    for turn in (ours, newer):
        turn.roll([2, 2, 3, 4, 6, 6])  # bust: finished, never handed over
        store.save(turn)
    with db.engine.begin() as c:  # written by a newer dicecam: not loaded, so not pending
        c.execute(update(TurnRow).where(TurnRow.id == newer.id).values(format=FORMAT + 1))
    assert [turn_id for turn_id, _ in db.finished(since=0)] == [ours.id]
    restarted = TurnStore(max_turns=1, database=db)  # its one place: the unsent turn it loads
    assert list(restarted._items) == [ours.id]
    db.dispose()
