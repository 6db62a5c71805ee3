"""A turn's life in the service, from its first photo to the tracker's answer: open turns hold
no photo in memory (they are on disk), day-old turns are swept by an idle server, and a turn
that can no longer count (its tracker down past its day, or an older tracker that cannot be
told its age) ends visibly refused in the outbox, never lost and never counted on another day.
Real servers: the service with its embedded tracker, a tracker of its own."""

from __future__ import annotations

import base64
import gc
import io
import json
import struct
import time
import types
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import numpy as np
import pytest
from fastapi.responses import JSONResponse
from PIL import Image

from service.app import create_app
from service.settings import Settings
from service.tracker import create_app as create_tracker_app
from service.tracker_client import Outbox, TrackerClient, TrackerRejected, TurnSubmission
from service.turn_db import TurnDatabase
from service.turn_store import TurnStore
from service.turns import MORNING_ROLL, TurnError

from .conftest import SettableClock
from dicecam_testing.cli import dicecam
from dicecam_testing.servers import LiveServer
from dicecam_testing.turns import QueueReader, dice, jpeg
from dicecam_testing.waiting import wait_for


def _noise_jpeg() -> bytes:
    buf = io.BytesIO()
    noise = np.random.default_rng(7).integers(0, 256, (1500, 1500, 3), dtype=np.uint8)
    Image.fromarray(noise).save(buf, "JPEG", quality=85)
    return buf.getvalue()


_NOISE = _noise_jpeg()


def big_jpeg(n: int) -> bytes:
    """A distinct JPEG of about 2 MB (noise does not compress): a comment names ``n``."""
    comment = f"big shot {n}".encode()
    return _NOISE[:2] + b"\xff\xfe" + struct.pack(">H", len(comment) + 2) + comment + _NOISE[2:]


def bytes_reachable(root: object) -> int:
    """The size of every bytes object reachable from ``root`` through containers and
    instances (not through classes, modules or functions, which reach everything)."""
    skip = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, str)
    seen: set[int] = set()
    stack, total = [root], 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, skip):
            continue
        seen.add(id(obj))
        if isinstance(obj, (bytes, bytearray, memoryview)):
            total += len(obj)
            continue
        stack.extend(gc.get_referents(obj))
    return total


def test_open_turns_keep_their_photos_on_disk_not_in_memory(tmp_path: Path):
    reader = QueueReader()
    app = create_app(Settings(data_dir=tmp_path), reader=reader, tracker_app=None, submitter=None)
    photos = [big_jpeg(i) for i in range(30)]
    assert min(len(p) for p in photos) > 1_500_000
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url, timeout=60) as c:
        ids = []
        for i, photo in enumerate(photos):  # 30 players roll once and walk away
            t = c.post("/api/v1/turns", json={"player": f"p{i}"}).json()
            reader.rolls.append(dice([1, 2, 3, 4, 6, 6]))
            files = {"photo": ("roll.jpg", photo, "image/jpeg")}
            r = c.post(f"/api/v1/turns/{t['id']}/rolls", files=files)
            assert r.status_code == 200 and r.json()["awaiting"] == "keep", r.text
            ids.append(t["id"])
        store = app.state.turns
        assert len(store._items) == 30
        held = bytes_reachable(store._items)
        assert held < 100_000, f"the open turns hold {held} bytes in memory"
        # each photo is on disk, byte for byte, and read back from there
        on_disk = sorted(p.read_bytes() for p in (tmp_path / "turn-photos").glob("*.photo"))
        assert on_disk == sorted(photos)
        assert [store.get(i).rolls[0].photo for i in ids] == photos


def test_two_stores_on_one_folder_keep_the_first_photo_and_no_stray_file(tmp_path: Path):
    def open_store() -> TurnStore:
        return TurnStore(database=TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos"))

    first = open_store()
    turn_id = first.start("ann", MORNING_ROLL).id
    second = open_store()  # a second dicecam serve on the same folder, holding the same turn
    mine, stale = first.get(turn_id), second.get(turn_id)
    mine.roll([1, 2, 3, 4, 6, 6], photo=b"\xff\xd8\xff the first photo")
    first.save(mine)
    stale.roll([1, 1, 1, 4, 6, 6], photo=b"\xff\xd8\xff the second photo")
    with pytest.raises(TurnError, match="another dicecam") as refused:
        second.save(stale)
    assert refused.value.status == 409
    files = list((tmp_path / "photos").glob("*.photo"))
    assert [f.read_bytes() for f in files] == [b"\xff\xd8\xff the first photo"]
    assert mine.rolls[0].held is None and mine.rolls[0].photo == b"\xff\xd8\xff the first photo"
    assert second.get(turn_id).rolls[0].photo == b"\xff\xd8\xff the first photo"
    for store in (first, second):
        store.database.dispose()


def test_an_idle_server_sweeps_day_old_turns_from_memory_and_disk(tmp_path: Path):
    clock = SettableClock("2027-03-01T09:00:00+00:00")
    reader = QueueReader()
    app = create_app(
        Settings(data_dir=tmp_path),
        reader=reader,
        tracker_app=None,
        submitter=None,
        retention_every_s=0.05,
    )
    store = app.state.turns
    store.clock = lambda: clock().timestamp()
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        old = c.post("/api/v1/turns", json={"player": "ann"}).json()
        reader.rolls.append(dice([1, 2, 3, 4, 6, 6]))
        files = {"photo": ("roll.jpg", jpeg(), "image/jpeg")}
        assert c.post(f"/api/v1/turns/{old['id']}/rolls", files=files).status_code == 200
        clock.set("2027-03-02T08:00:00+00:00")  # 23 hours on: kept
        fresh = c.post("/api/v1/turns", json={"player": "bob"}).json()
        time.sleep(0.3)  # a few passes
        assert c.get(f"/api/v1/turns/{old['id']}").status_code == 200
        assert len(list((tmp_path / "turn-photos").glob("*.photo"))) == 1

        clock.set("2027-03-02T09:30:00+00:00")  # a day and a half hour after ann's turn began

        def swept() -> bool:
            """ann's day-old turn is no longer held"""
            return old["id"] not in store._items

        wait_for(swept)  # no turn started meanwhile: the server sweeps on its own
        assert c.get(f"/api/v1/turns/{old['id']}").status_code == 404
        assert c.get(f"/api/v1/turns/{fresh['id']}").json()["player"] == "bob"
        assert not list((tmp_path / "turn-photos").glob("*.photo"))
        assert [row.id for row in store.database.load(lambda row, _: row, since=0)] == [fresh["id"]]


def outbox_list(folder: Path) -> list[dict]:
    """``dicecam outbox list`` of ``folder``, its JSON lines."""
    run = dicecam("outbox", "list", "--outbox-dir", str(folder))
    assert run.returncode == 0, run.stderr
    return [json.loads(line) for line in run.stdout.splitlines()]


def queued_turn(c: httpx.Client, reader: QueueReader, photo: bytes, token: str = "tok") -> dict:
    """heather's Morning Roll turn, a bust at its first roll, queued: the tracker is down."""
    t = c.post("/api/v1/turns", json={"player": "heather", "tracker_token": token}).json()
    reader.rolls.append(dice([2, 2, 3, 4, 6], off=1))
    files = {"photo": ("roll.jpg", photo, "image/jpeg")}
    t = c.post(f"/api/v1/turns/{t['id']}/rolls", files=files).json()
    assert t["bust"] and t["submission"]["status"] == "queued", t
    return t


def played_hours_ago(box: Outbox, hours: float) -> str:
    """Make the only pending turn as old as if played ``hours`` ago, due now; its key."""
    [entry] = box.entries("pending")
    entry.created_at = (datetime.now(UTC) - timedelta(hours=hours)).isoformat()
    entry.next_attempt_at = 0.0
    box.write(entry)
    return entry.key


def test_a_turn_let_go_of_while_its_tracker_is_down_ends_refused_with_its_photo(
    tmp_path: Path, unused_port: int
):
    clock = SettableClock("2027-03-01T09:00:00+00:00")
    reader = QueueReader()
    settings = Settings(
        data_dir=tmp_path, tracker_url=f"http://127.0.0.1:{unused_port}", outbox_retry_s=0
    )
    app = create_app(settings, reader=reader, tracker_app=None, retention_every_s=0.05)
    app.state.turns.clock = lambda: clock().timestamp()
    box = Outbox(tmp_path / "outbox")
    photo = jpeg()
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        t = queued_turn(c, reader, photo)
        key = played_hours_ago(box, 30)
        time.sleep(0.3)  # passes while the turn is held: the service still tries it itself
        assert box.find(key).state == "pending"
        clock.set("2027-03-02T09:30:00+00:00")  # the turn is let go of, with its token

        def refused() -> bool:
            """the turn moved to rejected/"""
            return box.find(key).state == "rejected"

        wait_for(refused)
        assert c.get(f"/api/v1/turns/{t['id']}").status_code == 404
    entry = box.find(key)
    assert entry.last_error.startswith("not entered: the turn was played 30 hours ago")
    assert "reported day-of" in entry.last_error and "rejected/" in entry.last_error
    roll = entry.turn["rolls"][0]
    assert base64.b64decode(roll["photo_jpeg_b64"]) == photo  # never lost
    assert not list((tmp_path / "outbox" / "pending").iterdir())
    [listed] = outbox_list(tmp_path / "outbox")
    assert listed["state"] == "rejected" and listed["error"] == entry.last_error


def test_a_held_turn_past_its_day_shows_refused_and_never_counts_later(
    tmp_path: Path, unused_port: int, seed_players, serve
):
    clock = SettableClock("2027-03-02T10:00:00+00:00")
    tracker = create_tracker_app(f"sqlite:///{tmp_path / 'tracker.sqlite3'}", clock=clock)
    token = seed_players(tracker, ["heather"])["heather"]["Authorization"][7:]
    reader = QueueReader()
    settings = Settings(
        data_dir=tmp_path / "data",
        tracker_url=f"http://127.0.0.1:{unused_port}",
        outbox_retry_s=0.05,
    )
    app = create_app(settings, reader=reader, tracker_app=None)
    box = Outbox(tmp_path / "data" / "outbox")
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        t = queued_turn(c, reader, jpeg(), token)  # the tracker is down
        played_hours_ago(box, 23)  # and stays down past the turn's day

        def shown() -> bool:
            """the turn's receipt on the page says it was refused"""
            got = c.get(f"/api/v1/turns/{t['id']}").json()["submission"]
            return got["status"] == "rejected"

        wait_for(shown)
        detail = c.get(f"/api/v1/turns/{t['id']}").json()["submission"]["detail"]
        assert "played 23 hours ago" in detail and "reported day-of" in detail
        assert "could not be delivered since (cannot reach the tracker" in detail

        with httpx.Client(base_url=serve(tracker, port=unused_port).url, timeout=30) as tc:  # back
            time.sleep(0.5)  # retry passes
            assert tc.get("/api/v1/players/heather/turns").json()["turns"] == []
    assert [e["state"] for e in outbox_list(tmp_path / "data" / "outbox")] == ["rejected"]
    tracker.state.db.dispose()


def older_tracker(app):
    """``app`` as a tracker older than ``age_s`` answers: a turn naming it is a 422."""

    async def asgi(scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != "/api/v1/turns":
            return await app(scope, receive, send)
        body, more = b"", True
        while more:
            message = await receive()
            body, more = body + message.get("body", b""), message.get("more_body", False)
        if b'"age_s"' in body:
            refusal = JSONResponse({"detail": "age_s: Extra inputs are not permitted"}, 422)
            return await refusal(scope, receive, send)

        async def again():
            return {"type": "http.request", "body": body, "more_body": False}

        return await app(scope, again, send)

    return asgi


def test_an_older_tracker_gets_todays_turn_without_age_s_and_never_yesterdays(
    tmp_path: Path, seed_players, serve
):
    clock = SettableClock("2026-07-04T15:00:00+00:00")  # Chicago: Jul 4 10:00
    tracker = create_tracker_app(f"sqlite:///{tmp_path / 'tracker.sqlite3'}", clock=clock)
    token = seed_players(tracker, ["tom"], tz="America/Chicago")["tom"]["Authorization"][7:]
    url = serve(older_tracker(tracker)).url
    client = TrackerClient(url, token=token, outbox_dir=tmp_path / "outbox", clock=clock, retries=0)
    clock.set("2026-07-03T23:30:00+00:00")  # Jul 3 18:30 in Chicago: played, not delivered
    yesterday = client.queue(TurnSubmission(player="tom", score=2500)).key
    clock.set("2026-07-04T14:00:00+00:00")  # Jul 4 09:00: 14.5 hours on, the next day there
    today = client.queue(TurnSubmission(player="tom", score=600)).key
    clock.set("2026-07-04T15:00:00+00:00")

    report = client.deliver_pending(force=True)
    assert list(report.delivered) == [today] and report.delivered[today]["day"] == "2026-07-04"
    assert report.rejected[yesterday] == (
        "not entered: the turn was played on 2026-07-03 and it is 2026-07-04 now in "
        "America/Chicago; this tracker is older than age_s and cannot be told so, so it would "
        "count the turn on 2026-07-04: it is not sent; scores must be reported day-of (a missed "
        "day is a missed turn), so it is kept in the outbox's rejected/ with its photos"
    )
    turns = httpx.get(f"{url}/api/v1/players/tom/turns", timeout=30).json()["turns"]
    assert [(t["day"], t["score"]) for t in turns] == [("2026-07-04", 600)]
    assert client.outbox.find(yesterday).state == "rejected"
    with pytest.raises(TrackerRejected, match="2026-07-03"):  # settled: never sent again
        client.deliver(yesterday, force=True)
    client.close()
    tracker.state.db.dispose()
