"""A service left running for weeks, a player rolling every morning for years: what a turn
leaves on disk stays in bounds (the outbox keeps a delivered turn without its photos, the
tracker keeps each photo ``DICECAM_KEEP_PHOTOS_DAYS``), nothing that is not delivered yet is
pruned, and hundreds of requests leave no file descriptor, thread or temporary file behind.
The year-long measurement is tests/benchmarks/bench_longevity.py."""

from __future__ import annotations

import base64
import json
import os
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from service.app import create_app
from service.settings import Settings
from service.tracker import create_app as create_tracker_app
from service.tracker_client.outbox import Outbox, OutboxEntry

from .conftest import SettableClock
from dicecam_testing.servers import LiveServer
from dicecam_testing.turns import QueueReader, dice, jpeg
from dicecam_testing.waiting import wait_for

PASSWORD = "correct horse battery"


def service(tmp_path: Path, clock: SettableClock, **tracker: object):
    """The service on ``tmp_path`` with its embedded tracker on ``clock``, read by a
    QueueReader (``srv.reader``), as a real server."""
    reader = QueueReader()
    tracker_app = create_tracker_app(
        f"sqlite:///{tmp_path / 'tracker.sqlite3'}", clock=clock, **tracker
    )
    app = create_app(Settings(data_dir=tmp_path), reader=reader, tracker_app=tracker_app)
    srv = LiveServer(app)
    srv.reader = reader
    return srv


def register(c: httpx.Client, prefix: str = "/tracker") -> str:
    """Register heather on the tracker at ``prefix``; her token."""
    player = {"name": "heather", "password": PASSWORD, "timezone": "UTC"}
    assert c.post(f"{prefix}/api/v1/players", json=player).status_code == 201
    r = c.post(f"{prefix}/api/v1/tokens", json={"name": "heather", "password": PASSWORD})
    return r.json()["token"]


def play_bust_turn(c: httpx.Client, reader: QueueReader, token: str, photos: list[bytes]) -> dict:
    """A Morning Roll turn of ``len(photos)`` photo rolls, keeping a 1 each time, then a die
    off the table: a bust, handed to the tracker."""
    t = c.post("/api/v1/turns", json={"player": "heather", "tracker_token": token}).json()
    for i, photo in enumerate(photos):
        left = t["dice_left"]
        last = i == len(photos) - 1
        reader.rolls.append(dice([2] * (left - 1), off=1) if last else dice([1] + [2] * (left - 1)))
        files = {"photo": ("roll.jpg", photo, "image/jpeg")}
        t = c.post(f"/api/v1/turns/{t['id']}/rolls", files=files).json()
        if not last:
            t = c.post(f"/api/v1/turns/{t['id']}/keep", json={"dice": [1]}).json()
    assert t["over"] and t["bust"], t
    return t


def test_a_delivered_turn_leaves_its_photos_to_the_tracker_alone(tmp_path: Path):
    clock = SettableClock("2027-03-01T09:00:00+00:00")
    srv = service(tmp_path, clock)
    with srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        token = register(c)
        photos = [jpeg(1280, 960) for _ in range(3)]
        sizes = []
        for _ in range(4):
            clock.set(clock.now + timedelta(days=1))
            t = play_bust_turn(c, srv.reader, token, photos)
            assert t["submission"]["status"] == "submitted", t["submission"]
            sizes.append(sum(p.stat().st_size for p in (tmp_path / "outbox").rglob("*.json")))

        # the tracker holds every photo, byte for byte
        turn = t["submission"]["turn"]
        for roll, photo in zip(turn["rolls"], photos, strict=True):
            assert c.get(roll["photo_url"]).content == photo

    # the outbox keeps each turn's record, not a second copy of its photos
    delivered = list((tmp_path / "outbox" / "delivered").glob("*.json"))
    assert len(delivered) == 4
    entry = json.loads(delivered[0].read_text())
    assert entry["result"]["score"] == 0
    for roll, photo in zip(entry["turn"]["rolls"], photos, strict=True):
        assert "photo_jpeg_b64" not in roll
        assert roll["photo_bytes"] == len(photo)
        assert roll["values"] and roll["reading"]["dice"]
    per_turn = (sizes[-1] - sizes[0]) / 3
    assert per_turn < sum(len(p) for p in photos) / 4, sizes  # it held them base64: 4/3 of them
    assert not list((tmp_path / "turn-photos").iterdir())  # handed over: the turn's files gone


def _entry(key: str, state: str, photo: bytes) -> OutboxEntry:
    roll = {"values": [1, 5], "reading": {"dice": []}}
    roll["photo_jpeg_b64"] = base64.b64encode(photo).decode()
    turn = {"player": "heather", "score": 150, "idempotency_key": key, "rolls": [roll]}
    return OutboxEntry(key, "http://127.0.0.1:9/tracker", turn, state=state, result={"id": 7})


def test_older_delivered_entries_lose_their_photos_at_start_and_nothing_else_does(
    tmp_path: Path,
):
    photo = jpeg()
    box = Outbox(tmp_path / "outbox")
    for key, state in (("old", "delivered"), ("waiting", "pending"), ("refused", "rejected")):
        box.write(_entry(key, state, photo))

    srv = service(tmp_path, SettableClock())
    with srv:

        def slimmed() -> bool:
            """the delivered entry was rewritten without its photo"""
            return "photo_jpeg_b64" not in box.find("old").turn["rolls"][0]

        wait_for(slimmed)
    old = box.find("old")
    assert old.state == "delivered" and old.result == {"id": 7}
    assert old.turn["score"] == 150 and old.turn["rolls"][0]["photo_bytes"] == len(photo)
    assert old.turn["rolls"][0]["values"] == [1, 5]
    for key in ("waiting", "refused"):  # not delivered: kept whole, photo and all
        b64 = box.find(key).turn["rolls"][0]["photo_jpeg_b64"]
        assert base64.b64decode(b64) == photo


def _submit(c: httpx.Client, token: str, key: str, photo: bytes) -> dict:
    roll = {"values": [1, 5], "reading": {"dice": [1]}}
    roll["photo_jpeg_b64"] = base64.b64encode(photo).decode()
    body = {"player": "heather", "score": 150, "idempotency_key": key, "rolls": [roll]}
    r = c.post("/api/v1/turns", json=body, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 201, r.text
    return r.json()


def test_a_start_clean_up_runs_once_and_the_passes_every_time(tmp_path: Path):
    from fastapi import FastAPI

    from service.retention import schedule

    ran = {"start": 0, "pass": 0}
    app = FastAPI()

    def once() -> None:
        ran["start"] += 1

    def each() -> None:
        ran["pass"] += 1

    schedule(app, [each], every_s=0.02, at_start=[once])
    with LiveServer(app):
        wait_for(lambda: ran["pass"] >= 4)
    assert ran["start"] == 1, ran


def test_the_tracker_drops_photos_past_the_kept_days_and_keeps_the_turns(tmp_path: Path):
    clock = SettableClock("2027-03-01T09:00:00+00:00")
    tracker = create_tracker_app(
        f"sqlite:///{tmp_path / 'tracker.sqlite3'}",
        clock=clock,
        keep_photos_days=30,
        retention_every_s=0.05,
    )
    photos = [jpeg(), jpeg()]
    with LiveServer(tracker) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        token = register(c, prefix="")
        first = _submit(c, token, "turn-of-day-1", photos[0])
        clock.set("2027-03-21T09:00:00+00:00")
        second = _submit(c, token, "turn-of-day-21", photos[1])
        urls = [t["rolls"][0]["photo_url"] for t in (first, second)]
        time.sleep(0.3)  # a few passes: 20 days on, both photos are kept
        assert [c.get(u).content for u in urls] == photos

        clock.set("2027-03-31T09:00:00+00:00")  # 30 days after the first turn's day: kept
        time.sleep(0.3)
        assert c.get(urls[0]).content == photos[0]

        clock.set("2027-04-01T09:00:00+00:00")  # 31 days after the first turn's day

        def pruned() -> bool:
            """the first turn's photo is gone"""
            return c.get(urls[0]).status_code == 404

        wait_for(pruned)
        assert c.get(urls[1]).content == photos[1]  # 11 days old: kept
        again = c.get(f"/api/v1/turns/{first['id']}").json()
        assert again["score"] == 150 and again["rolls"][0]["photo_url"] is None
        assert again["rolls"][0]["values"] == [1, 5]
        assert again["rolls"][0]["reading"] == {"dice": [1]}


def test_the_embedded_tracker_prunes_at_the_service_start_and_zero_keeps_all(tmp_path: Path):
    clock = SettableClock("2027-03-01T09:00:00+00:00")
    with (
        LiveServer(
            create_tracker_app(f"sqlite:///{tmp_path / 'tracker.sqlite3'}", clock=clock)
        ) as srv,
        httpx.Client(base_url=srv.url, timeout=30) as c,
    ):
        token = register(c, prefix="")
        turn = _submit(c, token, "turn-of-day-1", jpeg())
    path = f"/tracker/api/v1/turns/{turn['id']}/rolls/0/photo.jpg"

    clock.set("2027-06-01T09:00:00+00:00")  # 92 days later
    with service(tmp_path, clock, keep_photos_days=0) as srv:  # 0: kept for good
        time.sleep(0.3)
        assert httpx.get(srv.url + path, timeout=30).status_code == 200
    with service(tmp_path, clock, keep_photos_days=90) as srv:
        wait_for(lambda: httpx.get(srv.url + path, timeout=30).status_code == 404)
        assert (
            httpx.get(f"{srv.url}/tracker/api/v1/turns/{turn['id']}", timeout=30).json()["score"]
            == 150
        )


def test_keep_photos_days_is_read_from_the_environment_and_checked(monkeypatch):
    monkeypatch.setenv("DICECAM_KEEP_PHOTOS_DAYS", "45")
    assert Settings().keep_photos_days == 45
    monkeypatch.setenv("DICECAM_KEEP_PHOTOS_DAYS", "-1")
    with pytest.raises(ValueError, match="keep_photos_days"):
        Settings()
    monkeypatch.delenv("DICECAM_KEEP_PHOTOS_DAYS")
    with pytest.raises(ValueError, match="keep_photos_days of 0 .* got -3"):
        create_tracker_app("sqlite://", keep_photos_days=-3)


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc (Linux)")
def test_hundreds_of_moves_and_reads_leave_no_descriptor_thread_or_temp_file(
    tmp_path: Path, monkeypatch
):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    clock = SettableClock("2027-03-01T09:00:00+00:00")
    data = tmp_path / "data"
    srv = service(data, clock)
    with srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        token = register(c)

        def rounds(n: int) -> None:
            for _ in range(n):  # a day's turn (2 requests, 1 to the tracker), 7 reads
                clock.set(clock.now + timedelta(days=1))
                t = play_bust_turn(c, srv.reader, token, [jpeg()])
                assert t["submission"]["status"] == "submitted"
                for _ in range(7):
                    srv.reader.rolls.append(dice([3, 4]))
                    files = {"photo": ("r.jpg", jpeg(), "image/jpeg")}
                    assert c.post("/api/v1/read", files=files).status_code == 200

        rounds(5)  # warm: the pools, the worker threads, the tracker's connections
        fds, threads = _fds(), threading.active_count()
        rounds(24)  # 240 requests, 24 of them to the tracker
        assert _fds() <= fds + 2, (fds, _fds())
        assert threading.active_count() <= threads + 2, (threads, threading.active_count())
    assert not [p for p in tmp.rglob("*") if p.is_file()]
    assert not list((data / "turn-photos").iterdir())
    assert len(list((data / "outbox" / "delivered").glob("*.json"))) == 5 + 24


def test_wrong_passwords_of_names_tried_long_ago_are_forgotten(tmp_path: Path):
    clock = SettableClock("2027-03-01T09:00:00+00:00")
    tracker = create_tracker_app(  # 300 names from one address: no limit per address
        f"sqlite:///{tmp_path / 'tracker.sqlite3'}", clock=clock, login_failures_per_address=0
    )
    guard = tracker.state.login_guard

    def guess(c: httpx.Client, names: range) -> None:
        for i in names:  # names nobody has: each a wrong password counted
            body = {"name": f"guess{i}", "password": "not it at all"}
            assert c.post("/api/v1/tokens", json=body).status_code == 401

    with LiveServer(tracker) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        guess(c, range(150))
        assert len(guard) == 150  # within the window: each counts
        clock.set("2027-03-01T09:16:00+00:00")  # past the 15 minutes
        guess(c, range(150, 300))
        assert len(guard) <= 150 + 64, len(guard)  # the first 150 forgotten
        assert (
            c.post("/api/v1/tokens", json={"name": "guess299", "password": "x"}).status_code == 401
        )
        for _ in range(3):  # the recent ones still count: the 5th wrong password waits
            c.post("/api/v1/tokens", json={"name": "guess299", "password": "x"})
        assert (
            c.post("/api/v1/tokens", json={"name": "guess299", "password": "x"}).status_code == 429
        )
