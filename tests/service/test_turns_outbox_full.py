"""A finished turn whose outbox cannot be written (a full or read-only disk) is not lost: it
keeps its photos, survives a restart, and is handed over again once the outbox can be written.

The outbox folder is blocked by a file of that name, so that creating it fails with an OSError
as a read-only or full disk would, even as root (where chmod stops nothing).
"""

from __future__ import annotations

from pathlib import Path

from service.api.submit import TrackerSubmitter
from service.turn_db import TurnDatabase
from service.turn_store import TurnStore
from service.turns import MORNING_ROLL

PHOTO = b"\xff\xd8\xff\xe0 a roll's photo"


def _store(data: Path) -> TurnStore:
    submitter = TrackerSubmitter(data / "outbox", retries=0)
    return TurnStore(submitter, database=TurnDatabase(data / "turns.sqlite3", data / "photos"))


def test_a_turn_the_outbox_could_not_take_is_kept_and_handed_over_later(
    tmp_path: Path, unused_port: int
):
    (tmp_path / "outbox").write_text("in the way")  # the outbox folder cannot be made
    store = _store(tmp_path)
    turn = store.start(
        "heather", MORNING_ROLL, tracker_url=f"http://127.0.0.1:{unused_port}", tracker_token="t"
    )
    n = turn.dice_left
    turn.roll([2] * (n - 1), off_table=1, photo=PHOTO)  # a die off the table: bust, over
    store.finish(turn)
    store.save(turn)
    assert turn.submission["status"] == "failed"
    assert turn.rolls[0].photo == PHOTO

    # the service restarts; the turn comes back with its photo, still to be handed over
    store.database.dispose()
    store = _store(tmp_path)
    again = store.get(turn.id)
    assert again.submission["status"] == "failed"
    assert again.rolls[0].photo == PHOTO
    assert store.retry_queued() == 0  # the outbox still cannot be written: nothing changes

    (tmp_path / "outbox").unlink()  # room again
    assert store.retry_queued() == 1
    assert again.submission["status"] == "queued"  # the tracker is down: it waits in the outbox
    assert again.rolls[0].photo is None
    assert len(list((tmp_path / "outbox" / "pending").glob("*.json"))) == 1
    store.database.dispose()
    assert _store(tmp_path).get(turn.id).submission["status"] == "queued"


def test_a_turn_saved_finished_but_never_handed_over_is_handed_over_after_a_restart(
    tmp_path: Path, unused_port: int
):
    # The finishing move is saved before the turn goes to the tracker; a process that stops
    # between the two leaves a finished turn with no receipt in the file.
    store = _store(tmp_path)
    turn = store.start(
        "heather", MORNING_ROLL, tracker_url=f"http://127.0.0.1:{unused_port}", tracker_token="t"
    )
    turn.roll([2] * (turn.dice_left - 1), off_table=1, photo=PHOTO)  # a bust: the turn is over
    farkle = store.start("heather", "farkle-five")
    farkle.roll([2, 2, 3, 4, 6])  # a bust of a game the tracker does not keep
    for session in (turn, farkle):
        assert session.over
        store.save(session)  # ... and the process stops here
    store.database.dispose()

    store = _store(tmp_path)
    assert store.get(turn.id).submission is None
    assert store.retry_queued() == 2
    again = store.get(turn.id)
    assert again.submission["status"] == "queued"  # the tracker is down: it waits in the outbox
    assert again.rolls[0].photo is None
    assert len(list((tmp_path / "outbox" / "pending").glob("*.json"))) == 1
    assert store.get(farkle.id).submission["status"] == "not-submitted"
    assert store.retry_queued() == 0  # nothing is handed over twice
    store.database.dispose()
    assert _store(tmp_path).get(turn.id).submission["status"] == "queued"
