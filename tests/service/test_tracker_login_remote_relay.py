"""The relay key of a service's embedded tracker (which lets the service's logins count under
the phone's address) is that tracker's secret: a login the camera page makes through the
service to a remote tracker (``DICECAM_TRACKER_URL``) carries neither relay header, even in a
service that also mounts a tracker of its own."""

from __future__ import annotations

from typing import Any

import httpx

from service.app import create_app
from service.settings import Settings
from service.tracker import create_app as create_tracker_app
from service.tracker.throttle import RELAY_ADDRESS_HEADER, RELAY_KEY_HEADER

from dicecam_testing.servers import LiveServer
from dicecam_testing.turns import QueueReader

RIGHT = "hunter2hunter2"


class Recording:
    """An ASGI app passing every request to ``app`` and keeping the headers each came with."""

    def __init__(self, app: Any) -> None:
        self.app, self.seen = app, []

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            self.seen.append({k.decode().lower(): v.decode() for k, v in scope["headers"]})
        await self.app(scope, receive, send)


def test_a_login_to_a_remote_tracker_carries_no_relay_header(tmp_path, monkeypatch):
    monkeypatch.delenv("DICECAM_TRACKER_URL", raising=False)
    remote = Recording(create_tracker_app(f"sqlite:///{tmp_path / 'remote.sqlite3'}"))
    embedded = create_tracker_app(f"sqlite:///{tmp_path / 'embedded.sqlite3'}")
    assert embedded.state.relay_key  # a key that could leak
    with LiveServer(remote) as tracker:
        body = {"name": "ana", "password": RIGHT, "timezone": "UTC"}
        assert httpx.post(f"{tracker.url}/api/v1/players", json=body).status_code == 201
        settings = Settings(data_dir=tmp_path / "data", tracker_url=tracker.url)
        app = create_app(settings, reader=QueueReader(), tracker_app=embedded)
        with LiveServer(app) as service:
            remote.seen.clear()
            answer = httpx.post(
                f"{service.url}/api/v1/tracker/tokens",
                json={"name": "ana", "password": RIGHT},
                timeout=30,
            )
    assert answer.status_code == 201, answer.text
    assert answer.json()["player"]["name"] == "ana"
    assert remote.seen, "the login never reached the remote tracker"
    for headers in remote.seen:
        assert RELAY_KEY_HEADER.lower() not in headers, headers
        assert RELAY_ADDRESS_HEADER.lower() not in headers, headers
    assert embedded.state.relay_key not in {v for h in remote.seen for v in h.values()}
