"""The client's on-disk outbox: nothing lost when the tracker is down or the client is killed."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

from service.tracker import create_app
from service.tracker_client import (
    Outbox,
    OutboxEntry,
    RollEvidence,
    TrackerAuthError,
    TrackerClient,
    TrackerRejected,
    TrackerUnavailable,
    TurnSubmission,
)

REPO = Path(__file__).resolve().parents[2]
JPEG = b"\xff\xd8\xff\xe0" + bytes(200) + b"\xff\xd9"


def stored_turns(database_url: str, key: str | None = None) -> int:
    engine = sa.create_engine(database_url)
    with engine.connect() as conn:
        sql = "SELECT count(*) FROM turns" + (" WHERE idempotency_key = :k" if key else "")
        n = conn.execute(sa.text(sql), {"k": key} if key else {}).scalar_one()
    engine.dispose()
    return n


@pytest.fixture
def app(sqlite_url, clock):
    app = create_app(sqlite_url, clock=clock)
    yield app
    app.state.db.dispose()


def test_submit_stores_turn_with_evidence_and_records_delivery(app, serve, seed_players, tmp_path):
    auth = seed_players(app, ["heather"])["heather"]
    server = serve(app)
    client = TrackerClient(server.url, token=auth["Authorization"][7:], outbox_dir=tmp_path / "ob")
    turn = TurnSubmission(
        player="heather",
        score=600,
        comment="two rolls",
        rolls=[
            RollEvidence(values=[1, 2, 2, 3, 5, 6], reading={"width": 640}, photo=JPEG),
            RollEvidence(values=[1, 4, 4, 4, 6]),
        ],
    )
    result = client.submit_turn(turn)
    assert (result["player"], result["score"], len(result["rolls"])) == ("heather", 600, 2)
    photo = httpx.get(
        f"http://127.0.0.1:{server.port}{result['rolls'][0]['photo_url']}", timeout=30
    )
    assert photo.content == JPEG
    assert client.outbox.counts() == {"pending": 0, "delivered": 1, "rejected": 0}
    done = client.outbox.find(turn.idempotency_key)
    assert done.state == "delivered" and done.result["id"] == result["id"]
    # Submitting the same turn object again answers from the outbox, no second turn.
    assert client.submit_turn(turn)["id"] == result["id"]
    client.close()


def test_tracker_down_then_back_delivers_exactly_once(
    app, serve, seed_players, tmp_path, sqlite_url, unused_port
):
    token = seed_players(app, ["mike"])["mike"]["Authorization"][7:]
    url = f"http://127.0.0.1:{unused_port}"
    client = TrackerClient(url, token=token, outbox_dir=tmp_path, retries=2, backoff=0.01)
    turn = TurnSubmission(player="mike", score=500)
    with pytest.raises(TrackerUnavailable, match="cannot reach the tracker"):
        client.submit_turn(turn)
    waiting = client.outbox.find(turn.idempotency_key)
    assert waiting.state == "pending" and waiting.attempts == 3
    assert client.deliver_pending().pending == [turn.idempotency_key]  # backing off: not due

    serve(app, port=unused_port)
    # A fresh client (as after a restart) finds the turn on disk and delivers it.
    later = TrackerClient(url, token=token, outbox_dir=tmp_path)
    report = later.deliver_pending(force=True)
    assert list(report.delivered) == [turn.idempotency_key] and not report.pending
    assert later.deliver_pending(force=True).delivered == {}
    assert stored_turns(sqlite_url) == 1
    assert later.outbox.counts() == {"pending": 0, "delivered": 1, "rejected": 0}
    client.close()
    later.close()


def test_rejected_turn_is_kept_with_the_reason(app, serve, seed_players, tmp_path):
    auths = seed_players(app, ["tom"])
    client = TrackerClient(
        serve(app).url, token=auths["tom"]["Authorization"][7:], outbox_dir=tmp_path
    )
    client.submit_turn(TurnSubmission(player="tom", score=100))
    second = TurnSubmission(player="tom", score=2500, comment="lucky")
    with pytest.raises(TrackerRejected, match="already took a turn") as info:
        client.submit_turn(second)
    assert info.value.status == 409
    kept = client.outbox.find(second.idempotency_key)
    assert kept.state == "rejected" and "one turn per player per day" in kept.last_error
    assert kept.turn["comment"] == "lucky"
    assert client.outbox.counts() == {"pending": 0, "delivered": 1, "rejected": 1}
    client.close()


def test_bad_token_keeps_the_turn_pending(app, serve, tmp_path):
    client = TrackerClient(serve(app).url, token="not-a-token", outbox_dir=tmp_path)
    turn = TurnSubmission(player="tom", score=100)
    with pytest.raises(TrackerAuthError, match="unknown or revoked token"):
        client.submit_turn(turn)
    assert client.outbox.find(turn.idempotency_key).state == "pending"
    client.close()


def queue_offline(tmp_path, unused_port, *turns: TurnSubmission) -> str:
    """Queue ``turns`` in the outbox at ``tmp_path`` for a tracker nobody answers; its URL.
    Their next try is a minute or more away (not the default half second or so, which a slow
    machine can let pass before the test looks)."""
    url = f"http://127.0.0.1:{unused_port}"
    with TrackerClient(url, token="t", outbox_dir=tmp_path, retries=0, backoff=120) as offline:
        for turn in turns:
            with pytest.raises(TrackerUnavailable):
                offline.submit_turn(turn)
    return url


def test_one_players_token_leaves_the_others_turns_queued(
    app, serve, seed_players, tmp_path, unused_port
):
    """A token delivers its own player's turns; another player's stay queued for their own
    token (they were moved to rejected/ for good, out of every later delivery)."""
    auths = seed_players(app, ["gail", "hank"])
    gail, hank = TurnSubmission(player="gail", score=300), TurnSubmission(player="Hank", score=50)
    queue_offline(tmp_path, unused_port, gail, hank)
    serve(app, port=unused_port)
    url = f"http://127.0.0.1:{unused_port}"
    with TrackerClient(url, token=auths["gail"]["Authorization"][7:], outbox_dir=tmp_path) as c:
        report = c.deliver_pending(force=True)
    assert list(report.delivered) == [gail.idempotency_key] and not report.rejected
    assert report.other_players == {hank.idempotency_key: "Hank"}
    assert [e.key for e in c.outbox.entries("pending")] == [hank.idempotency_key]
    with TrackerClient(url, token=auths["hank"]["Authorization"][7:], outbox_dir=tmp_path) as c:
        report = c.deliver_pending(force=True)
    assert list(report.delivered) == [hank.idempotency_key] and not report.other_players
    assert c.outbox.counts() == {"pending": 0, "delivered": 2, "rejected": 0}


def test_turns_queued_for_another_tracker_are_named_or_retargeted(
    app, serve, seed_players, tmp_path, unused_port
):
    token = seed_players(app, ["ivy"])["ivy"]["Authorization"][7:]
    turn = TurnSubmission(player="ivy", score=400)
    wrong = queue_offline(tmp_path, unused_port, turn)  # queued for a mistyped tracker URL
    client = TrackerClient(serve(app).url, token=token, outbox_dir=tmp_path)
    report = client.deliver_pending(force=True)
    assert report.other_trackers == {turn.idempotency_key: wrong} and not report.delivered
    report = client.deliver_pending(force=True, retarget=True)
    assert list(report.delivered) == [turn.idempotency_key] and not report.other_trackers
    assert client.outbox.find(turn.idempotency_key).base_url == client.base_url
    client.close()


def test_deliver_one_turn_by_key(app, serve, seed_players, tmp_path, unused_port):
    token = seed_players(app, ["jo"])["jo"]["Authorization"][7:]
    turn = TurnSubmission(player="jo", score=100)
    queue_offline(tmp_path, unused_port, turn)
    serve(app, port=unused_port)
    client = TrackerClient(f"http://127.0.0.1:{unused_port}", token=token, outbox_dir=tmp_path)
    assert client.deliver(turn.idempotency_key) is None  # backing off: not due yet
    stored = client.deliver(turn.idempotency_key, force=True)
    assert stored["score"] == 100
    assert client.deliver(turn.idempotency_key)["id"] == stored["id"]  # answered from disk
    with pytest.raises(KeyError, match="no turn 'nope' in the outbox"):
        client.deliver("nope")
    client.close()


def test_outbox_writes_are_atomic_and_leave_no_temp_files(tmp_path):
    box = Outbox(tmp_path)
    entry = OutboxEntry(key="k" * 12, base_url="http://x", turn={"score": 50})
    box.put(entry)
    box.put(OutboxEntry(key="k" * 12, base_url="http://x", turn={"score": 999}))  # kept as is
    assert box.find("k" * 12).turn == {"score": 50}
    entry.state, entry.result = "delivered", {"id": 1}
    box.write(entry)
    assert box.counts() == {"pending": 0, "delivered": 1, "rejected": 0}
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]
    for key in ("../escape", ".hidden", "trailing ", "nt:stream", "tab\there"):
        with pytest.raises(ValueError, match="usable as a file name"):
            box.put(OutboxEntry(key=key, base_url="http://x", turn={}))
    assert box.counts() == {"pending": 0, "delivered": 1, "rejected": 0}


def test_backoff_grows_exponentially_and_is_capped(tmp_path):
    client = TrackerClient("http://127.0.0.1:9", outbox_dir=tmp_path, backoff=1.0, max_backoff=8)
    delays = [client._delay(a) for a in range(6)]
    assert all(0.5 * min(8, 2**a) <= d <= min(8, 2**a) for a, d in enumerate(delays))
    client.close()


CHILD = textwrap.dedent(
    """
    import sys
    from service.tracker_client import TrackerClient, TurnSubmission
    url, token, outbox, key = sys.argv[1:5]
    client = TrackerClient(url, token=token, outbox_dir=outbox, timeout=60, retries=0)
    client.submit_turn(TurnSubmission(player="jacob", score=1050, idempotency_key=key))
    print("DELIVERED", flush=True)
    """
)


class Hold:
    """ASGI wrapper: holds ``POST /api/v1/turns`` before the tracker sees it ("before") or after
    the tracker stored it but before the answer leaves ("after"), until released."""

    def __init__(self, app, where: str) -> None:
        self.app, self.where = app, where
        self.arrived = threading.Event()
        self.holding = True

    async def _wait(self) -> None:
        self.arrived.set()
        while self.holding:
            await asyncio.sleep(0.02)

    async def __call__(self, scope, receive, send):
        hold = (
            self.holding
            and scope["type"] == "http"
            and scope["method"] == "POST"
            and scope["path"].endswith("/api/v1/turns")
        )
        if not hold:
            return await self.app(scope, receive, send)
        if self.where == "before":
            await self._wait()
            return  # the client died waiting: the request is dropped, never stored

        async def held_send(message):
            if message["type"] == "http.response.start":
                await self._wait()
            await send(message)

        return await self.app(scope, receive, held_send)


@pytest.mark.parametrize("where", ["before", "after"])
def test_client_killed_mid_send_delivers_exactly_once(
    where, app, serve, seed_players, tmp_path, sqlite_url
):
    token = seed_players(app, ["jacob"])["jacob"]["Authorization"][7:]
    hold = Hold(app, where)
    server = serve(hold)
    key = str(uuid.uuid4())
    outbox = tmp_path / "outbox"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, server.url, token, str(outbox), key],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert hold.arrived.wait(60), child.stderr.read() if child.poll() is not None else ""
        # The turn was on disk before it went out, and the tracker has it iff held "after".
        pending = json.loads((outbox / "pending" / f"{key}.json").read_text())
        assert pending["turn"]["score"] == 1050
        assert stored_turns(sqlite_url, key) == (1 if where == "after" else 0)
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(10) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert b"DELIVERED" not in child.stdout.read()
    hold.holding = False

    # The process restarts: a new client delivers what the outbox holds.
    client = TrackerClient(server.url, token=token, outbox_dir=outbox)
    report = client.deliver_pending(force=True)
    assert list(report.delivered) == [key]
    assert report.delivered[key]["replayed"] is (where == "after")
    assert client.deliver_pending(force=True).delivered == {}
    assert stored_turns(sqlite_url, key) == 1 and stored_turns(sqlite_url) == 1
    assert client.outbox.counts() == {"pending": 0, "delivered": 1, "rejected": 0}
    client.close()


def test_unreadable_outbox_file_is_skipped_and_kept(app, serve, seed_players, tmp_path):
    token = seed_players(app, ["shea"])["shea"]["Authorization"][7:]
    client = TrackerClient(serve(app).url, token=token, outbox_dir=tmp_path)
    junk = tmp_path / "pending" / "hand-edited.json"
    junk.write_text("{not json")
    (tmp_path / "pending" / "wrong-shape.json").write_text('{"hello": 1}')
    (tmp_path / "pending" / "x-list.json").write_text("[1, 2]")
    # the right keys with a wrong type: it crashed the delivery loop (attempts + 1)
    bad = {"key": "k", "base_url": client.base_url, "turn": {"score": 50}, "attempts": "x"}
    (tmp_path / "pending" / "x-types.json").write_text(json.dumps(bad))
    turn = TurnSubmission(player="shea", score=50)
    client.outbox.put(
        OutboxEntry(key=turn.idempotency_key, base_url=client.base_url, turn=turn.to_json())
    )
    report = client.deliver_pending()
    assert list(report.delivered) == [turn.idempotency_key]
    assert [p.name for p in client.outbox.unreadable()] == [
        "hand-edited.json",
        "wrong-shape.json",
        "x-list.json",
        "x-types.json",
    ]
    with pytest.raises(ValueError, match="expected attempts to be int, got 'x'"):
        client.outbox.find("x-types")
    assert junk.read_text() == "{not json"
    client.close()


def test_an_outbox_entry_with_true_or_false_for_a_number_is_unreadable(tmp_path):
    """JSON true is an int to Python: a hand-edited ``"attempts": true`` (or a
    ``next_attempt_at`` of false) is named as no entry, never counted or sent."""
    box = Outbox(tmp_path)
    for key, name, value in (
        ("x-attempts", "attempts", True),
        ("x-next", "next_attempt_at", False),
    ):
        bad = {"key": key, "base_url": "http://t", "turn": {"score": 50}, name: value}
        (tmp_path / "pending" / f"{key}.json").write_text(json.dumps(bad))
    assert list(box.entries("pending")) == []
    assert [p.name for p in box.unreadable()] == ["x-attempts.json", "x-next.json"]
    with pytest.raises(ValueError, match="expected attempts to be int, got True"):
        box.find("x-attempts")
    with pytest.raises(ValueError, match="expected next_attempt_at to be int or float, got False"):
        box.find("x-next")


class FlakyFront:
    """ASGI wrapper: answers 503 to the first ``failures`` turn submissions, then passes on."""

    def __init__(self, app, failures: int) -> None:
        self.app, self.failures, self.seen = app, failures, []

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["path"].endswith("/api/v1/turns"):
            self.seen.append(time.monotonic())
            if len(self.seen) <= self.failures:
                body = b'{"detail": "busy"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 503,
                        "headers": [(b"content-type", b"application/json")],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def test_retries_with_exponential_backoff_then_delivers(app, serve, seed_players, tmp_path):
    token = seed_players(app, ["molly"])["molly"]["Authorization"][7:]
    front = FlakyFront(app, failures=3)
    client = TrackerClient(
        serve(front).url, token=token, outbox_dir=tmp_path, retries=3, backoff=0.2
    )
    result = client.submit_turn(TurnSubmission(player="molly", score=250))
    assert result["score"] == 250
    gaps = [b - a for a, b in zip(front.seen, front.seen[1:], strict=False)]
    assert len(gaps) == 3
    # jittered exponential: attempt n waits between 0.5 and 1 times 0.2 * 2**n seconds
    for n, gap in enumerate(gaps):
        assert 0.5 * 0.2 * 2**n - 0.01 <= gap <= 0.2 * 2**n + 0.5, gaps
    assert client.outbox.find(result["idempotency_key"]).attempts == 4
    client.close()


def test_vision_reading_is_kept_as_evidence(app, serve, seed_players, tmp_path):
    from vision.types import Die, Reading

    token = seed_players(app, ["jeremy"])["jeremy"]["Authorization"][7:]
    reading = Reading(
        width=640, height=480, dice=[Die(1, (10, 10, 40, 40), 0.97), Die(5, (60, 12, 90, 41), 0.91)]
    )
    client = TrackerClient(serve(app).url, token=token, outbox_dir=tmp_path)
    result = client.submit_turn(
        TurnSubmission(
            player="jeremy",
            score=150,
            rolls=[{"values": reading.values, "reading": reading.to_dict(), "photo": JPEG}],
        )
    )
    assert result["rolls"][0]["values"] == [1, 5]
    assert result["rolls"][0]["reading"] == json.loads(json.dumps(reading.to_dict()))
    old = client.token
    client.logout()
    assert client.token is None
    client.token = old
    with pytest.raises(TrackerAuthError, match="unknown or revoked token"):
        client.logout()
    client.close()
