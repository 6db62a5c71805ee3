"""A turn's life in the service, from its first photo to the tracker's answer: open turns hold
no photo in memory (they are on disk), day-old turns are swept by an idle server, and a turn
that can no longer count (its tracker down past its day, or an older tracker that cannot be
told its age) ends visibly refused in the outbox, never lost and never counted on another day.
Real servers: the service with its embedded tracker, a tracker of its own."""

from __future__ import annotations

import gc
import io
import struct
import time
import types
from pathlib import Path

import httpx
import numpy as np
import pytest
from PIL import Image

from service.api.server import BackgroundServer
from service.app import create_app
from service.settings import Settings
from service.turn_db import TurnDatabase
from service.turn_store import TurnStore
from service.turns import MORNING_ROLL, TurnError

from .conftest import SettableClock
from dicecam_testing.turns import QueueReader, dice, jpeg


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
    with BackgroundServer(app) as srv, httpx.Client(base_url=srv.url, timeout=60) as c:
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


def wait_for(check, timeout: float = 5.0) -> None:
    """Wait until ``check()`` is true (a background pass), else fail naming it."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"still not true after {timeout} s: {check.__doc__ or check}")
        time.sleep(0.05)


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
    with BackgroundServer(app) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
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
