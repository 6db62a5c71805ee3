"""``dicecam outbox deliver`` with no token (no ``--token``, ``--player``/``--password`` or
``DICECAM_TRACKER_TOKEN``): a tracker takes a turn only with its player's token, so it is bad
usage, said in one line before anything is sent (exit 2), and the queued turns stay as they
were, whatever ``--url`` names: a server that is no tracker, an address nothing listens on, a
real tracker. It posted each turn to ``--url``: a server answering 404 had them counted
rejected, an address nothing listens on recorded a failed try on each and exited 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi import FastAPI

from service.tracker_client import TrackerClient, TurnSubmission

from dicecam_testing.cli import run_in_process

NO_TOKEN = "expected --token, --player with --password, or DICECAM_TRACKER_TOKEN to deliver"


def _queue(outbox: Path, url: str) -> str:
    """Queue a turn of ``ann`` for the tracker at ``url`` (nothing sent); its key."""
    with TrackerClient(url, outbox_dir=outbox) as client:
        return client.queue(TurnSubmission(player="ann", score=600)).key


def _entries(outbox: Path, capsys: pytest.CaptureFixture[str]) -> list[dict]:
    """``dicecam outbox list``'s lines."""
    code, out, _ = run_in_process(capsys, "outbox", "list", "--outbox-dir", str(outbox))
    assert code == 0
    return [json.loads(line) for line in out.splitlines()]


@pytest.fixture
def not_a_tracker(serve) -> str:
    """A real server that is no tracker: it answers 404 to everything, POST /api/v1/turns too."""
    return serve(FastAPI()).url.rstrip("/")


@pytest.fixture
def nothing_listens(unused_port: int) -> str:
    return f"http://127.0.0.1:{unused_port}"


@pytest.fixture
def a_tracker(sqlite_tracker) -> str:
    """A real tracker (it asks for a login to take a turn)."""
    http, _clock = sqlite_tracker
    return str(http.base_url).rstrip("/")


@pytest.mark.parametrize("where", ["not_a_tracker", "nothing_listens", "a_tracker"])
def test_deliver_without_a_token_sends_nothing_and_keeps_the_turns(
    where: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("DICECAM_TRACKER_TOKEN", raising=False)
    url = request.getfixturevalue(where)
    outbox = tmp_path / "outbox"
    key = _queue(outbox, url)
    before = _entries(outbox, capsys)
    code, out, err = run_in_process(
        capsys, "outbox", "deliver", "--url", url, "--outbox-dir", str(outbox)
    )
    assert code == 2, (out, err)
    assert not out and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"dicecam outbox: error: {NO_TOKEN}"), err
    assert err.rstrip().endswith("nothing was sent, the outbox is as it was"), err
    assert _entries(outbox, capsys) == before  # no try recorded, nothing rejected
    assert before[0]["key"] == key and before[0]["state"] == "pending"


@pytest.mark.parametrize("token", [None, "some-token"])
def test_the_client_keeps_a_turn_a_server_that_is_no_tracker_refuses(
    token: str | None, not_a_tracker: str, tmp_path: Path
) -> None:
    """The library path (``TrackerClient.deliver_pending``, the service's own outbox): a 4xx
    from a server that then answers ``GET /api/v1/me`` as no tracker does is no tracker's
    refusal. The turn stays queued with the reason; it was moved to ``rejected`` (lost)."""
    from service.tracker_client import TrackerNotFound, TrackerUnavailable

    outbox = tmp_path / "outbox"
    key = _queue(outbox, not_a_tracker)
    with TrackerClient(not_a_tracker, token=token, outbox_dir=outbox, retries=0) as client:
        if token is None:
            report = client.deliver_pending(force=True)
            assert (report.delivered, report.rejected, report.pending) == ({}, {}, [key])
            assert "404 to GET /api/v1/me" in report.pending_errors[key]
        else:  # with a token, the tracker's GET /api/v1/me is asked first: nothing sent
            with pytest.raises(TrackerNotFound):
                client.deliver_pending(force=True)
        with pytest.raises(TrackerUnavailable, match="404 to GET /api/v1/me"):
            client.submit_turn(TurnSubmission(player="bob", score=600))
        assert len(list(client.outbox.entries())) == 2
        assert list(client.outbox.entries("rejected")) == []
