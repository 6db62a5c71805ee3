"""The tracker client at its edges, against a real tracker over real HTTP: a refused token stops
a pass over the outbox, a hand-edited entry whose queueing time cannot be read is kept (never
refused as late), only an older tracker's "Extra inputs" refusal of ``age_s`` is sent again
without it, and queueing a known turn again answers the entry the outbox keeps."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from service.tracker import create_app
from service.tracker_client import (
    TrackerAuthError,
    TrackerClient,
    TrackerRejected,
    TurnSubmission,
)
from service.tracker_client.outbox import OutboxEntry


def counting(app, seen: list[tuple[str, str]]):
    """``app`` as it is, noting each HTTP request's method and path in ``seen``."""

    async def wrapped(scope, receive, send):
        if scope["type"] == "http":
            seen.append((scope["method"], scope["path"]))
        await app(scope, receive, send)

    return wrapped


def test_a_refused_token_stops_the_pass_and_leaves_the_other_turns_untried(
    sqlite_tracker, tmp_path: Path
):
    """``deliver_pending`` raises :class:`TrackerAuthError` at the first turn whose POST the
    tracker refuses for its token (here none): every other turn would be refused the same, so
    none is tried (no failed try counted on it); all stay queued."""
    http, _clock = sqlite_tracker
    url = str(http.base_url).rstrip("/")
    with TrackerClient(url, outbox_dir=tmp_path) as client:
        for key in ("aaaa-first-turn", "bbbb-second-turn"):
            client.queue(TurnSubmission(player="ann", score=600, idempotency_key=key))
        with pytest.raises(TrackerAuthError, match="log in first"):
            client.deliver_pending(force=True)
        kept = {e.key: e for e in client.outbox.entries("pending")}
    assert sorted(kept) == ["aaaa-first-turn", "bbbb-second-turn"]
    assert (
        kept["aaaa-first-turn"].attempts == 1
        and "log in first" in kept["aaaa-first-turn"].last_error
    )
    assert (kept["bbbb-second-turn"].attempts, kept["bbbb-second-turn"].last_error) == (0, None)
    assert http.get("/api/v1/players/ann/turns").status_code == 404  # nothing stored


@pytest.mark.parametrize("created_at", ["this morning", "2026-06-14T08:00:00", ""])
def test_an_entry_whose_queueing_time_cannot_be_read_is_kept_then_sent_without_an_age(
    sqlite_tracker, join, serve, sqlite_url, clock, tmp_path: Path, unused_port: int, created_at
):
    """An outbox file edited by hand (or written by an old dicecam) whose ``created_at`` is no
    aware time: with the tracker down it stays queued with the failed try (its age unknown, it
    is not refused as late, nor does the pass crash), and once the tracker is back it is sent
    as it is, without ``age_s`` (the tracker counts it on the day it arrives)."""
    http, _ = sqlite_tracker
    token = join(http, "ann")["Authorization"][7:]
    down = f"http://127.0.0.1:{unused_port}"
    key = "hand-edited-turn"
    turn = TurnSubmission(player="ann", score=600, idempotency_key=key).to_json()
    with TrackerClient(down, token=token, outbox_dir=tmp_path, clock=clock) as client:
        client.outbox.put(OutboxEntry(key, down, turn, created_at=created_at))
        clock.set(clock() + timedelta(days=3))  # long past any day it could count on
        report = client.deliver_pending(force=True)
        assert report.pending == [key] and not report.rejected
        assert report.pending_errors[key].startswith(f"cannot reach the tracker at {down}")
        kept = client.outbox.find(key)
        assert (kept.state, kept.attempts, kept.created_at) == ("pending", 1, created_at)

    bodies: list[dict] = []

    class Noting(httpx.HTTPTransport):
        """Real HTTP, noting each turn's body as sent."""

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            if request.url.path.endswith("/api/v1/turns"):
                bodies.append(json.loads(request.content))
            return super().handle_request(request)

    app = create_app(sqlite_url, clock=clock, registrations_per_address=0)
    serve(app, port=unused_port)  # the tracker is back
    with TrackerClient(
        down, token=token, outbox_dir=tmp_path, clock=clock, transport=Noting()
    ) as client:
        report = client.deliver_pending(force=True)
    assert list(report.delivered) == [key], report
    assert report.delivered[key]["day"] == clock().date().isoformat()
    assert [("age_s" in b, b["idempotency_key"]) for b in bodies] == [(False, key)]
    app.state.db.dispose()


@pytest.mark.parametrize(
    ("score", "queued_days_ago", "reason"),
    [(625, 0, "multiple of 50"), (600, 11 * 366, "age_s")],
    ids=["a score no Morning Roll gives", "an age past the tracker's bound"],
)
def test_only_an_extra_inputs_refusal_of_age_s_is_sent_again_without_it(
    sqlite_url, clock, serve, join, tmp_path: Path, score, queued_days_ago, reason
):
    """A tracker's 422 for another reason (a score no Morning Roll gives, or an ``age_s`` it
    refuses as too old: a turn queued 11 years ago by a clock set wrong) is its refusal: the
    turn is posted once and refused with the tracker's reason, not posted again without
    ``age_s`` as for a tracker older than ``age_s``."""
    seen: list[tuple[str, str]] = []
    app = create_app(sqlite_url, clock=clock, registrations_per_address=0)
    server = serve(counting(app, seen))
    with httpx.Client(base_url=server.url, timeout=30) as http:
        token = join(http, "ann")["Authorization"][7:]
    turn = TurnSubmission(player="ann", score=score)
    now = clock()
    with TrackerClient(server.url, token=token, outbox_dir=tmp_path, clock=clock) as client:
        clock.set(now - timedelta(days=queued_days_ago))
        client.queue(turn)
        clock.set(now)
        with pytest.raises(TrackerRejected, match=reason) as refused:
            client.submit_turn(turn, retries=0)
        kept = client.outbox.find(turn.idempotency_key)
    assert refused.value.status == 422, refused.value.detail
    assert kept.state == "rejected" and kept.last_error == refused.value.detail
    assert seen.count(("POST", "/api/v1/turns")) == 1, seen
    app.state.db.dispose()


def test_queueing_a_known_turn_again_answers_the_entry_the_outbox_keeps(
    sqlite_tracker, join, clock, tmp_path: Path
):
    """``queue`` of a key already in the outbox changes nothing and answers the stored entry:
    its first queueing time while pending, and once delivered, the tracker's stored turn."""
    http, _ = sqlite_tracker
    token = join(http, "ann")["Authorization"][7:]
    turn = TurnSubmission(player="ann", score=600)
    url = str(http.base_url).rstrip("/")
    with TrackerClient(url, token=token, outbox_dir=tmp_path, clock=clock) as client:
        first = client.queue(turn)
        played = clock().isoformat()
        clock.set(clock() + timedelta(minutes=5))
        again = client.queue(turn)
        assert (
            (again.state, again.created_at)
            == ("pending", played)
            == (first.state, first.created_at)
        )
        stored = client.submit_turn(turn)
        after = client.queue(turn)
    assert (after.state, after.created_at) == ("delivered", played)
    assert after.result == stored and stored["score"] == 600
    assert [t["score"] for t in http.get("/api/v1/players/ann/turns").json()["turns"]] == [600]


@pytest.mark.parametrize(("hours", "state"), [(22 - 1 / 3600, "pending"), (22, "rejected")])
def test_a_turn_that_fails_22_hours_or_more_after_it_was_played_is_refused_as_late(
    clock, tmp_path: Path, unused_port: int, hours: float, state: str
):
    """The tracker down when a turn is tried: one played a second short of 22 hours ago stays
    queued for a later try; one played 22 hours ago (``LATE_AFTER_S``, the line
    ``refuse_late`` draws too) can no longer count and is refused here, kept in rejected/."""
    down = f"http://127.0.0.1:{unused_port}"
    turn = TurnSubmission(player="ann", score=600)
    with TrackerClient(down, token="t", outbox_dir=tmp_path, clock=clock) as client:
        client.queue(turn)
        clock.set(clock() + timedelta(hours=hours))
        report = client.deliver_pending(force=True)
        kept = client.outbox.find(turn.idempotency_key)
    assert kept.state == state and kept.attempts == 1
    if state == "rejected":
        assert report.rejected == {turn.idempotency_key: kept.last_error} and not report.pending
        assert kept.last_error.startswith("not entered: the turn was played 22 hours ago")
        assert (
            f"could not be delivered since (cannot reach the tracker at {down}" in kept.last_error
        )
    else:
        assert report.pending == [turn.idempotency_key] and not report.rejected
        assert kept.last_error.startswith(f"cannot reach the tracker at {down}")


def test_a_turn_waiting_for_its_next_try_is_reported_with_why(tmp_path: Path, unused_port: int):
    """``deliver_pending`` without ``force`` leaves a turn in its backoff alone (no new try)
    and says why it waits: the error of its last try, as the outbox keeps it."""
    down = f"http://127.0.0.1:{unused_port}"
    turn = TurnSubmission(player="ann", score=600)
    with TrackerClient(down, token="t", outbox_dir=tmp_path, backoff=600) as client:
        client.queue(turn)
        first = client.deliver_pending(force=True)
        why = first.pending_errors[turn.idempotency_key]
        waiting = client.deliver_pending()
        kept = client.outbox.find(turn.idempotency_key)
    assert why.startswith(f"cannot reach the tracker at {down}")
    assert (waiting.pending, waiting.pending_errors) == (
        [turn.idempotency_key],
        {turn.idempotency_key: why},
    )
    assert (kept.attempts, kept.last_error) == (1, why)


def test_retargeting_moves_another_players_turn_too_for_their_own_deliver(
    sqlite_tracker, join, tmp_path: Path, unused_port: int
):
    """``--retarget`` with one player's token sends that player's turns queued for a wrong URL
    and moves the other players' ones to this tracker too (their URL was as wrong), unsent:
    the other player's own ``deliver``, without ``--retarget``, then sends theirs."""
    http, _ = sqlite_tracker
    tokens = {p: join(http, p)["Authorization"][7:] for p in ("ann", "bob")}
    wrong = f"http://127.0.0.1:{unused_port}"
    with TrackerClient(wrong, outbox_dir=tmp_path) as client:
        keys = {p: client.queue(TurnSubmission(player=p, score=600)).key for p in tokens}
    url = str(http.base_url).rstrip("/")
    with TrackerClient(url, token=tokens["ann"], outbox_dir=tmp_path) as client:
        report = client.deliver_pending(force=True, retarget=True)
        moved = client.outbox.find(keys["bob"])
    assert list(report.delivered) == [keys["ann"]]
    assert report.other_players == {keys["bob"]: "bob"}
    assert (moved.state, moved.base_url, moved.attempts) == ("pending", url, 0)
    with TrackerClient(url, token=tokens["bob"], outbox_dir=tmp_path) as client:
        report = client.deliver_pending(force=True)
    assert list(report.delivered) == [keys["bob"]] and not report.other_trackers
