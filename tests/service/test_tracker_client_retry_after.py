"""A tracker's 429 (or a proxy's in front of it) reaches the tracker client as
:class:`~service.tracker_client.TrackerThrottled` whatever its ``Retry-After`` says: a number of
seconds is kept, anything else (a date, more digits than ``int()`` converts) is no wait
(``retry_after`` None) instead of an error of its own. Real servers: a stand-in for the remote
tracker answering every request 429, and the service logging the camera page in to it."""

from __future__ import annotations

import json

import httpx
import pytest

from service.app import create_app
from service.settings import Settings
from service.tracker_client import TrackerThrottled
from service.tracker_client.api import TrackerApi

from dicecam_testing.turns import QueueReader

DETAIL = "too many wrong passwords from your address: try again later"


def throttling(retry_after: str):
    """An ASGI app answering every request 429 with ``retry_after`` as its Retry-After."""

    async def app(scope, receive, send):
        assert scope["type"] == "http"
        body = json.dumps({"detail": DETAIL}).encode()
        headers = [(b"content-type", b"application/json"), (b"retry-after", retry_after.encode())]
        await send({"type": "http.response.start", "status": 429, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


@pytest.mark.parametrize(
    ("header", "seconds"),
    [("120", 120), ("0", 0), ("Wed, 21 Oct 2026 07:28:00 GMT", None), ("9" * 5000, None)],
)
def test_a_429_is_throttled_whatever_its_retry_after(serve, header, seconds):
    remote = serve(throttling(header))
    with TrackerApi(remote.url) as api, pytest.raises(TrackerThrottled) as caught:
        api.login("heather", "hunter2hunter2")
    assert (caught.value.detail, caught.value.retry_after) == (DETAIL, seconds)


def test_the_camera_page_login_says_a_remote_429_with_a_retry_after_of_too_many_digits(
    serve, tmp_path
):
    remote = serve(throttling("9" * 5000))
    settings = Settings(data_dir=tmp_path, tracker_url=remote.url)
    server = serve(create_app(settings, reader=QueueReader(), tracker_app=None))
    body = {"name": "heather", "password": "hunter2hunter2"}
    r = httpx.post(f"{server.url}/api/v1/tracker/tokens", json=body, timeout=30)
    assert r.status_code == 429, r.text  # it answered 500, the client's int() failing
    assert r.json()["detail"].startswith(DETAIL + " (the tracker at ")
    assert "retry-after" not in r.headers


def test_the_camera_page_login_passes_on_a_remote_429s_retry_after(serve, tmp_path):
    """A remote tracker's 429 with ``Retry-After: 120`` reaches the camera page as the service's
    own 429 with the same ``Retry-After`` (the page says how long to wait), its detail saying
    that the tracker counts every login sent through the service as from the service."""
    remote = serve(throttling("120"))
    settings = Settings(data_dir=tmp_path, tracker_url=remote.url)
    server = serve(create_app(settings, reader=QueueReader(), tracker_app=None))
    body = {"name": "heather", "password": "hunter2hunter2"}
    r = httpx.post(f"{server.url}/api/v1/tracker/tokens", json=body, timeout=30)
    assert r.status_code == 429, r.text
    assert r.headers["retry-after"] == "120"
    assert r.json()["detail"] == (
        f"{DETAIL} (the tracker at {remote.url.rstrip('/')} counts every login sent through this "
        "service as from the service's address)"
    )


@pytest.mark.parametrize(
    ("header", "when"), [("120", "in 120 s"), ("soon", "after the wait it names")]
)
def test_submit_whose_login_is_throttled_queues_the_turn_and_says_when(
    serve, tmp_path, capsys, header, when
):
    """``dicecam submit --password``: a 429 at the login queues the turn and says when to
    deliver it: the Retry-After's seconds when it gives them."""
    from dicecam_testing.cli import run_in_process

    remote = serve(throttling(header))
    outbox = tmp_path / "outbox"
    argv = ["submit", "--player", "ann", "--password", "pass-word-1", "--score", "300"]
    code, out, err = run_in_process(capsys, *argv, "--url", remote.url, "--outbox-dir", str(outbox))
    assert code == 1 and out == ""
    assert err.startswith("queued in the outbox, not delivered yet (could not log in): ")
    assert err.endswith(f"; deliver it with `dicecam outbox deliver` {when}\n")
    assert len(list((outbox / "pending").glob("*.json"))) == 1
