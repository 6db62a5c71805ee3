"""A finished Morning Roll turn is handed to the tracker once, and only as it was saved: the
passes that hand turns over outside a request (:meth:`service.turn_store.TurnStore.retry_queued`,
:meth:`~service.turn_store.TurnStore.relogin`) take the turn's lock as the move routes do, and a
turn handed over again (its receipt could not be saved) is counted once, through the outbox's
entry and the tracker's idempotency key, both keyed by the turn's id.

A real tracker on a real server, a store on a real SQLite file; a save is made to fail as in
``test_store_saves`` (a database that cannot be written, or whose file can grow no more)."""

from __future__ import annotations

import threading
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.api.submit import TrackerSubmitter
from service.app import create_app
from service.settings import Settings
from service.turn_db import TurnDatabase
from service.turn_store import TurnStore
from service.turns import MORNING_ROLL, TurnError, TurnSession

from dicecam_testing.sqlite_pragmas import FULL, READ_ONLY, full, read_only
from dicecam_testing.turns import QueueReader
from dicecam_testing.waiting import wait_for


class WatchedLock:
    """A turn's lock that says when another thread asks for it while it is held."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.asked = threading.Event()

    def __enter__(self) -> WatchedLock:
        if not self._lock.acquire(blocking=False):
            self.asked.set()
            self._lock.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


BIG = {"note": "x" * 5000}
"""A reading larger than a page of the file: saved, it takes a new one."""


def make_store(data: Path) -> TurnStore:
    """The service's store of turns: its SQLite file, and the real submitter and outbox."""
    submitter = TrackerSubmitter(data / "outbox", retries=0)
    return TurnStore(submitter, database=TurnDatabase(data / "turns.sqlite3", data / "photos"))


def history(http: httpx.Client, player: str) -> list[dict[str, Any]]:
    r = http.get(f"/api/v1/players/{player}/turns")
    assert r.status_code == 200, r.text
    return r.json()["turns"]


def ready_to_bank(store: TurnStore, url: str, token: str | None) -> TurnSession:
    """Ann's Morning Roll turn, a roll played and its three 1s kept (1000), saved."""
    turn = store.start("ann", MORNING_ROLL, tracker_url=url, tracker_token=token)
    assert turn.dice_left == 6
    turn.roll([1, 1, 1, 2, 3, 4])
    turn.keep([1, 1, 1])
    store.save(turn)
    return turn


def finish_as_the_route_does(store: TurnStore, turn: TurnSession) -> None:
    """What a finishing move's route does after the move (``service.api.turns._view``)."""
    if turn.over and turn.submission is None:
        store.save(turn)
    store.finish(turn)
    store.save(turn)


def run_beside(turn: TurnSession, task: Any) -> threading.Thread:
    """Run ``task`` in a thread while the test holds ``turn``'s lock; return once it is done
    or waits for that lock."""
    lock = turn.lock
    assert isinstance(lock, WatchedLock)
    thread = threading.Thread(target=task)
    thread.start()

    def done_or_waiting() -> bool:
        """the pass ended, or asked for the turn's lock"""
        return lock.asked.is_set() or not thread.is_alive()

    wait_for(done_or_waiting, timeout=20)
    return thread


def test_a_bank_undone_by_a_failed_save_is_not_handed_over_by_a_retry_pass(
    tmp_path: Path, sqlite_tracker, join
):
    http, _ = sqlite_tracker
    token = join(http, "ann")["Authorization"].split()[1]
    store = make_store(tmp_path)
    turn = ready_to_bank(store, str(http.base_url), token)
    turn.lock = WatchedLock()
    passes: list[int] = []

    with turn.lock:  # the bank route
        turn.bank()  # the move is made; the outbox's pass comes before it is saved
        retry = run_beside(turn, lambda: passes.append(store.retry_queued()))
        with read_only(store.database), pytest.raises(TurnError, match=READ_ONLY) as failed:
            store.save(turn)
        assert failed.value.status == 503
        assert "its last move was undone" in str(failed.value)
    retry.join(10)
    assert not retry.is_alive()

    now = store.get(turn.id)
    assert now is not turn and not now.over and now.awaiting == "roll-or-bank"  # undone, as said
    assert history(http, "ann") == []  # the tracker never heard of the undone bank
    assert passes == [0]
    assert not list((tmp_path / "outbox").glob("*/*.json"))

    now.roll([5, 2, 3])  # the player plays on, as told: the turn they finish is the one counted
    assert not now.over
    now.keep([5])
    now.bank()
    finish_as_the_route_does(store, now)
    assert now.submission["status"] == "submitted", now.submission
    assert [t["score"] for t in history(http, "ann")] == [now.points] == [1050]
    store.database.dispose()


def test_a_turn_whose_receipt_could_not_be_saved_is_handed_over_again_and_counted_once(
    tmp_path: Path, sqlite_tracker, join
):
    http, _ = sqlite_tracker
    token = join(http, "ann")["Authorization"].split()[1]
    store = make_store(tmp_path)
    turn = ready_to_bank(store, str(http.base_url), token)
    turn.bank()
    store.save(turn)  # the finishing move is saved, then handed over ...
    store.finish(turn)
    assert turn.submission["status"] == "submitted", turn.submission
    with read_only(store.database), pytest.raises(TurnError, match=READ_ONLY):
        store.save(turn)  # ... and its receipt cannot be saved: the file's copy has none
    now = store.get(turn.id)
    assert now is not turn and now.over and now.submission is None
    assert [t["score"] for t in history(http, "ann")] == [1000]

    assert store.retry_queued() == 1  # handed over again: the outbox answers its delivery
    assert now.submission["status"] == "submitted"
    assert now.submission["turn"]["id"] == turn.submission["turn"]["id"]
    store.database.dispose()
    restarted = make_store(tmp_path)
    assert restarted.get(turn.id).submission == now.submission  # saved this time
    assert restarted.retry_queued() == 0
    assert [t["score"] for t in history(http, "ann")] == [1000]  # one turn, counted once
    delivered = list((tmp_path / "outbox" / "delivered").glob("*.json"))
    assert [p.name for p in delivered] == [f"dicecam-{turn.id}.json"]
    restarted.database.dispose()


def test_a_turn_handed_over_again_past_its_outbox_entry_is_still_counted_once(
    tmp_path: Path, sqlite_tracker, join
):
    # The outbox's record lost (another data folder's outbox, a folder cleared by hand): the
    # tracker itself stores a turn id once, and a player's day once.
    http, _ = sqlite_tracker
    token = join(http, "ann")["Authorization"].split()[1]
    store = make_store(tmp_path)
    turn = ready_to_bank(store, str(http.base_url), token)
    turn.bank()
    finish_as_the_route_does(store, turn)
    first = turn.submission["turn"]
    for entry in (tmp_path / "outbox" / "delivered").glob("*.json"):
        entry.unlink()
    turn.submission = None  # as a receipt that could not be saved
    store.finish(turn)
    assert turn.submission["status"] == "submitted", turn.submission
    assert turn.submission["turn"]["id"] == first["id"]  # the tracker's answer for a known key
    assert [t["id"] for t in history(http, "ann")] == [first["id"]]
    store.database.dispose()


def test_a_bank_whose_receipt_could_not_be_saved_answers_the_finished_turn(tmp_path, serve):
    # Through the bank route of a real server: the finishing move is saved and the turn handed
    # over, then the database can no longer be written. The answer is the finished turn, whose
    # receipt says it was not saved; it said 503 'its last move was undone', which was untrue.
    handed: list[str] = []
    unwritable = ExitStack()

    def submitter(turn: TurnSession) -> dict[str, Any]:
        """Takes the turn, then leaves the turns' database unwritable (a full disk)."""
        handed.append(turn.id)
        unwritable.enter_context(read_only(app.state.turns.database))
        return {"status": "submitted", "detail": "stored by the tracker"}

    settings = Settings(data_dir=tmp_path, outbox_retry_s=0)
    app = create_app(settings, reader=QueueReader(), tracker_app=None, submitter=submitter)
    with httpx.Client(base_url=serve(app).url, timeout=30) as http, unwritable:
        url = f"/api/v1/turns/{http.post('/api/v1/turns', json={'player': 'ann'}).json()['id']}"
        http.post(url + "/rolls", json={"values": [1, 1, 1, 2, 3, 4]}).raise_for_status()
        http.post(url + "/keep", json={"dice": [1, 1, 1]}).raise_for_status()
        r = http.post(url + "/bank")
        assert r.status_code == 200, r.text
        view = r.json()
        assert (view["over"], view["outcome"], view["scored"]) == (True, "banked", 1000)
        receipt = view["submission"]
        assert (receipt["status"], receipt["saved"]) == ("submitted", False), receipt
        assert receipt["detail"].startswith(
            "stored by the tracker; the turn is over and saved as it ended, but this receipt "
            "could not be saved"
        ), receipt
        assert "undone" not in r.text
        unwritable.close()
        held = http.get(url).json()  # the bank was saved; its receipt was not
        assert (held["over"], held["outcome"], held["scored"]) == (True, "banked", 1000)
        assert held["submission"] is None
    assert handed == [url.rsplit("/", 1)[1]]


@pytest.mark.parametrize("game", ["greed", "farkle-five"])
def test_a_turn_no_tracker_takes_whose_note_could_not_be_saved_says_nothing_of_a_hand_over(
    game: str, tmp_path, serve
):
    # A Greed or five-dice Farkle turn is not tracked: its receipt only says so. When that note
    # could not be saved, the answer said the service would hand the turn to the tracker again
    # (which it never does for these games), and the page watched for that receipt forever.
    settings = Settings(data_dir=tmp_path, outbox_retry_s=0)
    app = create_app(settings, reader=QueueReader(), tracker_app=None)
    store = app.state.turns
    unwritable = ExitStack()
    finish = store.finish

    def finish_then_fill_the_disk(session: TurnSession) -> None:
        finish(session)
        unwritable.enter_context(read_only(store.database))

    store.finish = finish_then_fill_the_disk
    with httpx.Client(base_url=serve(app).url, timeout=30) as http, unwritable:
        started = http.post("/api/v1/turns", json={"player": "ann", "game": game})
        url = f"/api/v1/turns/{started.json()['id']}"
        http.post(url + "/rolls", json={"values": [1, 1, 1, 2, 3]}).raise_for_status()
        http.post(url + "/keep", json={"dice": [1, 1, 1]}).raise_for_status()
        r = http.post(url + "/bank")
        assert r.status_code == 200, r.text
        view = r.json()
        assert (view["over"], view["outcome"]) == (True, "banked"), view
        assert view["submission"] == {
            "status": "not-submitted",
            "detail": "only Morning Roll turns are tracked",
        }
        unwritable.close()
        held = http.get(url).json()  # the bank was saved
        assert (held["over"], held["outcome"]) == (True, "banked")


def test_a_login_that_waited_on_a_move_undone_by_a_failed_save_goes_to_the_files_copy(
    tmp_path: Path, sqlite_tracker, join
):
    # Ann started her turn before logging in, and logs in from the page while a roll's save
    # fails: the roll is undone (the file's copy takes the turn's place) while the login waits
    # for the turn's lock. The login must land on the copy the store gives now
    # (SessionStore._moving), so the turn she plays on is sent with her token: let go of (or
    # given to the undone copy, whose save is refused), it was lost, and her bank was 'not
    # logged in to the tracker when the turn ended: add it by hand', though she had logged in.
    http, _ = sqlite_tracker
    token = join(http, "ann")["Authorization"].split()[1]
    url = str(http.base_url).rstrip("/")  # as the store keeps it
    store = make_store(tmp_path)
    turn = store.start("ann", MORNING_ROLL, tracker_url=url)
    assert turn.tracker_token is None
    turn.lock = WatchedLock()
    logins: list[int] = []

    with turn.lock:  # the roll route
        turn.roll([1, 1, 1, 2, 3, 4], reading=BIG)
        login = run_beside(turn, lambda: logins.append(store.relogin("ann", url, token, [turn.id])))
        assert turn.lock.asked.is_set()  # the login waits for the roll's lock
        with full(store.database), pytest.raises(TurnError, match=FULL) as failed:
            store.save(turn)  # the file still reads: its copy takes the turn's place
        assert "its last move was undone" in str(failed.value)
    login.join(10)
    assert not login.is_alive() and logins == [0]

    now = store.get(turn.id)
    assert now is not turn and now.rolls == [] and now.tracker_token == token
    store.database.dispose()
    restarted = make_store(tmp_path)  # the token was saved with the file's copy
    now = restarted.get(turn.id)
    assert now.rolls == [] and now.tracker_token == token
    now.roll([1, 1, 1, 5, 2, 3])  # she plays on, as told: the roll again
    now.keep([1, 1, 1, 5])
    now.bank()
    finish_as_the_route_does(restarted, now)
    assert now.submission["status"] == "submitted", now.submission
    assert [t["score"] for t in history(http, "ann")] == [now.points] == [1050]
    restarted.database.dispose()
