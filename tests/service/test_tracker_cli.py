"""``dicecam tracker`` as a standalone server, ``--create-admin``, ``dicecam submit`` and
``dicecam outbox`` as a user runs them (subprocesses, real sockets, the real clock)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from service.tracker_client import TrackerClient

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # each runs `dicecam` subprocesses: a few seconds apiece


def dicecam(*args: str, env: dict, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "service.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )


@pytest.fixture
def env(tmp_path) -> dict:
    return {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "DICECAM_DATA_DIR": str(tmp_path / "data"),
        "DICECAM_TRACKER_ADMIN_PASSWORD": "",
    }


def start_tracker(port: int, db: str, env: dict) -> subprocess.Popen:
    """``dicecam tracker`` in a subprocess; returns once it answers HTTP."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "tracker", "--port", str(port), "--database-url", db],
        env=env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/v1/rounds", timeout=2).status_code == 200:
                return proc
        except httpx.TransportError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"dicecam tracker did not start: {proc.communicate()[1]}")
        time.sleep(0.1)


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(10)


@pytest.fixture
def standalone(tmp_path, env, unused_port):
    db = f"sqlite:///{tmp_path / 'standalone.sqlite3'}"
    proc = start_tracker(unused_port, db, env)
    yield f"http://127.0.0.1:{unused_port}", db
    stop(proc)


def test_standalone_tracker_submit_and_outbox(standalone, env, midday_zone, tmp_path):
    url, db = standalone
    TrackerClient(url, outbox_dir=tmp_path / "ob").register("kenny", "pass-word-1", midday_zone)
    out = dicecam(
        "submit",
        "--url",
        url,
        "--player",
        "kenny",
        "--password",
        "pass-word-1",
        "--score",
        "650",
        "--comment",
        "nice",
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("stored: kenny 650 on ")
    again = dicecam(
        "submit",
        "--url",
        url,
        "--player",
        "kenny",
        "--password",
        "pass-word-1",
        "--score",
        "50",
        env=env,
    )
    assert again.returncode == 1 and "already took a turn" in again.stderr
    listed = dicecam("outbox", "list", "--url", url, env=env)
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert sorted((r["state"], r["score"]) for r in rows) == [("delivered", 650), ("rejected", 50)]
    board = httpx.get(url + "/api/v1/leaderboard", timeout=30).json()["standings"]
    assert [(s["player"], s["total"]) for s in board] == [("kenny", 650)]
    assert "kenny" in httpx.get(url + "/", timeout=30).text

    # a token the tracker refuses (expired, revoked, mistyped): the turn waits in the outbox,
    # and the player logs in to deliver it
    TrackerClient(url, outbox_dir=tmp_path / "ob").register("lena", "pass-word-3", midday_zone)
    out = dicecam("submit", "--url", url, "--player", "lena", "--token", "stale", "--score",
                  "200", env=env)  # fmt: skip
    assert out.returncode == 1 and "queued in the outbox, not delivered" in out.stderr
    assert "--player NAME --password" in out.stderr and "Traceback" not in out.stderr
    half = dicecam("outbox", "deliver", "--url", url, "--player", "lena", env=env)
    assert half.returncode == 2 and "expected --player and --password together" in half.stderr
    done = dicecam("outbox", "deliver", "--url", url, "--player", "lena", "--password",
                   "pass-word-3", env=env)  # fmt: skip
    assert done.returncode == 0 and "delivered 1, rejected 0, still queued 0" in done.stdout
    board = httpx.get(url + "/api/v1/leaderboard", timeout=30).json()["standings"]
    assert sorted((s["player"], s["total"]) for s in board) == [("kenny", 650), ("lena", 200)]


@pytest.mark.parametrize("auth", ["--token", "--password"])
def test_submit_while_tracker_down_then_outbox_deliver(
    auth, tmp_path, env, midday_zone, unused_port
):
    """With --password the login itself cannot reach the tracker: the turn must still be queued
    (it was reported queued and lost)."""
    db = f"sqlite:///{tmp_path / 'standalone.sqlite3'}"
    url = f"http://127.0.0.1:{unused_port}"
    proc = start_tracker(unused_port, db, env)
    client = TrackerClient(url, outbox_dir=tmp_path / "ob")
    client.register("molly", "pass-word-2", midday_zone)
    token = client.login("molly", "pass-word-2")
    stop(proc)  # the tracker goes down

    out = dicecam(
        "submit",
        auth,
        token if auth == "--token" else "pass-word-2",
        "--player",
        "molly",
        "--score",
        "300",
        env={**env, "DICECAM_TRACKER_URL": url},
    )
    assert out.returncode == 1 and "queued in the outbox" in out.stderr
    pending = list((Path(env["DICECAM_DATA_DIR"]) / "outbox" / "pending").glob("*.json"))
    assert len(pending) == 1
    listed = dicecam("outbox", "list", env=env)  # reads the folder: no tracker URL needed
    assert listed.returncode == 0, listed.stderr
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [(r["state"], r["player"], r["score"]) for r in rows] == [("pending", "molly", 300)]

    proc = start_tracker(unused_port, db, env)  # back up
    try:
        done = dicecam("outbox", "deliver", "--url", url, "--token", token, env=env)
        assert done.returncode == 0 and "delivered 1, rejected 0, still queued 0" in done.stdout
        board = httpx.get(url + "/api/v1/leaderboard", timeout=30).json()["standings"]
        assert [(s["player"], s["total"], s["turns"]) for s in board] == [("molly", 300, 1)]
        again = dicecam("outbox", "deliver", "--url", url, "--token", token, env=env)
        assert "delivered 0" in again.stdout
    finally:
        stop(proc)


def test_create_admin_then_correct(tmp_path, env):
    db = f"sqlite:///{tmp_path / 'a.sqlite3'}"
    bad = dicecam(
        "tracker",
        "--database-url",
        db,
        "--create-admin",
        "tom",
        "--timezone",
        "Mars",
        env={**env, "DICECAM_TRACKER_ADMIN_PASSWORD": "long-enough"},
    )
    assert bad.returncode == 2 and "expected an IANA time zone" in bad.stderr
    ok = dicecam(
        "tracker",
        "--database-url",
        db,
        "--create-admin",
        "tom",
        env={**env, "DICECAM_TRACKER_ADMIN_PASSWORD": "long-enough"},
    )
    assert ok.returncode == 0 and "administrator tom ready" in ok.stdout
    import sqlalchemy as sa

    engine = sa.create_engine(db)
    with engine.connect() as conn:
        row = conn.execute(sa.text("SELECT name, is_admin FROM players")).one()
    engine.dispose()
    assert tuple(row) == ("tom", True)


def test_submit_without_url_is_a_usage_error(env):
    out = dicecam("submit", "--player", "x", "--score", "50", env=env)
    assert out.returncode == 2
    assert "expected a tracker URL: --url or DICECAM_TRACKER_URL" in out.stderr
    for score in ("75", "-50"):  # refused before anything is queued for the tracker to refuse
        out = dicecam("submit", "--url", "http://127.0.0.1:9", "--player", "x", "--token", "t",
                      "--score", score, env=env)  # fmt: skip
        assert out.returncode == 2 and "expected a Morning Roll score, 0 or more in steps" in (
            out.stderr
        )
        assert not (Path(env["DICECAM_DATA_DIR"]) / "outbox").exists()
    out = dicecam("tracker", "--database-url", "nonsense://", "--port", "1", env=env)
    assert out.returncode == 2 and "expected a database URL like" in out.stderr
    assert "Traceback" not in out.stderr
    dead = "postgresql+psycopg://nobody@127.0.0.1:9/none?connect_timeout=2"
    out = dicecam("tracker", "--database-url", dead, "--port", "1", env=env)
    assert out.returncode == 2 and "cannot open the tracker database" in out.stderr


def test_create_admin_takes_its_zone_from_the_setting(tmp_path, monkeypatch, capsys):
    """--timezone defaults to DICECAM_TRACKER_ADMIN_TIMEZONE, as the password comes from
    DICECAM_TRACKER_ADMIN_PASSWORD (it made every such administrator a UTC player)."""
    import sqlalchemy as sa

    from service.cli import main

    db = f"sqlite:///{tmp_path / 'a.sqlite3'}"
    monkeypatch.setenv("DICECAM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DICECAM_TRACKER_ADMIN_PASSWORD", "long-enough")
    monkeypatch.setenv("DICECAM_TRACKER_ADMIN_TIMEZONE", "Europe/Paris")
    assert main(["tracker", "--database-url", db, "--create-admin", "tom"]) == 0
    assert (
        main(["tracker", "--database-url", db, "--create-admin", "ann", "--timezone", "UTC"]) == 0
    )
    engine = sa.create_engine(db)
    with engine.connect() as conn:
        zones = dict(conn.execute(sa.text("SELECT name, timezone FROM players")).all())
    engine.dispose()
    assert zones == {"tom": "Europe/Paris", "ann": "UTC"}


def test_deliver_counts_the_turns_it_left_queued(tmp_path, monkeypatch, capsys):
    """A turn left for another tracker is still queued, and the summary counts it (it said
    'still queued 0' above the line naming it)."""
    from service.cli import main
    from service.tracker_client import TurnSubmission

    outbox = tmp_path / "outbox"
    with TrackerClient("http://127.0.0.1:9/old", outbox_dir=outbox) as client:
        client.queue(TurnSubmission(player="tom", score=600))
    monkeypatch.setenv("DICECAM_DATA_DIR", str(tmp_path / "data"))
    args = ["outbox", "deliver", "--url", "http://127.0.0.1:9/new", "--token", "t"]
    assert main([*args, "--outbox-dir", str(outbox)]) == 1
    out = capsys.readouterr()
    assert "delivered 0, rejected 0, still queued 1" in out.out
    assert "queued for the tracker at http://127.0.0.1:9/old" in out.err
