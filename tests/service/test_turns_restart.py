"""Turns survive a restart: a real ``dicecam serve`` process is killed in the middle of a turn,
a new one on the same data dir carries on with it; in-process, a roll's photo and reading come
back too, the finished turn is submitted with its photos, then the photo files are deleted."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from PIL import Image

from service.app import create_app
from service.settings import Settings
from vision import Die

from dicecam_testing.servers import LiveServer, bound_socket
from dicecam_testing.turns import QueueReader

REPO = Path(__file__).resolve().parents[2]


class Serve:
    """``dicecam serve`` as its own process on a free port (held by this process until the
    server answers on it, so that no test process beside takes it meanwhile)."""

    def __init__(self, data_dir: Path) -> None:
        with bound_socket() as held:
            self.port = held.getsockname()[1]
            self._start(data_dir)

    def _start(self, data_dir: Path) -> None:
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "DICECAM_DATA_DIR": str(data_dir), "PYTHONUNBUFFERED": "1"}
        env.pop("DICECAM_TURNS_DATABASE", None)
        cmd = [sys.executable, "-m", "service.cli", "serve", "--port", str(self.port)]
        cmd += ["--data-dir", str(data_dir), "--no-tracker"]
        self.proc = subprocess.Popen(
            cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                out = self.proc.stdout.read().decode(errors="replace")
                raise RuntimeError(f"dicecam serve exited with {self.proc.returncode}: {out}")
            try:
                if httpx.get(self.url + "/api/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError("dicecam serve did not answer within 60 s")
            time.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL: no shutdown of any kind, as in a crash."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self.proc.stdout.close()


@pytest.mark.slow
def test_a_killed_server_loses_no_turn(tmp_path):
    first = Serve(tmp_path)
    try:
        c = httpx.Client(base_url=first.url, timeout=30)
        t = c.post("/api/v1/turns", json={"player": "heather"}).json()
        turn_id = t["id"]
        c.post(f"/api/v1/turns/{turn_id}/rolls", json={"values": [1, 2, 2, 3, 5, 6]})
        t = c.post(f"/api/v1/turns/{turn_id}/keep", json={"dice": [1]}).json()
        t = c.post(f"/api/v1/turns/{turn_id}/rolls", json={"values": [1, 4, 4, 4, 6]}).json()
        assert t["awaiting"] == "keep"
        other = c.post("/api/v1/turns", json={"player": "tom", "game": "greed"}).json()
        c.close()
    finally:
        first.kill()
    assert (tmp_path / "turns.sqlite3").is_file()

    second = Serve(tmp_path)
    try:
        c = httpx.Client(base_url=second.url, timeout=30)
        t = c.get(f"/api/v1/turns/{turn_id}").json()
        assert (t["player"], t["state"], t["turn_points"], t["dice_left"]) == (
            "heather",
            "awaiting_keep",
            100,
            5,
        )
        assert t["last_roll"]["values"] == [1, 4, 4, 4, 6] and t["rolls"] == 2
        assert [k["dice"] for k in t["keeps"]][:1] == [[1, 4, 4, 4]]  # advice works again
        t = c.post(f"/api/v1/turns/{turn_id}/keep", json={"dice": [1, 4, 4, 4]}).json()
        assert t["turn_points"] == 600
        t = c.post(f"/api/v1/turns/{turn_id}/bank").json()
        assert (t["outcome"], t["turn_points"], len(t["history"])) == ("banked", 600, 2)
        assert t["submission"]["status"] == "not-submitted"
        assert c.get(f"/api/v1/turns/{other['id']}").json()["game"] == "greed"
        c.close()
    finally:
        second.kill()

    third = Serve(tmp_path)  # a finished turn stays finished
    try:
        t = httpx.get(f"{third.url}/api/v1/turns/{turn_id}", timeout=30).json()
        assert (t["outcome"], t["turn_points"], t["awaiting"]) == ("banked", 600, "nothing")
        r = httpx.post(
            f"{third.url}/api/v1/turns/{turn_id}/rolls", json={"values": [1]}, timeout=30
        )
        assert r.status_code == 409 and "over" in r.json()["detail"]
    finally:
        third.kill()


def jpeg(n: int) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (320, 240), (30, 100, 50)).save(buf, "JPEG", comment=f"shot {n}")
    return buf.getvalue()


def test_photos_and_readings_come_back_and_are_submitted(tmp_path):
    sent: list[list[bytes | None]] = []

    def submitter(session) -> dict:
        sent.append([r.photo for r in session.rolls])
        return {"status": "submitted"}

    reader = QueueReader()
    photo = jpeg(1)
    app = create_app(Settings(data_dir=tmp_path), reader=reader, tracker_app=None, submitter=None)
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        t = c.post("/api/v1/turns", json={"player": "mike"}).json()
        reader.rolls.append(
            [
                Die(v, (10 + 50 * i, 10, 50 + 50 * i, 50), 0.9)
                for i, v in enumerate([1, 1, 1, 2, 3, 4])
            ]
        )
        r = c.post(
            f"/api/v1/turns/{t['id']}/rolls", files={"photo": ("roll.jpg", photo, "image/jpeg")}
        )
        assert r.status_code == 200, r.text
    photos = list((tmp_path / "turn-photos").glob("*.photo"))
    assert [p.read_bytes() for p in photos] == [photo]  # out of the database, beside it

    app = create_app(
        Settings(data_dir=tmp_path), reader=reader, tracker_app=None, submitter=submitter
    )
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        t = c.get(f"/api/v1/turns/{t['id']}").json()
        assert t["last_roll"]["source"] == "photo"
        assert t["last_roll"]["reading"]["values"] == [1, 1, 1, 2, 3, 4]
        t = c.post(f"/api/v1/turns/{t['id']}/keep", json={"dice": [1, 1, 1]}).json()
        t = c.post(f"/api/v1/turns/{t['id']}/bank").json()
        assert t["outcome"] == "banked" and t["submission"] == {"status": "submitted"}
    assert sent == [[photo]]  # the tracker got the photo taken before the restart
    assert not list((tmp_path / "turn-photos").glob("*.photo"))  # then it was let go of


def test_turns_older_than_a_day_are_not_reloaded(tmp_path):
    from service.turn_db import TurnDatabase
    from service.turn_store import TurnStore

    db = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos")
    store = TurnStore(database=db)
    fresh = store.start("ann", "morning-roll")
    old = store.start("jeff", "morning-roll")
    old.roll([2, 2, 3, 4, 6, 6], photo=b"\xff\xd8\xffjpeg")
    old.created -= 2 * 24 * 3600  # as if the process had been down for two days
    store.save(old)
    assert len(list((tmp_path / "photos").glob("*.photo"))) == 1
    db.dispose()

    db = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos")
    store = TurnStore(database=db)
    assert store.get(fresh.id).player == "ann"
    with pytest.raises(Exception, match="no turn with id"):
        store.get(old.id)
    assert not list((tmp_path / "photos").glob("*.photo"))
    assert oct((tmp_path / "turns.sqlite3").stat().st_mode & 0o777) == "0o600"
    db.dispose()


def test_a_database_that_cannot_be_opened_keeps_turns_in_memory(tmp_path, caplog):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the database folder should be")
    settings = Settings(data_dir=tmp_path, turns_database=blocker / "turns.sqlite3")
    app = create_app(settings, reader=QueueReader(), tracker_app=None, submitter=None)
    assert "turns are kept in memory only" in caplog.text
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        t = c.post("/api/v1/turns", json={"player": "ann"}).json()
        r = c.post(f"/api/v1/turns/{t['id']}/rolls", json={"values": [1, 2, 2, 3, 4, 6]})
        assert r.status_code == 200 and r.json()["awaiting"] == "keep"
