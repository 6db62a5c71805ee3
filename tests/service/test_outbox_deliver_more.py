"""``dicecam outbox deliver`` at an address that is no tracker's (``dicecam serve``'s own, not
its ``/tracker``) and at a tracker that is down: said as such, with the reason, and the queued
turns stay as they were (never counted rejected, never retargeted to a wrong address)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import httpx
import pytest

from service.app import create_app
from service.cli import main
from service.settings import Settings
from service.tracker_client import (
    TrackerAuthError,
    TrackerClient,
    TrackerNotFound,
    TurnSubmission,
)

from dicecam_testing.servers import bound_socket
from dicecam_testing.turns import QueueReader

ACCOUNT = {"name": "ann", "password": "pass-word-1"}


@pytest.fixture
def service_url(tmp_path: Path, serve) -> str:
    """A real ``dicecam serve`` app, its tracker embedded at ``/tracker``."""
    app = create_app(Settings(data_dir=tmp_path / "service"), reader=QueueReader())
    return serve(app).url.rstrip("/")


@pytest.fixture
def token(service_url: str, midday_zone: str) -> str:
    """A login token of ``ann`` from the service's embedded tracker."""
    tracker = f"{service_url}/tracker"
    httpx.post(f"{tracker}/api/v1/players", json={**ACCOUNT, "timezone": midday_zone}, timeout=30)
    return httpx.post(f"{tracker}/api/v1/tokens", json=ACCOUNT, timeout=30).json()["token"]


def queue(outbox: Path, url: str) -> str:
    """Queue a turn of ``ann`` for the tracker at ``url`` (nothing sent); its key."""
    with TrackerClient(url, outbox_dir=outbox) as client:
        return client.queue(TurnSubmission(player="ann", score=600)).key


def listed(outbox: Path, capsys: pytest.CaptureFixture[str]) -> list[dict]:
    """``dicecam outbox list``'s lines."""
    assert main(["outbox", "list", "--outbox-dir", str(outbox)]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


@pytest.mark.parametrize("retarget", [False, True])
def test_deliver_at_the_service_names_its_tracker_and_keeps_the_turns(
    retarget: bool,
    service_url: str,
    token: str,
    unused_port: int,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The turns were counted "rejected" (nothing at /api/v1/me) while they stayed queued, and
    --retarget rewrote them to the service's address first."""
    outbox = tmp_path / "outbox"
    # queued for the service's address, or (to retarget) for a mistyped one
    queued_for = f"http://127.0.0.1:{unused_port}" if retarget else service_url
    key = queue(outbox, queued_for)
    args = ["outbox", "deliver", "--url", service_url, "--token", token]
    assert main([*args, "--outbox-dir", str(outbox), *(["--retarget"] if retarget else [])]) == 2
    out, err = capsys.readouterr()
    assert not out and "rejected" not in err and len(err.strip().splitlines()) == 1, err
    assert f"--url: expected a tracker, got {service_url}, which answered GET /api/v1/me" in err
    assert "so nothing was sent and the turns stay queued" in err
    assert err.rstrip().endswith(f"the tracker of `dicecam serve` is at {service_url}/tracker")
    [entry] = listed(outbox, capsys)
    assert entry["state"] == "pending" and entry["key"] == key
    assert entry["tracker"] == queued_for and entry["attempts"] == 0
    # the address it names delivers them
    tracker = ["--url", f"{service_url}/tracker", "--token", token, "--retarget"]
    assert main(["outbox", "deliver", *tracker, "--outbox-dir", str(outbox)]) == 0
    assert "delivered 1, rejected 0, still queued 0" in capsys.readouterr().out


def test_deliver_while_the_tracker_is_down_says_why_and_keeps_it(
    unused_port: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With a token, the report said "still queued 1" with no reason, and the outbox recorded
    no try (its token's GET /api/v1/me failed before the turn was sent)."""
    outbox = tmp_path / "outbox"
    url = f"http://127.0.0.1:{unused_port}"  # nothing listens: connection refused
    key = queue(outbox, url)
    args = ["outbox", "deliver", "--url", url, "--token", "T", "--outbox-dir", str(outbox)]
    assert main(args) == 1
    out, err = capsys.readouterr()
    assert "delivered 0, rejected 0, still queued 1" in out
    [line] = err.splitlines()
    assert line.startswith(f"still queued {key}: cannot reach the tracker at {url}: "), line
    [entry] = listed(outbox, capsys)
    assert entry["state"] == "pending" and entry["attempts"] == 1
    assert entry["error"] == line.removeprefix(f"still queued {key}: ")


def test_a_tracker_that_does_not_answer_is_a_timeout_kept_with_each_turn(tmp_path: Path) -> None:
    """A tracker that takes the connection and never answers: each queued turn records the
    timeout, asked once for all of them."""
    with bound_socket() as silent:
        silent.listen()  # the system takes the connections; nobody answers
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        keys = {queue(tmp_path, url), queue(tmp_path, url)}
        with TrackerClient(url, token="T", outbox_dir=tmp_path, timeout=0.5) as client:
            report = client.deliver_pending(force=True)
            kept = {e.key: e for e in client.outbox.entries("pending")}
        silent.setblocking(False)
        asked = 0
        with contextlib.suppress(BlockingIOError):
            while True:
                silent.accept()[0].close()
                asked += 1
    assert asked == 1  # one wait for the tracker, not one for each turn
    assert set(report.pending) == keys == set(kept) and not report.rejected
    why = f"cannot reach the tracker at {url}: timed out"
    assert report.pending_errors == dict.fromkeys(keys, why)
    assert all(e.last_error == why and e.attempts == 1 for e in kept.values())


def test_retarget_without_a_token_rewrites_nothing_until_a_tracker_answers(
    service_url: str, unused_port: int, tmp_path: Path
) -> None:
    """--retarget with no token: the service's address is no tracker (TrackerNotFound), the
    tracker's asks for a login (TrackerAuthError); the turn keeps its address either way."""
    mistyped = f"http://127.0.0.1:{unused_port}"
    key = queue(tmp_path, mistyped)
    no_tracker = f"expected a tracker at {service_url}, got 404"
    with (
        TrackerClient(service_url, outbox_dir=tmp_path) as client,
        pytest.raises(TrackerNotFound, match=no_tracker),
    ):
        client.deliver_pending(force=True, retarget=True)
    with TrackerClient(f"{service_url}/tracker", outbox_dir=tmp_path) as client:
        with pytest.raises(TrackerAuthError, match="log in first"):
            client.deliver_pending(force=True, retarget=True)
        [entry] = client.outbox.entries("pending")
    assert entry.key == key and entry.base_url == mistyped and entry.attempts == 0
