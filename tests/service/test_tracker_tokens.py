"""The tracker's bearer tokens over a real socket: they expire (``DICECAM_TRACKER_TOKEN_DAYS``,
by the tracker's clock), a player logs one out, a password change revokes them all, and a
database made before tokens expired is upgraded in place."""

from __future__ import annotations

import time
from datetime import datetime, timedelta

import httpx
import pytest
import sqlalchemy as sa

from service.tracker import create_app, store
from service.tracker.db import make_engine, migrate


def _login(http: httpx.Client, name: str, password: str = "hunter2hunter2") -> dict:
    r = http.post("/api/v1/tokens", json={"name": name, "password": password})
    assert r.status_code == 201, r.text
    return r.json()


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def short_tokens(sqlite_url, clock, serve, monkeypatch):
    """A tracker whose tokens last 2 days (set through the environment, as in production)."""
    monkeypatch.setenv("DICECAM_TRACKER_TOKEN_DAYS", "2")
    app = create_app(sqlite_url, clock=clock)
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
        yield http, clock, app
    app.state.db.dispose()


def test_a_token_expires_after_the_set_days_by_the_trackers_clock(short_tokens, join, turn):
    http, clock, _ = short_tokens
    clock.set("2026-06-15T12:00:00+00:00")
    join(http, "heather")
    made = _login(http, "heather")
    assert datetime.fromisoformat(made["expires_at"]) == datetime.fromisoformat(
        "2026-06-17T12:00:00+00:00"
    )
    auth = _auth(made["token"])

    clock.set("2026-06-17T11:59:59+00:00")
    assert http.get("/api/v1/me", headers=auth).json()["name"] == "heather"

    clock.set("2026-06-17T12:00:00+00:00")
    for r in (
        http.get("/api/v1/me", headers=auth),
        http.post("/api/v1/turns", json=turn("heather"), headers=auth),
    ):
        assert r.status_code == 401, r.text
        detail = r.json()["detail"]
        assert "expired on 2026-06-17 12:00 UTC" in detail and "lasts 2 days" in detail
        assert "log in again" in detail and "POST /api/v1/tokens" in detail
        assert r.headers["www-authenticate"] == "Bearer"
    assert http.get("/api/v1/players/heather/turns").json()["turns"] == []  # nothing stored

    fresh = _auth(_login(http, "heather")["token"])  # logging in again is the way back
    r = http.post("/api/v1/turns", json=turn("heather"), headers=fresh)
    assert r.status_code == 201, r.text


def test_the_default_lifetime_is_365_days(sqlite_tracker, join, monkeypatch):
    monkeypatch.delenv("DICECAM_TRACKER_TOKEN_DAYS", raising=False)
    http, clock = sqlite_tracker
    join(http, "stefan")
    made = _login(http, "stefan")
    assert datetime.fromisoformat(made["expires_at"]) == clock() + timedelta(days=365)
    clock.set(clock() + timedelta(days=364))
    assert http.get("/api/v1/me", headers=_auth(made["token"])).status_code == 200
    clock.set(clock() + timedelta(days=1))
    r = http.get("/api/v1/me", headers=_auth(made["token"]))
    assert r.status_code == 401 and "expired" in r.json()["detail"]


def test_logout_ends_only_this_token_and_takes_an_expired_one(short_tokens, join):
    http, clock, _ = short_tokens
    join(http, "jacob")
    phone, laptop = (_auth(_login(http, "jacob")["token"]) for _ in range(2))
    assert http.delete("/api/v1/tokens/current", headers=phone).status_code == 204
    r = http.get("/api/v1/me", headers=phone)
    assert r.status_code == 401 and "unknown or revoked token" in r.json()["detail"]
    assert http.get("/api/v1/me", headers=laptop).status_code == 200

    clock.set(clock() + timedelta(days=3))  # the laptop's token expired: logging out still works
    assert http.delete("/api/v1/tokens/current", headers=laptop).status_code == 204
    r = http.delete("/api/v1/tokens/current", headers=laptop)
    assert r.status_code == 401 and "unknown or revoked token" in r.json()["detail"]


def test_long_expired_tokens_are_removed_when_tokens_are_made(short_tokens, join, sqlite_url):
    """Each login adds a row; tokens that expired over 30 days ago go (of every player), while
    a token expired more recently is still refused as expired, not as unknown."""
    http, clock, _ = short_tokens
    join(http, "ann")
    join(http, "bob")
    old = _auth(_login(http, "ann")["token"])
    _login(http, "bob")
    clock.set(clock() + timedelta(days=2 + 29))  # both expired 29 days ago: kept
    recent = _auth(_login(http, "bob")["token"])
    r = http.get("/api/v1/me", headers=old)
    assert r.status_code == 401 and "expired on" in r.json()["detail"]

    clock.set(clock() + timedelta(days=2))  # ann's and bob's first expired 31 days ago
    _login(http, "bob")
    engine = sa.create_engine(sqlite_url)
    with engine.connect() as conn:
        left = conn.execute(sa.text("SELECT COUNT(*) FROM tokens")).scalar_one()
    engine.dispose()
    assert left == 2  # bob's two newer tokens
    r = http.get("/api/v1/me", headers=old)
    assert r.status_code == 401 and "unknown or revoked token" in r.json()["detail"]
    r = http.get("/api/v1/me", headers=recent)
    assert r.status_code == 401 and "expired on" in r.json()["detail"]


def test_a_password_change_revokes_every_token_of_the_player(short_tokens, seed_players):
    http, clock, app = short_tokens
    seeded = seed_players(app, ["admin", "other"])
    tokens = [seeded["admin"], _auth(_login(http, "admin")["token"])]

    def ensure_admin(password: str) -> None:  # `dicecam tracker --create-admin`, or at start
        with app.state.db.writing() as session:
            store.ensure_admin(session, "admin", password, "UTC", clock())
            session.commit()

    ensure_admin("hunter2hunter2")  # the same password: promoted, still logged in
    assert all(http.get("/api/v1/me", headers=t).json()["is_admin"] for t in tokens)

    ensure_admin("a-new-password-9")
    for t in tokens:
        r = http.get("/api/v1/me", headers=t)
        assert r.status_code == 401 and "unknown or revoked token" in r.json()["detail"]
    assert http.get("/api/v1/me", headers=seeded["other"]).status_code == 200  # not theirs
    fresh = _auth(_login(http, "admin", "a-new-password-9")["token"])
    assert http.get("/api/v1/me", headers=fresh).status_code == 200


def test_a_bad_token_lifetime_is_refused_naming_the_variable(sqlite_url, monkeypatch):
    from pydantic import ValidationError

    monkeypatch.setenv("DICECAM_TRACKER_TOKEN_DAYS", "0")
    with pytest.raises(ValidationError, match="tracker_token_days"):
        create_app(sqlite_url)
    with pytest.raises(ValueError, match="expected token_days from 1 to 36500, got 0"):
        create_app(sqlite_url, token_days=0)


_PLAYERS = sa.table(
    "players",
    *(sa.column(c) for c in ("id", "name", "name_key", "password_hash", "timezone", "is_admin")),
    sa.column("created_at", sa.DateTime(timezone=True)),
)
_TOKENS_0001 = sa.table(
    "tokens",
    sa.column("token_hash"),
    sa.column("player_id"),
    sa.column("created_at", sa.DateTime(timezone=True)),
)
_EXPIRES_AT = sa.table("tokens", sa.column("expires_at", sa.DateTime(timezone=True))).c.expires_at


def test_a_database_of_the_previous_migration_is_upgraded_in_place(
    database_url, clock, serve, password_hash
):
    """A tracker database made at revision 0001 (tokens without expiry) keeps its players and
    tokens: each token expires a year after it was made."""
    from service.tracker.security import hash_token

    engine = make_engine(database_url)
    migrate(engine, "0001")
    made = datetime.fromisoformat("2026-01-10T08:00:00+00:00")
    with engine.begin() as conn:  # rows as the tracker of revision 0001 wrote them
        conn.execute(
            sa.insert(_PLAYERS).values(
                id=1,
                name="Old",
                name_key="old",
                password_hash=password_hash,
                timezone="UTC",
                is_admin=False,
                created_at=made,
            )
        )
        conn.execute(
            sa.insert(_TOKENS_0001).values(
                token_hash=hash_token("an-old-token"), player_id=1, created_at=made
            )
        )
    engine.dispose()

    app = create_app(database_url, clock=clock)  # migrates to head at start
    with app.state.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar() == "0004"
        expires = conn.execute(sa.select(_EXPIRES_AT)).scalar_one()
    assert store.utc(expires) == made + timedelta(days=365)
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
        old = _auth("an-old-token")
        clock.set("2027-01-10T07:59:00+00:00")
        assert http.get("/api/v1/me", headers=old).json()["name"] == "Old"
        clock.set("2027-01-10T08:00:00+00:00")
        r = http.get("/api/v1/me", headers=old)
        assert r.status_code == 401 and "expired on 2027-01-10 08:00 UTC" in r.json()["detail"]
        fresh = _login(http, "old")
        assert http.get("/api/v1/me", headers=_auth(fresh["token"])).status_code == 200
    app.state.db.dispose()


def test_a_turn_sent_with_an_expired_token_waits_for_the_next_login(tmp_path, clock, serve):
    """The camera's service submits to a real tracker with a token that expired meanwhile: the
    turn stays queued in the outbox, the receipt says to log in again, and the next login
    through the service sends it at once, whatever the outbox's back-off."""
    from dataclasses import replace

    from service.app import create_app as create_service
    from service.settings import Settings
    from service.tracker_client import Outbox

    from dicecam_testing.servers import LiveServer
    from dicecam_testing.turns import QueueReader

    tracker = create_app(f"sqlite:///{tmp_path / 'remote.sqlite3'}", clock=clock, token_days=1)
    remote = serve(tracker).url
    clock.set("2026-06-15T12:00:00+00:00")
    r = httpx.post(
        f"{remote}/api/v1/players",
        json={"name": "lena", "password": "hunter2hunter2", "timezone": "UTC"},
        timeout=30,
    )
    assert r.status_code == 201, r.text
    settings = Settings(data_dir=tmp_path / "svc", tracker_url=remote, outbox_retry_s=0)
    service = create_service(settings, reader=QueueReader())
    login = {"name": "lena", "password": "hunter2hunter2"}
    with LiveServer(service) as srv, httpx.Client(base_url=srv.url, timeout=60) as c:
        token = c.post("/api/v1/tracker/tokens", json=login).json()["token"]
        clock.set("2026-06-16T12:00:00+00:00")  # a day later: the token has expired
        t = c.post("/api/v1/turns", json={"player": "lena", "tracker_token": token}).json()
        t = c.post(f"/api/v1/turns/{t['id']}/rolls", json={"values": [2, 2, 3, 4, 6, 6]}).json()
        receipt = t["submission"]
        assert t["bust"] and receipt["status"] == "queued" and receipt["login"] is True, receipt
        assert "expired on 2026-06-16 12:00 UTC (a token lasts 1 day," in receipt["detail"]
        assert "logs in to the tracker again" in receipt["detail"]
        pending = list(Outbox(tmp_path / "svc" / "outbox").entries("pending"))
        assert [(e.turn["player"], e.turn["score"]) for e in pending] == [("lena", 0)]
        assert service.state.turns.retry_queued() == 0  # not sent again with the dead token
        assert service.state.turns.retry_queued(now={t["id"]}) == 0  # nor at once
        outbox = Outbox(tmp_path / "svc" / "outbox")
        assert outbox.find(pending[0].key).attempts == pending[0].attempts  # no try made
        box = Outbox(tmp_path / "svc" / "outbox")  # its next try is an hour away
        box.write(replace(pending[0], next_attempt_at=time.time() + 3600))

        again = {**login, "turns": [t["id"]]}  # on the page that shows the turn
        r = c.post("/api/v1/tracker/tokens", json=again)  # the player logs in again
        assert r.status_code == 201, r.text
        got = c.get(f"/api/v1/turns/{t['id']}").json()["submission"]
        assert got["status"] == "submitted", got
    history = httpx.get(f"{remote}/api/v1/players/lena/turns", timeout=30).json()["turns"]
    assert [(h["score"], h["id"]) for h in history] == [(0, got["turn"]["id"])]
    assert list(Outbox(tmp_path / "svc" / "outbox").entries("pending")) == []
    tracker.state.db.dispose()
