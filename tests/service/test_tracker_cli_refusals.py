"""``dicecam submit`` and ``dicecam outbox deliver`` refuse what a tracker would refuse, before
anything is queued or sent: a score off the steps of 50, a player's name of only blanks, a
password without the player it logs in. Exit 2, one line, the outbox as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dicecam_testing.cli import run_in_process as run

NOWHERE = "http://127.0.0.1:9"  # nothing listens: a command that went on would queue the turn


def _queued(outbox: Path) -> list[Path]:
    return sorted(outbox.rglob("*.json")) if outbox.exists() else []


@pytest.mark.parametrize(
    ("player", "score", "said"),
    [
        ("ann", "75", "expected a Morning Roll score, 0 or more in steps of 50, got 75"),
        ("ann", "-50", "expected a Morning Roll score, 0 or more in steps of 50, got -50"),
        ("   ", "50", "--player: expected your player name, got '   '"),
    ],
)
def test_submit_refuses_before_it_queues(capsys, tmp_path, player, score, said):
    outbox = tmp_path / "outbox"
    argv = ["submit", "--player", player, "--score", score, "--url", NOWHERE, "--token", "t"]
    code, out, err = run(capsys, *argv, "--outbox-dir", str(outbox))
    assert (code, out, err) == (2, "", f"dicecam submit: error: {said}\n")
    assert _queued(outbox) == []


@pytest.mark.parametrize("login", [["--password", "pass-word-1"], ["--player", "ann"]])
def test_deliver_refuses_a_password_or_a_player_alone(capsys, tmp_path, login):
    outbox = tmp_path / "outbox"
    argv = ["outbox", "deliver", "--url", NOWHERE, *login, "--outbox-dir", str(outbox)]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err == ("dicecam outbox: error: expected --player and --password together, to log in\n")


def test_a_turn_the_tracker_refuses_is_said_listed_and_a_failure(
    capsys, tmp_path, sqlite_tracker, join
):
    """A refused turn is moved to rejected/: ``deliver`` names it and exits 1 (it exited 0, as
    if all went), and ``outbox list`` shows it among the others (it listed queued and sent)."""
    from service.tracker_client import TrackerClient, TurnSubmission

    http, _ = sqlite_tracker
    url = str(http.base_url).rstrip("/")
    token = join(http, "ann")["Authorization"].removeprefix("Bearer ")
    outbox = tmp_path / "outbox"
    with TrackerClient(url, outbox_dir=outbox) as client:
        refused = client.queue(TurnSubmission(player="ann", score=75)).key  # not a step of 50
    argv = ["--url", url, "--token", token, "--outbox-dir", str(outbox)]
    code, out, err = run(capsys, "outbox", "deliver", *argv)
    assert code == 1
    assert out == "delivered 0, rejected 1, still queued 0\n"
    assert err.startswith(f"rejected {refused}: ")
    code, out, _ = run(capsys, "outbox", "list", "--outbox-dir", str(outbox))
    assert code == 0 and [json.loads(line)["state"] for line in out.splitlines()] == ["rejected"]


def test_deliver_takes_its_tracker_and_token_from_the_settings(
    capsys, tmp_path, sqlite_tracker, join, monkeypatch
):
    """``DICECAM_TRACKER_URL`` and ``DICECAM_TRACKER_TOKEN`` stand for ``--url`` and ``--token``:
    without the token read, deliver refused as if none was given (exit 2)."""
    from service.tracker_client import TrackerClient, TurnSubmission

    http, _ = sqlite_tracker
    url = str(http.base_url).rstrip("/")
    token = join(http, "ann")["Authorization"].removeprefix("Bearer ")
    outbox = tmp_path / "outbox"
    with TrackerClient(url, outbox_dir=outbox) as client:
        client.queue(TurnSubmission(player="ann", score=75))  # refused: sent all the same
    monkeypatch.setenv("DICECAM_TRACKER_URL", url)
    monkeypatch.setenv("DICECAM_TRACKER_TOKEN", token)
    code, out, _ = run(capsys, "outbox", "deliver", "--outbox-dir", str(outbox))
    assert (code, out) == (1, "delivered 0, rejected 1, still queued 0\n")


def test_a_turn_queued_for_another_tracker_is_counted_queued_and_a_failure(
    capsys, tmp_path, sqlite_tracker, join
):
    """Left for the tracker it was queued for, it is still queued: said so, and exit 1."""
    from service.tracker_client import TrackerClient, TurnSubmission

    http, _ = sqlite_tracker
    url = str(http.base_url).rstrip("/")
    token = join(http, "ann")["Authorization"].removeprefix("Bearer ")
    outbox = tmp_path / "outbox"
    with TrackerClient(NOWHERE, outbox_dir=outbox) as client:
        client.queue(TurnSubmission(player="ann", score=300))
    argv = ["--url", url, "--token", token, "--outbox-dir", str(outbox)]
    code, out, err = run(capsys, "outbox", "deliver", *argv)
    assert (code, out) == (1, "delivered 0, rejected 0, still queued 1\n")
    assert f"queued for the tracker at {NOWHERE} (deliver it with --url {NOWHERE}" in err
