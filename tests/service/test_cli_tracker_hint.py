"""When ``dicecam submit`` and ``dicecam outbox deliver`` add where `dicecam serve`'s tracker is
to their one line about an address that answers as no tracker does: only when the address is
not already a ``/tracker`` one, and, for a refused login, only when it was refused as not there
(404). Dropping either condition survived every other test (mutation testing of
service/cli/tracker.py); these pin both against real servers."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.app import create_app
from service.cli import main
from service.settings import Settings

from dicecam_testing.turns import QueueReader

HINT = "the tracker of `dicecam serve` is at"
COMMANDS = [["submit", "--score", "600"], ["outbox", "deliver"]]


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    out, err = capsys.readouterr()
    assert not out and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


@pytest.mark.parametrize("command", COMMANDS, ids=["submit", "deliver"])
def test_a_tracker_address_that_is_not_there_gets_no_second_tracker_appended(
    command: list[str], tmp_path: Path, serve, capsys: pytest.CaptureFixture[str]
) -> None:
    """`dicecam serve` run without its tracker: its /tracker answers 404 like any address that
    is no tracker's, but the hint would send the player to .../tracker/tracker."""
    app = create_app(
        Settings(data_dir=tmp_path / "service"),
        reader=QueueReader(),
        tracker_app=None,
        submitter=None,
    )
    url = serve(app).url.rstrip("/") + "/tracker"
    outbox = tmp_path / "outbox"
    login = ["--player", "ann", "--password", "pass-word-1"]
    assert main([*command, "--url", url, *login, "--outbox-dir", str(outbox)]) == 2
    err = _one_line(capsys)
    nothing = "nothing at /tracker/api/v1/tokens (the addresses served are in /openapi.json)"
    assert err.endswith(
        f"--url: expected a tracker, got {url}, which refused the login (404: {nothing})"
    ), err
    assert HINT not in err and "/tracker/tracker" not in err
    assert not list(outbox.rglob("*.json"))  # nothing queued


@pytest.mark.parametrize("command", COMMANDS, ids=["submit", "deliver"])
def test_a_login_refused_for_another_reason_than_404_gets_no_hint(
    command: list[str], tmp_path: Path, serve, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real tracker at its own address refuses a name past 200 characters (422): the address
    is the tracker's, so the line says the tracker refused the login's fields and sends the
    player nowhere else (it said "expected a tracker" of the tracker itself)."""
    from service.tracker import create_app as create_tracker_app

    tracker = create_tracker_app(f"sqlite:///{tmp_path / 'tracker.sqlite3'}")
    url = serve(tracker).url.rstrip("/")
    outbox = tmp_path / "outbox"
    login = ["--player", "a" * 201, "--password", "pass-word-1"]
    assert main([*command, "--url", url, *login, "--outbox-dir", str(outbox)]) == 2
    err = _one_line(capsys)
    assert f"--player/--password: the tracker at {url} refused the login (422: " in err, err
    assert "expected a tracker" not in err  # it is one
    assert HINT not in err and f"{url}/tracker" not in err
    assert not list(outbox.rglob("*.json"))  # nothing queued
