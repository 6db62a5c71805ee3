"""Wrong passwords hold a name's logins per (name, client address) pair, not for the name
everywhere: a stranger's five wrong passwords for bob no longer keep bob out from his own phone
(they did: any five requests every 15 minutes locked a player out for good). The pair still
waits, even with the right password; a name-wide cap of 50 in the window holds guessing spread
over many addresses, but for the addresses the player logged in from in the last 30 days. A
real tracker at its default limits over a real socket: the second address is a client bound to
127.0.0.2, the many others relayed with the tracker's relay key (as ``dicecam serve`` relays
its clients' addresses)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest

from service.tracker import create_app
from service.tracker.throttle import (
    KNOWN_FOR,
    MAX_FAILURES,
    MAX_NAME_FAILURES,
    WINDOW,
    relay_headers,
)

RIGHT = "hunter2hunter2"  # seed_players' password
WRONG = "not-the-password"


@pytest.fixture
def site(sqlite_url, clock, serve, monkeypatch, seed_players):
    """The tracker at its default login limits, bob registered: (app, its URL)."""
    monkeypatch.delenv("DICECAM_TRACKER_LOGIN_FAILURES_PER_ADDRESS", raising=False)
    app = create_app(sqlite_url, clock=clock, registrations_per_address=0)
    seed_players(app, ["bob"])
    yield app, serve(app).url
    app.state.db.dispose()


@pytest.fixture
def here(site) -> Iterator[httpx.Client]:
    """A client from 127.0.0.1."""
    with httpx.Client(base_url=site[1], timeout=30) as http:
        yield http


def from_address(url: str, address: str) -> httpx.Client:
    """A client whose connections come from ``address``."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=url, timeout=30, transport=transport)


def login(http: httpx.Client, password: str = RIGHT, **kw) -> httpx.Response:
    return http.post("/api/v1/tokens", json={"name": "bob", "password": password}, **kw)


def add_roll(http: httpx.Client, password: str = RIGHT) -> httpx.Response:
    key = http.get("/add").text.split('name="idempotency_key" value="')[1].split('"')[0]
    data = {"name": "bob", "password": password, "score": "50", "idempotency_key": key}
    return http.post("/add", data=data)


def test_wrong_passwords_from_one_address_do_not_keep_the_player_out_from_another(site, here):
    with from_address(site[1], "127.0.0.2") as stranger:
        for _ in range(MAX_FAILURES):
            assert login(stranger, WRONG).status_code == 401
        assert login(stranger).status_code == 429  # the stranger's pair waits
    r = login(here)  # bob from his own phone: the right password logs in
    assert r.status_code == 201, r.text
    r = add_roll(here)  # and the Morning Roll form (the password each time) takes his roll
    assert r.status_code == 201 and "Stored: bob scored <strong>50</strong>" in r.text


def test_the_pair_that_guessed_still_waits_with_the_right_password_until_the_window_passes(
    site, here, clock
):
    for _ in range(MAX_FAILURES):
        assert login(here, "Guess!").status_code == 401
    r = login(here)  # the right password is not checked: it waits as a wrong one would
    assert r.status_code == 429, r.text
    assert int(r.headers["retry-after"]) == WINDOW.total_seconds()
    assert r.json()["detail"] == (
        "too many wrong passwords for 'bob' from your address (127.0.0.1): try again in 900 s "
        "(at most 5 every 15 minutes for one name from one address)"
    )
    page = add_roll(here)  # the form too
    assert page.status_code == 429 and "from your address (127.0.0.1)" in page.text
    clock.set(clock() + WINDOW - timedelta(seconds=1))
    assert login(here).headers["retry-after"] == "1"
    clock.set(clock() + timedelta(seconds=1))
    assert login(here).status_code == 201


def test_a_right_password_clears_its_pair_so_the_players_own_typos_never_add_up(site, here):
    for _ in range(3):
        for _ in range(MAX_FAILURES - 1):
            assert login(here, "typo").status_code == 401
        assert login(here).status_code == 201


def test_the_name_wide_cap_holds_guessing_spread_over_many_addresses(site, here, clock):
    key = site[0].state.relay_key
    per_address = MAX_NAME_FAILURES // MAX_FAILURES  # 10 addresses of 5 each
    guessers = [relay_headers(key, f"198.51.100.{i}") for i in range(1, per_address + 1)]
    for headers in guessers[:-1]:  # 45 wrong passwords from 9 addresses
        for _ in range(MAX_FAILURES):
            assert login(here, WRONG, headers=headers).status_code == 401
    home = relay_headers(key, "203.0.113.5")
    for _ in range(MAX_FAILURES - 1):  # bob's own typos at home, then his right password
        assert login(here, "typo", headers=home).status_code == 401
    assert login(here, headers=home).status_code == 201  # takes his 4 typos out of the 49
    for _ in range(MAX_FAILURES):  # the 10th address: 46..50, none refused
        assert login(here, WRONG, headers=guessers[-1]).status_code == 401
    fresh = relay_headers(key, "192.0.2.77")  # an address that never guessed
    r = login(here, headers=fresh)
    assert r.status_code == 429, r.text
    assert r.json()["detail"] == (
        "too many wrong passwords for 'bob' from many addresses: try again in 900 s "
        f"(at most {MAX_NAME_FAILURES} every 15 minutes for one name from all addresses)"
    )
    assert login(here, headers=home).status_code == 201  # bob's home is known: he plays on
    r = here.post(
        "/api/v1/tokens", json={"name": "alice", "password": WRONG}, headers=fresh
    )  # another name is not held
    assert r.status_code == 401
    clock.set(clock() + WINDOW)
    assert login(here, headers=fresh).status_code == 201


def guess_from_many_addresses(here: httpx.Client, key: str, hosts: str) -> None:
    """50 wrong passwords for bob: 5 from each of 10 relayed addresses ``hosts.1`` to 10."""
    for i in range(1, MAX_NAME_FAILURES // MAX_FAILURES + 1):
        headers = relay_headers(key, f"{hosts}.{i}")
        for _ in range(MAX_FAILURES):
            assert login(here, WRONG, headers=headers).status_code == 401


def test_an_address_known_for_the_name_is_waived_the_name_wide_cap_for_30_days(site, here, clock):
    key = site[0].state.relay_key
    home, fresh = relay_headers(key, "203.0.113.5"), relay_headers(key, "192.0.2.77")
    assert login(here, headers=home).status_code == 201  # bob plays from home
    guess_from_many_addresses(here, key, "198.51.100")
    assert login(here, headers=fresh).status_code == 429  # a new address waits
    assert login(here, WRONG, headers=home).status_code == 401  # checked, held by its pair only
    assert login(here, headers=home).status_code == 201  # bob plays on
    clock.set(clock() + KNOWN_FOR)  # his last login from home a month ago
    guess_from_many_addresses(here, key, "198.51.101")
    r = login(here, headers=home)
    assert r.status_code == 429 and "from many addresses" in r.json()["detail"]


def test_a_login_failing_otherwise_than_by_a_wrong_password_counts_nowhere(tmp_path, clock):
    """A database that cannot be opened (a real SQLAlchemy session, a file in a folder that is
    not there) fails each login: none is a wrong password, so no count keeps a place."""
    from sqlalchemy import create_engine
    from sqlalchemy.exc import OperationalError
    from sqlalchemy.orm import Session

    from service.tracker.throttle import AddressLimit, LoginGuard

    per_address = AddressLimit(20, WINDOW, "wrong passwords", "SETTING")
    guard = LoginGuard(per_address=per_address)
    engine = create_engine(f"sqlite:///{tmp_path / 'missing' / 'tracker.sqlite3'}")
    try:
        for _ in range(MAX_FAILURES + 1):
            with Session(engine) as session, pytest.raises(OperationalError):
                guard.check_password(session, "bob", RIGHT, clock(), "192.0.2.7")
    finally:
        engine.dispose()
    assert len(guard) == 0 and len(per_address) == 0 and len(guard._pairs) == 0
