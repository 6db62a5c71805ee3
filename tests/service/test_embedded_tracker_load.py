"""Many players ending their turns at once with the embedded tracker: the service calls its
own tracker over HTTP from worker threads, and the tracker's routes need worker threads to
answer. Every turn must reach the tracker, none wait in the outbox for a tracker that is up."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import httpx
import pytest

from service.app import create_app
from service.settings import Settings

from dicecam_testing.servers import LiveServer

pytest.importorskip("service.tracker")

PLAYERS = 48
"""More than the 40 worker threads a server's routes share by default."""


def open_timezone() -> str:
    """A fixed-offset zone where it is now between 10:00 and 18:00 (the tracker is open 8-20)."""
    hour = datetime.now(UTC).hour
    offset = next(o for o in range(-12, 15) if 10 <= (hour + o) % 24 <= 18)
    return f"Etc/GMT{-offset:+d}" if offset else "UTC"


@pytest.mark.slow
def test_more_players_banking_at_once_than_worker_threads_are_all_submitted(tmp_path, monkeypatch):
    monkeypatch.setenv("DICECAM_TRACKER_REGISTRATIONS_PER_ADDRESS", "0")
    monkeypatch.setenv("DICECAM_OUTBOX_RETRY_S", "0")  # no retry pass hides a turn left queued
    app = create_app(Settings(data_dir=tmp_path))
    limits = httpx.Limits(max_connections=2 * PLAYERS)
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url, timeout=120, limits=limits) as c:

        def ready(i: int) -> str:
            name, password = f"player{i}", "correct horse"
            player = {"name": name, "password": password, "timezone": open_timezone()}
            assert c.post("/tracker/api/v1/players", json=player).status_code == 201
            login = c.post("/api/v1/tracker/tokens", json={"name": name, "password": password})
            assert login.status_code == 201, login.text
            t = c.post(
                "/api/v1/turns", json={"player": name, "tracker_token": login.json()["token"]}
            )
            turn = t.json()["id"]
            c.post(f"/api/v1/turns/{turn}/rolls", json={"values": [1, 5, 2, 3, 4, 6]})
            assert c.post(f"/api/v1/turns/{turn}/keep", json={"dice": [1, 5]}).status_code == 200
            return turn

        with ThreadPoolExecutor(8) as pool:
            turns = list(pool.map(ready, range(PLAYERS)))
        together = threading.Barrier(PLAYERS)

        def bank(turn: str) -> httpx.Response:
            together.wait()
            return c.post(f"/api/v1/turns/{turn}/bank")

        with ThreadPoolExecutor(PLAYERS) as pool:
            banks = list(pool.map(bank, turns))
        receipts = [b.json()["submission"] for b in banks]
        assert [b.status_code for b in banks] == [200] * PLAYERS
        assert [r["status"] for r in receipts] == ["submitted"] * PLAYERS, [
            r["detail"] for r in receipts if r["status"] != "submitted"
        ][:1]
    assert len({r["turn"]["id"] for r in receipts}) == PLAYERS  # each stored once
