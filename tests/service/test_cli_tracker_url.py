"""``dicecam submit`` and ``dicecam outbox deliver`` logging in at an address that is no
tracker's (``dicecam serve``'s own, not its ``/tracker``), or at none: one line saying so and
where the tracker is, exit 2 (1 while it is down), nothing queued or lost. It was a traceback."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from service.app import create_app
from service.cli import main
from service.settings import Settings

from dicecam_testing.servers import bound_socket
from dicecam_testing.turns import QueueReader

LOGIN = ["--player", "ann", "--password", "pass-word-1"]


@pytest.fixture
def service_url(tmp_path: Path, serve) -> str:
    """A real ``dicecam serve`` app, its tracker embedded at ``/tracker``."""
    app = create_app(Settings(data_dir=tmp_path / "service"), reader=QueueReader())
    return serve(app).url.rstrip("/")


@pytest.mark.parametrize("command", [["submit", "--score", "600"], ["outbox", "deliver"]])
def test_a_login_at_the_service_names_its_tracker(
    command: list[str],
    service_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    outbox = tmp_path / "outbox"
    args = [*command, "--url", service_url, *LOGIN, "--outbox-dir", str(outbox)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert f"expected a tracker, got {service_url}, which refused the login (404" in err
    hint = f"the tracker of `dicecam serve` is at {service_url}/tracker"
    assert err.rstrip().endswith(hint), err
    # the address it names is the tracker's: it answers the login, here refusing the password
    login = httpx.post(
        f"{service_url}/tracker/api/v1/tokens", json={"name": "ann", "password": "x"}, timeout=30
    )
    assert login.status_code == 401, login.text
    assert not list(outbox.rglob("*.json"))  # submit refused before queueing anything


def test_deliver_while_the_tracker_is_down_keeps_the_turns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with bound_socket() as held:  # a port of this test's on which nothing listens
        url = f"http://127.0.0.1:{held.getsockname()[1]}"
        outbox = ["--outbox-dir", str(tmp_path / "outbox")]
        assert main(["submit", "--url", url, *LOGIN, "--score", "600", *outbox]) == 1
        assert "queued in the outbox" in capsys.readouterr().err
        assert main(["outbox", "deliver", "--url", url, *LOGIN, *outbox]) == 1
    err = capsys.readouterr().err
    assert err.startswith("nothing delivered, the turns stay queued (could not log in): "), err
    assert len(err.strip().splitlines()) == 1
    assert len(list((tmp_path / "outbox" / "pending").glob("*.json"))) == 1


def test_a_turn_submitted_while_the_tracker_is_down_says_how_to_deliver_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with bound_socket() as held:  # a port of this test's on which nothing listens
        url = f"http://127.0.0.1:{held.getsockname()[1]}"
        outbox = ["--outbox-dir", str(tmp_path / "outbox"), "--token", "a-token"]
        submit = ["submit", "--url", url, "--player", "ann", "--score", "600", *outbox]
        assert main(submit) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        f"queued in the outbox, not delivered yet: cannot reach the tracker at {url}"
    )
    assert err.rstrip().endswith(
        "deliver it with `dicecam outbox deliver` once the tracker is back"
    )
    assert len(err.strip().splitlines()) == 1
    assert len(list((tmp_path / "outbox" / "pending").glob("*.json"))) == 1


def test_a_turn_sent_to_the_service_stays_queued_for_its_tracker(
    service_url: str, midday_zone: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With a token, the turn went to the service's own POST /api/v1/turns, which starts a game
    there: the outbox took that answer for the tracker's and marked the turn delivered (lost),
    and `dicecam submit` ended in a KeyError."""
    tracker = f"{service_url}/tracker"
    account = {"name": "ann", "password": "pass-word-1"}
    httpx.post(f"{tracker}/api/v1/players", json={**account, "timezone": midday_zone}, timeout=30)
    token = httpx.post(f"{tracker}/api/v1/tokens", json=account, timeout=30).json()["token"]
    outbox = ["--outbox-dir", str(tmp_path / "outbox"), "--token", token]
    assert main(["submit", "--url", service_url, "--player", "ann", "--score", "600", *outbox]) == 1
    err = capsys.readouterr().err
    assert err.startswith("queued in the outbox, not delivered yet: expected a tracker at "), err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    # it says how to send it on (it said nothing, and a second submit queued a second turn)
    hint = "send it to the tracker with `dicecam outbox deliver --url TRACKER --retarget`"
    assert err.rstrip().endswith(hint), err
    assert len(list((tmp_path / "outbox" / "pending").glob("*.json"))) == 1
    assert main(["outbox", "deliver", "--url", tracker, "--retarget", *outbox]) == 0
    assert "delivered 1, rejected 0, still queued 0" in capsys.readouterr().out
    board = httpx.get(f"{tracker}/api/v1/leaderboard", timeout=30).json()["standings"]
    assert [(s["player"], s["total"]) for s in board] == [("ann", 600)]
