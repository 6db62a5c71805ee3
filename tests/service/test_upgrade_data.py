"""A data dir written by an older dicecam opens in this one with nothing lost.

Each test builds the older version's files by hand (raw SQL, JSON), as that version wrote them;
the commit they come from is named beside them. They were checked against the real thing: the
older commits run from a git worktree created the data, this version read it.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from service.app import create_app
from service.settings import Settings

from dicecam_testing.servers import LiveServer, bound_socket

# turns.sqlite3 as dicecam 85bcb0e .. 84773f2 created it (no 'rules' column yet)
TURNS_SCHEMA_01A96AC = """
CREATE TABLE turns (
    id VARCHAR(32) NOT NULL,
    format INTEGER NOT NULL,
    player VARCHAR(80) NOT NULL,
    game VARCHAR(40) NOT NULL,
    created FLOAT NOT NULL,
    updated FLOAT NOT NULL,
    moves JSON NOT NULL,
    rolls JSON NOT NULL,
    outcome VARCHAR(16),
    submission JSON,
    tracker_url TEXT,
    tracker_token TEXT,
    PRIMARY KEY (id)
);
CREATE INDEX ix_turns_created ON turns (created);
"""


def _old_turns_file(path: Path, rows: list[dict]) -> None:
    with sqlite3.connect(path) as db:
        db.executescript(TURNS_SCHEMA_01A96AC)
        for row in rows:
            db.execute(
                "INSERT INTO turns VALUES (:id, 1, :player, :game, :created, :created, :moves, "
                ":rolls, :outcome, :submission, :tracker_url, :tracker_token)",
                {
                    **row,
                    "moves": json.dumps(row["moves"]),
                    "rolls": json.dumps(row["rolls"]),
                    "submission": json.dumps(row["submission"]),
                },
            )
    db.close()


def _tracker_player(data_dir: Path, name: str, zone: str) -> str:
    """A player of the embedded tracker's database in ``data_dir``; returns their token."""
    from service.tracker import create_app as create_tracker_app
    from service.tracker import store
    from service.tracker.schemas import Registration

    app = create_tracker_app(f"sqlite:///{data_dir / 'tracker.sqlite3'}")
    with app.state.sessionmaker() as session:
        now = app.state.clock()
        reg = Registration(name=name, password="hunter2hunter2", timezone=zone)
        token = store.issue_token(session, store.register(session, reg, now), now)
        session.commit()
    app.state.db.dispose()
    return token


def _bindable(host: str) -> bool:
    try:
        with socket.socket() as s:
            s.bind((host, 0))
    except OSError:
        return False
    return True


def _wait_for(get, until, timeout: float = 15.0):
    deadline = time.monotonic() + timeout
    while True:
        value = get()
        if until(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.2)


def test_turn_queued_for_loopback_while_serving_a_lan_address_is_delivered(
    tmp_path: Path, midday_zone: str
) -> None:
    """Before 4ff4b09 ``serve --host 192.168.x.y`` sent the embedded tracker's turns to
    127.0.0.1, where nothing listened: they were queued for that URL, and after an upgrade the
    retries still went there, so they stayed queued for good. Now they reach the tracker."""
    lan = "127.0.0.2"  # another address of this machine; 127.0.0.1 on that port stays closed
    if not _bindable(lan):
        pytest.skip(f"cannot listen on {lan} here")
    data = tmp_path / "data"
    data.mkdir()
    held = bound_socket(host=lan)  # the port stays ours until the server below listens on it
    port = held.getsockname()[1]
    token = _tracker_player(data, "alice", midday_zone)
    old_url = f"http://127.0.0.1:{port}/tracker"
    turn_id, key = "1189f0fa459d", "dicecam-1189f0fa459d"
    detail = f"cannot reach the tracker at {old_url}: [Errno 111] Connection refused"
    # made and queued a minute ago: the tracker takes a turn on the day it was
    # played only, and a fixed date (this entry had 2026-11-26T21:43 UTC) was refused a day on
    queued = datetime.now(UTC) - timedelta(seconds=60)
    _old_turns_file(  # as 01a96ac wrote it (checked: serve --host 192.0.2.2, then a bust)
        data / "turns.sqlite3",
        [
            {
                "id": turn_id,
                "player": "alice",
                "game": "morning-roll",
                "created": queued.timestamp(),
                "moves": [{"op": "roll", "values": [2, 3, 4, 6, 2, 3], "off_table": 0}],
                "rolls": [
                    {"values": [2, 3, 4, 6, 2, 3], "off_table": 0, "missing": 0}
                    | {"source": "typed", "reading": None, "photo": None}
                ],
                "outcome": "bust",
                "submission": {"status": "queued", "detail": detail},
                "tracker_url": old_url,
                "tracker_token": token,
            }
        ],
    )
    pending = data / "outbox" / "pending"
    pending.mkdir(parents=True)
    entry = {  # the outbox entry 01a96ac wrote beside it
        "key": key,
        "base_url": old_url,
        "turn": {
            "player": "alice",
            "game": "morning-roll",
            "score": 0,
            "comment": "",
            "idempotency_key": key,
            "rolls": [{"values": [2, 3, 4, 6, 2, 3], "reading": None}],
        },
        "created_at": queued.isoformat(),
        "attempts": 2,
        "next_attempt_at": time.time() - 1,
        "last_error": detail,
        "result": None,
        "state": "pending",
    }
    (pending / f"{key}.json").write_text(json.dumps(entry))

    settings = Settings(data_dir=data, host=lan, port=port, outbox_retry_s=0.2)
    with held, LiveServer(create_app(settings), host=lan, port=port) as server:
        url = server.url
        turn = _wait_for(
            lambda: httpx.get(f"{url}/api/v1/turns/{turn_id}", timeout=30).json(),
            lambda t: t["submission"]["status"] != "queued",
        )
        assert turn["submission"]["status"] == "submitted", turn["submission"]
        stored = httpx.get(f"{url}/tracker/api/v1/players/alice/turns", timeout=30).json()["turns"]
        assert [t["idempotency_key"] for t in stored] == [key]
    assert not (pending / f"{key}.json").exists()
    assert (data / "outbox" / "delivered" / f"{key}.json").is_file()


def test_tracker_database_of_a_newer_dicecam_is_refused_in_one_line(tmp_path: Path) -> None:
    """A tracker database whose schema a newer dicecam migrated (a revision these migrations
    do not hold) stopped ``dicecam tracker`` and ``serve`` with Alembic's traceback ("Can't
    locate revision"); it is refused in one line that says what to do, and left as it is."""
    import subprocess
    import sys

    from service.tracker import create_app as create_tracker_app

    url = f"sqlite:///{tmp_path / 'tracker.sqlite3'}"
    _tracker_player(tmp_path, "alice", "UTC")
    with sqlite3.connect(tmp_path / "tracker.sqlite3") as db:
        db.execute("UPDATE alembic_version SET version_num = '9999'")
    db.close()
    with pytest.raises(ValueError, match=r"revision 9999, which this dicecam does not know"):
        create_tracker_app(url)
    cli = subprocess.run(
        [sys.executable, "-m", "service.cli", "tracker", "--port", "0", "--database-url", url],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert cli.returncode == 2, cli.stderr
    assert "Traceback" not in cli.stderr and "upgrade dicecam" in cli.stderr
    assert len(cli.stderr.strip().splitlines()) == 1, cli.stderr
    with sqlite3.connect(tmp_path / "tracker.sqlite3") as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [("9999",)]
        assert db.execute("SELECT name FROM players").fetchall() == [("alice",)]
    db.close()
