"""How the tracker client takes a tracker's answers it does not see every day: a gateway's
5xx (502, 504, a proxy in front of a tracker being restarted), a timeout, and keeps the turn
for a later try instead of refusing it for good or letting an httpx error through. Real
servers: stand-ins for a proxy in front of the tracker, served over real HTTP."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from service.app import create_app
from service.settings import Settings
from service.tracker_client import (
    TrackerClient,
    TrackerNotFound,
    TrackerRejected,
    TrackerUnavailable,
    TurnSubmission,
)
from service.tracker_client.api import TrackerApi

from dicecam_testing.turns import QueueReader


def answering(status: int, *, delay_s: float = 0.0):
    """An ASGI app answering every request ``status`` (after ``delay_s``), JSON detail."""

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        await asyncio.sleep(delay_s)
        body = json.dumps({"detail": f"proxy says {status}"}).encode()
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


@pytest.mark.parametrize("status", [408, 425, 500, 502, 503, 504])
def test_a_gateway_error_keeps_the_turn_queued_for_a_later_try(serve, tmp_path, status):
    """A 5xx (or 408/425) is the tracker down for now: the turn stays pending with the answer
    as its last error, never moved to rejected/ as a refusal would be."""
    proxy = serve(answering(status))
    turn = TurnSubmission(player="heather", score=600)
    with TrackerClient(proxy.url, token="t", outbox_dir=tmp_path, retries=1, backoff=0.01) as c:
        with pytest.raises(TrackerUnavailable, match=f"answered {status}: proxy says {status}"):
            c.submit_turn(turn)
        kept = c.outbox.find(turn.idempotency_key)
        assert (kept.state, kept.attempts) == ("pending", 2)
        assert f"proxy says {status}" in kept.last_error
        assert c.outbox.counts() == {"pending": 1, "delivered": 0, "rejected": 0}


def test_a_tracker_too_slow_to_answer_is_unavailable_and_the_turn_kept(serve, tmp_path):
    """A read timeout (the tracker took the request and never answered in time) is the tracker
    unavailable, as a refused connection is: not an httpx error out of ``submit_turn``."""
    slow = serve(answering(201, delay_s=2.0))
    turn = TurnSubmission(player="heather", score=600)
    with TrackerClient(slow.url, token="t", outbox_dir=tmp_path, timeout=0.3, retries=0) as c:
        with pytest.raises(TrackerUnavailable, match="cannot reach the tracker at .*timed out"):
            c.submit_turn(turn)
        kept = c.outbox.find(turn.idempotency_key)
        assert (kept.state, kept.attempts) == ("pending", 1)
        assert "timed out" in kept.last_error


@pytest.mark.parametrize("status", [400, 404, 409])
def test_a_4xx_is_a_refusal_not_an_answer(serve, tmp_path, status):
    """A 4xx (a proxy's 400 "Bad Request" too) is a refusal: not taken for a token or for the
    standings; the camera page's login through the service says it with the same status."""
    proxy = serve(answering(status))
    with TrackerApi(proxy.url) as api:
        with pytest.raises(TrackerRejected, match=rf"refused \({status}\): proxy says {status}"):
            api.login("heather", "hunter2hunter2")
        with pytest.raises(TrackerRejected) as caught:
            api.leaderboard()
        assert (caught.value.status, caught.value.detail) == (status, f"proxy says {status}")
    settings = Settings(data_dir=tmp_path, tracker_url=proxy.url)
    server = serve(create_app(settings, reader=QueueReader(), tracker_app=None))
    body = {"name": "heather", "password": "hunter2hunter2"}
    r = httpx.post(f"{server.url}/api/v1/tracker/tokens", json=body, timeout=30)
    assert (r.status_code, r.json()["detail"]) == (status, f"proxy says {status}")


async def a_web_page(scope, receive, send):
    """An ASGI app answering every request 200 with an HTML page: a web server, no tracker."""
    if scope["type"] != "http":
        return
    headers = [(b"content-type", b"text/html")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"<html><body>It works!</body></html>"})


def test_retargeting_to_a_web_page_sends_and_rewrites_nothing(serve, tmp_path, unused_port):
    """A URL answering a web page to ``GET /api/v1/me`` is no tracker: ``--retarget`` raises
    TrackerNotFound saying so, and the queued turn keeps its address and its count of tries."""
    mistyped = f"http://127.0.0.1:{unused_port}"
    with TrackerClient(mistyped, outbox_dir=tmp_path) as offline:
        key = offline.queue(TurnSubmission(player="heather", score=600)).key
    page = serve(a_web_page).url.rstrip("/")
    with TrackerClient(page, outbox_dir=tmp_path) as client:
        no_tracker = f"expected a tracker at {page}, got 200 .*an answer with no player's name"
        with pytest.raises(TrackerNotFound, match=no_tracker):
            client.deliver_pending(force=True, retarget=True)
        [entry] = client.outbox.entries("pending")
    assert (entry.key, entry.base_url, entry.attempts) == (key, mistyped, 0)


def test_a_url_with_a_trailing_slash_delivers_its_own_queued_turns(
    sqlite_tracker, join, tmp_path, unused_port
):
    """A tracker URL typed with a trailing slash is the same tracker: its queued turns are its
    own, delivered (not left alone as another tracker's)."""
    http, _clock = sqlite_tracker
    token = join(http, "heather")["Authorization"][7:]
    url = f"{str(http.base_url).rstrip('/')}/"
    turn = TurnSubmission(player="heather", score=600)
    with TrackerClient(url, token=token, outbox_dir=tmp_path) as client:
        entry = client.queue(turn)
        assert entry.base_url == url.rstrip("/")
        report = client.deliver_pending(force=True)
    assert list(report.delivered) == [turn.idempotency_key] and not report.other_trackers


def test_a_turn_refused_earlier_is_refused_again_without_a_new_try(sqlite_tracker, join, tmp_path):
    """``deliver`` of a turn the tracker refused answers the reason kept on disk (status 0:
    settled here) and sends nothing: its count of tries stays as it was."""
    http, _clock = sqlite_tracker
    token = join(http, "heather")["Authorization"][7:]
    with TrackerClient(str(http.base_url), token=token, outbox_dir=tmp_path) as client:
        client.submit_turn(TurnSubmission(player="heather", score=600))
        second = TurnSubmission(player="heather", score=900)
        with pytest.raises(TrackerRejected, match="already took a turn"):
            client.submit_turn(second)
        kept = client.outbox.find(second.idempotency_key)
        with pytest.raises(TrackerRejected) as again:
            client.deliver(second.idempotency_key, force=True)
        assert (again.value.status, again.value.detail) == (0, kept.last_error)
        assert client.outbox.find(second.idempotency_key).attempts == kept.attempts == 1


def test_a_201_without_a_stored_turn_is_no_delivery(serve, tmp_path):
    """A server answering a turn's POST with a JSON object that is no stored turn (no id, day
    and score) has not stored it: the turn stays pending, never taken as delivered."""
    other = serve(answering(201))
    turn = TurnSubmission(player="heather", score=600)
    with TrackerClient(other.url, token="t", outbox_dir=tmp_path, retries=0) as c:
        with pytest.raises(TrackerUnavailable, match="got an answer with no stored turn"):
            c.submit_turn(turn)
        assert c.outbox.find(turn.idempotency_key).state == "pending"
        assert c.outbox.counts() == {"pending": 1, "delivered": 0, "rejected": 0}
