"""Limits per client address over a real socket, at the tracker's default settings: wrong
passwords across names (20 every 15 minutes) and registrations (10 an hour) from one address
wait with 429 and ``Retry-After``, on the API and the forms; another address is not held up,
``X-Forwarded-For`` from an address uvicorn does not trust changes nothing, and 0 turns a limit
off. The second address is a real one: the client binds 127.0.0.2."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import httpx
import pytest
from starlette.requests import Request

from service.tracker import create_app

RIGHT = "hunter2hunter2"  # seed_players' password
LOGINS, REGISTRATIONS = 20, 10  # the defaults the README's Settings table gives
VARIABLES = (
    "DICECAM_TRACKER_LOGIN_FAILURES_PER_ADDRESS",
    "DICECAM_TRACKER_REGISTRATIONS_PER_ADDRESS",
)


@pytest.fixture
def site(sqlite_url, clock, serve, monkeypatch):
    """The tracker at its default limits: (app, its URL)."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    app = create_app(sqlite_url, clock=clock)
    yield app, serve(app).url
    app.state.db.dispose()


@pytest.fixture
def client(site) -> Iterator[httpx.Client]:
    """A client from 127.0.0.1 (the address uvicorn trusts ``X-Forwarded-For`` from)."""
    with httpx.Client(base_url=site[1], timeout=30) as http:
        yield http


def from_address(url: str, address: str) -> httpx.Client:
    """A client whose connections come from ``address`` (127.0.0.2: loopback, not trusted)."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=url, timeout=30, transport=transport)


def login(http: httpx.Client, name: str, password: str = RIGHT, **kw) -> httpx.Response:
    return http.post("/api/v1/tokens", json={"name": name, "password": password}, **kw)


def register(http: httpx.Client, name: str) -> httpx.Response:
    return http.post("/api/v1/players", json={"name": name, "password": RIGHT, "timezone": "UTC"})


def roll_call(http: httpx.Client) -> list[str]:
    return sorted(p["player"] for p in http.get("/api/v1/rollcall").json()["players"])


def test_wrong_passwords_across_names_hold_the_address_until_the_window_passes(
    site, client, clock, seed_players
):
    app, url = site
    seed_players(app, ["heather", "ivan"])
    for i in range(LOGINS):  # one wrong password each: no name comes near its own limit of 5
        assert login(client, f"guess{i}", "not it").status_code == 401
    r = login(client, "heather")  # the right password of a name nobody tried
    assert r.status_code == 429, r.text
    assert r.headers["retry-after"] == str(15 * 60)
    assert r.json()["detail"] == (
        "too many wrong passwords from your address (127.0.0.1): try again in 900 s (at most "
        "20 every 15 minutes from one address, DICECAM_TRACKER_LOGIN_FAILURES_PER_ADDRESS)"
    )
    page = client.post(
        "/add", data={"name": "heather", "password": RIGHT, "score": "50", "idempotency_key": "k"}
    )
    assert page.status_code == 429 and page.headers["retry-after"] == "900"
    assert page.headers["content-type"].startswith("text/html")
    assert "too many wrong passwords from your address (127.0.0.1)" in page.text
    with from_address(url, "127.0.0.2") as other:
        assert login(other, "ivan").status_code == 201  # another address is not held up
        for i in range(LOGINS):
            assert login(other, f"other{i}", "nope").status_code == 401
        forged = {"X-Forwarded-For": "203.0.113.9"}  # not trusted from 127.0.0.2: ignored
        r = login(other, "ivan", headers=forged)
        assert r.status_code == 429 and "(127.0.0.2)" in r.json()["detail"]
    clock.set(clock() + timedelta(minutes=14, seconds=59))
    assert login(client, "heather").headers["retry-after"] == "1"  # sliding: 1 s left
    clock.set(clock() + timedelta(seconds=1))
    assert login(client, "heather").status_code == 201


def test_a_right_password_forgets_its_own_names_typos_not_the_other_names_guesses(
    site, client, seed_players
):
    seed_players(site[0], ["heather", "bob"])
    for _ in range(3):
        assert login(client, "heather", "typo").status_code == 401
    for i in range(10):
        assert login(client, f"ghost{i}", "guess").status_code == 401
    assert login(client, "heather").status_code == 201  # forgets heather's 3 typos
    assert login(client, "bob").status_code == 201  # forgets none of the ghosts' guesses
    for i in range(10, 20):  # 20 guesses now: were the typos still counted, 17 would do
        assert login(client, f"ghost{i}", "guess").status_code == 401, i
    assert login(client, "bob").status_code == 429


def test_a_trusted_proxys_forwarded_address_is_the_one_counted(site, client):
    """From 127.0.0.1 (a reverse proxy on this machine: uvicorn's FORWARDED_ALLOW_IPS),
    X-Forwarded-For names the client, and each client has its own count."""
    for i in range(LOGINS):
        r = login(client, f"guess{i}", "x", headers={"X-Forwarded-For": "198.51.100.7"})
        assert r.status_code == 401
    r = login(client, "guess0", "x", headers={"X-Forwarded-For": "198.51.100.7"})
    assert r.status_code == 429 and "(198.51.100.7)" in r.json()["detail"]
    assert login(
        client, "guess0", "x", headers={"X-Forwarded-For": "198.51.100.8"}
    ).status_code == (401)
    assert login(client, "guess0", "x").status_code == 401  # the proxy's own address: free


def test_registrations_beyond_the_limit_wait_and_create_no_player(site, client, clock):
    _, url = site
    names = [f"player{i}" for i in range(REGISTRATIONS)]
    for name in names[:5]:
        assert register(client, name).status_code == 201
    assert register(client, "Player0").status_code == 409  # refused: does not count
    for name in names[5:]:
        assert register(client, name).status_code == 201
    r = register(client, "eleventh")
    assert r.status_code == 429, r.text
    assert r.headers["retry-after"] == "3600"
    assert r.json()["detail"] == (
        "too many registrations from your address (127.0.0.1): try again in 3600 s (at most 10 "
        "every hour from one address, DICECAM_TRACKER_REGISTRATIONS_PER_ADDRESS)"
    )
    page = client.post(
        "/register", data={"name": "twelfth", "password": RIGHT, "timezone": "Europe/Paris"}
    )
    assert page.status_code == 429 and page.headers["retry-after"] == "3600"
    assert page.headers["content-type"].startswith("text/html")
    assert '<div class="problems" role="alert">' in page.text
    assert "too many registrations from your address (127.0.0.1): try again in 3600 s" in page.text
    assert 'value="twelfth"' in page.text and 'value="Europe/Paris"' in page.text  # kept
    assert RIGHT not in page.text
    assert roll_call(client) == sorted(names)  # neither the eleventh nor the twelfth
    with from_address(url, "127.0.0.2") as other:
        assert register(other, "neighbour").status_code == 201
    clock.set(clock() + timedelta(minutes=59, seconds=59))
    assert register(client, "eleventh").headers["retry-after"] == "1"
    clock.set(clock() + timedelta(seconds=1))
    assert register(client, "eleventh").status_code == 201
    page = client.post("/register", data={"name": "twelfth", "password": RIGHT, "timezone": "UTC"})
    assert page.status_code == 201 and "Welcome, twelfth!" in page.text


@pytest.mark.browser
def test_the_registration_form_in_a_browser_says_the_limit_and_the_wait(site, client, chromium):
    for i in range(REGISTRATIONS):
        assert register(client, f"player{i}").status_code == 201
    page = chromium.new_page()
    page.goto(site[1] + "/register")
    page.fill("input[name=name]", "latecomer")
    page.fill("input[name=password]", "late-password")
    page.fill("input[name=timezone]", "Europe/Paris")
    page.click("button")
    alert = page.locator("[role=alert]").text_content()
    assert "too many registrations from your address (127.0.0.1): try again in 3600 s" in alert
    assert page.input_value("input[name=name]") == "latecomer"  # kept, the password not
    assert page.input_value("input[name=password]") == ""
    assert "latecomer" not in roll_call(client)


def test_registrations_sent_at_once_do_not_overrun_the_limit(site, client):
    url = site[1]

    def attempt(i: int) -> int:
        with httpx.Client(base_url=url, timeout=60) as http:
            return register(http, f"rush{i}").status_code

    with ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(attempt, range(16)))
    assert sorted(codes) == [201] * REGISTRATIONS + [429] * 6, codes
    assert len(roll_call(client)) == REGISTRATIONS


def test_a_limit_of_0_is_none(sqlite_url, clock, serve, monkeypatch):
    for name in VARIABLES:
        monkeypatch.setenv(name, "0")
    app = create_app(sqlite_url, clock=clock)
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
        for i in range(REGISTRATIONS + 2):
            assert register(http, f"player{i}").status_code == 201
        for i in range(LOGINS + 5):
            assert login(http, f"player{i % 12}", "wrong").status_code == 401
        assert login(http, "player0").status_code == 201
    app.state.db.dispose()


def test_a_limit_below_0_is_refused_naming_the_variable(sqlite_url, monkeypatch):
    monkeypatch.setenv("DICECAM_TRACKER_REGISTRATIONS_PER_ADDRESS", "-1")
    with pytest.raises(ValueError, match="tracker_registrations_per_address"):
        create_app(sqlite_url)
    monkeypatch.delenv("DICECAM_TRACKER_REGISTRATIONS_PER_ADDRESS")
    with pytest.raises(ValueError, match="expected a limit of 0 .none. or more"):
        create_app(sqlite_url, login_failures_per_address=-5, registrations_per_address=1)


def test_addresses_kept_are_bounded_and_expired_ones_forgotten(clock):
    from service.tracker.throttle import WINDOW, AddressLimit, TooManyTries

    limit = AddressLimit(2, WINDOW, "wrong passwords", "SETTING", max_addresses=100)
    start = clock()
    for i in range(150):
        limit.take(f"192.0.2.{i}", start)
    assert len(limit) == 100  # the least recently counted went first
    limit.take("192.0.2.149", start)
    with pytest.raises(TooManyTries, match="too many wrong passwords from your address"):
        limit.take("192.0.2.149", start)
    limit.take("192.0.2.0", start)
    limit.take("192.0.2.0", start)  # forgotten before: counts afresh, one place left
    later = start + WINDOW  # every address counted so far has left the window
    for i in range(64):
        limit.take(f"198.51.100.{i}", later)
    assert len(limit) == 64  # the expired ones went, none of the new
    limit.take("198.51.100.0", later)
    with pytest.raises(TooManyTries):
        limit.take("198.51.100.0", later)


def test_an_ipv6_client_counts_with_its_64_block():
    from service.tracker.throttle import client_address

    def address(client: tuple[str, int] | None) -> str:
        return client_address(Request({"type": "http", "client": client}))

    assert address(("2001:db8:1:2:aaaa::1", 5)) == "2001:db8:1:2::/64"
    assert address(("2001:db8:1:2:ffff::9", 5)) == "2001:db8:1:2::/64"
    assert address(("::ffff:192.0.2.1", 5)) == "192.0.2.1"
    assert address(("192.0.2.1", 5)) == "192.0.2.1"
    assert address(None) == "unknown"


def test_dicecam_submit_whose_login_waits_says_when_to_deliver_and_keeps_the_turn(
    site, client, clock, seed_players, tmp_path, capsys
):
    """A held login is no tracker down: `dicecam submit --password` queues the turn and says
    to deliver it after the wait (it said "once the tracker is back")."""
    from dicecam_testing.cli import run_in_process

    app, url = site
    seed_players(app, ["heather"])
    for _ in range(5):  # the name's own limit
        assert login(client, "heather", "not it").status_code == 401
    outbox = tmp_path / "outbox"
    code, _, err = run_in_process(
        capsys, "submit", "--url", url, "--player", "heather", "--password", RIGHT,
        "--score", "600", "--outbox-dir", str(outbox),
    )  # fmt: skip
    assert code == 1, err
    assert "queued in the outbox, not delivered yet (could not log in)" in err, err
    assert "too many wrong passwords" in err and err.rstrip().endswith(
        "deliver it with `dicecam outbox deliver` in 900 s"
    ), err
    assert len(list(outbox.glob("pending/*.json"))) == 1
