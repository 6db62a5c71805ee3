"""The camera page's tracker login (the service's ``POST /api/v1/tracker/tokens``) counts
against the embedded tracker's per-address limit under the address of the phone that sent it,
not the service's own: the service relays it with a key the tracker made at start, which a
client sending the relay headers itself does not have. A held login reaches the page as 429
naming the limit and the wait, with ``Retry-After``. Real servers, real sockets: the second
and third client addresses are 127.0.0.2 and 127.0.0.4 (clients bound there)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from service.app import create_app
from service.settings import Settings
from service.tracker import create_app as create_tracker_app
from service.tracker.throttle import RELAY_ADDRESS_HEADER, RELAY_KEY_HEADER

from dicecam_testing.servers import LiveServer
from dicecam_testing.turns import QueueReader

RIGHT = "hunter2hunter2"
LIMIT = 3  # wrong passwords per address, through DICECAM_TRACKER_LOGIN_FAILURES_PER_ADDRESS
PAGE_LOGIN = "/api/v1/tracker/tokens"  # the camera page's route
TRACKER_LOGIN = "/tracker/api/v1/tokens"  # the embedded tracker's own


@pytest.fixture(autouse=True)
def low_limit(monkeypatch) -> None:
    monkeypatch.setenv("DICECAM_TRACKER_LOGIN_FAILURES_PER_ADDRESS", str(LIMIT))
    monkeypatch.delenv("DICECAM_TRACKER_URL", raising=False)


def serve_service(tmp_path, host: str = "127.0.0.1", **kw) -> LiveServer:
    """``dicecam serve`` listening on ``host``, its tracker embedded (``kw``: create_app's)."""
    settings = Settings(data_dir=tmp_path, host=host)
    return LiveServer(create_app(settings, reader=QueueReader(), **kw), host=host)


def client(url: str, address: str = "127.0.0.1") -> httpx.Client:
    """A client whose connections come from ``address``."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=url, timeout=30, transport=transport)


def login(http: httpx.Client, name: str, password: str = RIGHT, path: str = PAGE_LOGIN, **kw):
    return http.post(path, json={"name": name, "password": password}, **kw)


def register(http: httpx.Client, name: str) -> None:
    body = {"name": name, "password": RIGHT, "timezone": "UTC"}
    assert http.post("/tracker/api/v1/players", json=body).status_code == 201


@pytest.fixture
def service(tmp_path) -> Iterator[LiveServer]:
    with serve_service(tmp_path) as server:
        yield server


@pytest.mark.parametrize("listen", ["127.0.0.1", "127.0.0.3"])
def test_wrong_passwords_through_the_camera_page_hold_only_the_phone_that_typed_them(
    tmp_path, listen
):
    """Listening on loopback (whose X-Forwarded-For uvicorn trusts) or on another address, as
    on a LAN (whose it does not), the service logs in to its tracker at the address the page
    came in on; each phone counts under its own address."""
    with (
        serve_service(tmp_path, listen) as server,
        client(server.url) as here,
        client(server.url, "127.0.0.2") as guesser,
        client(server.url, "127.0.0.4") as third,
    ):
        register(here, "heather")
        for i in range(LIMIT):
            assert login(guesser, f"ghost{i}", "not it").status_code == 401
        held = login(guesser, "heather")
        assert held.status_code == 429, held.text
        assert "from your address (127.0.0.2)" in held.json()["detail"]
        r = login(here, "heather")  # another phone, through the same route
        assert r.status_code == 201, r.text
        assert r.json()["player"]["name"] == "heather"
        assert login(third, "heather").status_code == 201


def test_relay_headers_count_only_with_the_key_the_tracker_made(service):
    """A client sending the relay headers itself, without the key, with a wrong one or with
    the key but no address, is counted under its own address; the key is the mounted
    tracker's, random for each app and shared with nobody else."""
    key = service.server.config.app.state.tracker_relay_key
    assert isinstance(key, str) and len(key) >= 32
    wrong = key[:-1] + ("A" if key[-1] != "A" else "B")
    forged = [
        {RELAY_ADDRESS_HEADER: "198.51.100.7"},
        {RELAY_ADDRESS_HEADER: "198.51.100.7", RELAY_KEY_HEADER: wrong},
        {RELAY_ADDRESS_HEADER: "198.51.100.7", RELAY_KEY_HEADER: ""},
        {RELAY_KEY_HEADER: key},
    ]
    with client(service.url, "127.0.0.2") as outsider, client(service.url) as here:
        register(here, "heather")
        for i, headers in enumerate(forged[:LIMIT]):
            r = login(outsider, f"ghost{i}", "x", TRACKER_LOGIN, headers=headers)
            assert r.status_code == 401, r.text
        for headers in forged:  # each counted under 127.0.0.2, none under 198.51.100.7
            r = login(outsider, "heather", path=TRACKER_LOGIN, headers=headers)
            assert r.status_code == 429, r.text
            assert "from your address (127.0.0.2)" in r.json()["detail"]
        relayed = {RELAY_ADDRESS_HEADER: "198.51.100.7", RELAY_KEY_HEADER: key}
        r = login(outsider, "heather", path=TRACKER_LOGIN, headers=relayed)
        assert r.status_code == 201, r.text  # with the key, the relayed address counts
        for i in range(LIMIT):
            r = login(here, f"spook{i}", "x", TRACKER_LOGIN, headers=relayed)
            assert r.status_code == 401, r.text
        r = login(here, "heather", path=TRACKER_LOGIN, headers=relayed)
        assert r.status_code == 429 and "(198.51.100.7)" in r.json()["detail"]
        assert login(here, "heather", path=TRACKER_LOGIN).status_code == 201  # 127.0.0.1: free


def test_a_held_camera_page_login_answers_429_naming_the_limit_and_the_wait(
    tmp_path, sqlite_url, clock
):
    tracker = create_tracker_app(sqlite_url, clock=clock)
    with (
        serve_service(tmp_path, tracker_app=tracker) as server,
        client(server.url) as here,
        client(server.url, "127.0.0.2") as phone,
    ):
        register(here, "heather")
        for _ in range(LIMIT):
            assert login(phone, "heather", "typo").status_code == 401
        r = login(phone, "ivan")
        assert r.status_code == 429, r.text
        assert r.headers["retry-after"] == str(15 * 60)
        assert r.json()["detail"] == (
            "too many wrong passwords from your address (127.0.0.2): try again in 900 s "
            f"(at most {LIMIT} every 15 minutes from one address, "
            "DICECAM_TRACKER_LOGIN_FAILURES_PER_ADDRESS)"
        )
    tracker.state.db.dispose()


@pytest.mark.browser
def test_the_camera_page_says_the_limit_and_the_wait(service, chromium):
    with client(service.url) as here:
        register(here, "heather")
        for i in range(LIMIT):
            assert login(here, f"ghost{i}", "x").status_code == 401
    page = chromium.new_page()
    page.goto(service.url + "/")
    page.fill("#player", "heather")
    page.locator("#tracker summary").click()
    page.fill("#password", RIGHT)
    page.locator("#tracker-form button").click()
    note = page.locator("#tracker-note")
    note.filter(has_text="Tracker login failed").wait_for(timeout=10_000)
    text = note.text_content()
    assert "too many wrong passwords from your address (127.0.0.1): try again in" in text
    assert f"at most {LIMIT} every 15 minutes from one address" in text
    assert "answered 429" not in text  # the limit, not an outage


def test_a_remote_tracker_counts_the_service_as_one_address_and_gets_no_key(
    tmp_path, sqlite_url, serve
):
    """With ``DICECAM_TRACKER_URL`` the service is one client of that tracker: the page's
    logins count under the service's address, no relay key is sent (not even the key of a
    tracker mounted beside it), and a held login still says the limit and the wait."""
    remote = create_tracker_app(sqlite_url)
    seen: list[dict[str, str]] = []

    async def recording(scope, receive, send):
        if scope["type"] == "http":
            seen.append({k.decode().lower(): v.decode() for k, v in scope["headers"]})
        await remote(scope, receive, send)

    remote_url = serve(recording).url
    settings = Settings(data_dir=tmp_path, tracker_url=remote_url)
    embedded = create_tracker_app(f"sqlite:///{tmp_path / 'embedded.sqlite3'}")
    app = create_app(settings, reader=QueueReader(), tracker_app=embedded)
    with LiveServer(app) as server, httpx.Client(base_url=remote_url, timeout=30) as direct:
        body = {"name": "heather", "password": RIGHT, "timezone": "UTC"}
        assert direct.post("/api/v1/players", json=body).status_code == 201
        with client(server.url, "127.0.0.2") as phone, client(server.url) as other:
            for i in range(LIMIT):
                assert login(phone, f"ghost{i}", "x").status_code == 401
            r = login(other, "heather")  # another phone: the same address at the tracker
            assert r.status_code == 429, r.text
            assert r.headers["retry-after"] in ("899", "900")
            assert "from your address (127.0.0.1)" in r.json()["detail"]
            assert r.json()["detail"].endswith(
                "counts every login sent through this service as from the service's address)"
            )
            assert f"at most {LIMIT} every 15 minutes" in r.json()["detail"]
    sent = [h for h in seen if h.get("content-type") == "application/json"]
    assert len(sent) == LIMIT + 2  # the registration and the page's logins
    assert not [
        h for h in seen if RELAY_KEY_HEADER.lower() in h or RELAY_ADDRESS_HEADER.lower() in h
    ]
    assert not any(embedded.state.relay_key in v for h in seen for v in h.values())
    remote.state.db.dispose()
    embedded.state.db.dispose()


def test_a_camera_page_login_while_the_remote_tracker_is_down_is_503_naming_it(
    tmp_path, serve, unused_port
):
    """The tracker cannot be reached: 503 (the service is fine, its tracker away: try again),
    saying where it looked; no token, nothing held."""
    url = f"http://127.0.0.1:{unused_port}/tracker"
    app = create_app(
        Settings(data_dir=tmp_path, tracker_url=url, outbox_retry_s=0),
        reader=QueueReader(),
        submitter=None,
    )
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
        r = http.post("/api/v1/tracker/tokens", json={"name": "ann", "password": "pass-word-1"})
    assert r.status_code == 503, r.text
    assert f"cannot reach the tracker at {url}" in r.json()["detail"]
