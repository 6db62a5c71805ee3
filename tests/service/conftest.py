"""Fixtures for the service tests: a settable clock, a real uvicorn server on a free port, and a
throwaway PostgreSQL server started from Debian's binaries (skips with a reason when absent)."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest


class SettableClock:
    """The tracker's clock in tests: ``clock.set("2026-03-10T14:00:00+00:00")``."""

    def __init__(self, now: datetime | str = "2026-06-15T12:00:00+00:00") -> None:
        self.set(now)

    def set(self, now: datetime | str) -> None:
        self.now = datetime.fromisoformat(now) if isinstance(now, str) else now
        if self.now.tzinfo is None:
            raise ValueError("SettableClock needs an aware datetime")

    def __call__(self) -> datetime:
        return self.now.astimezone(UTC)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bound_socket(port: int = 0) -> socket.socket:
    """A TCP socket bound to ``127.0.0.1:port`` (0: a free port), not listening yet: the port is
    this process's from now on, so a test process beside it (``pytest -n 2``) cannot pick it
    between its choice and its use. ``SO_REUSEADDR`` lets a server listen on it later."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError:
        sock.close()
        raise
    return sock


class LiveServer:
    """A real uvicorn server for ``app`` in a background thread, on a free port (or ``port``),
    bound as it is made."""

    def __init__(self, app, *, root_path: str = "", port: int | None = None) -> None:
        import uvicorn

        self.socket = bound_socket(port or 0)
        self.port = self.socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}{root_path}"
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", timeout_graceful_shutdown=1
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True
        )

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.socket.close()


@pytest.fixture
def unused_port() -> Iterator[int]:
    """A TCP port nothing listens on (yet): a connection to it is refused until the test serves
    on it (``serve(app, port=unused_port)``). It stays bound for the test, so no other test
    process takes it meanwhile."""
    with bound_socket() as sock:
        yield sock.getsockname()[1]


@pytest.fixture
def clock() -> SettableClock:
    return SettableClock()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'tracker.sqlite3'}"


# -- PostgreSQL -------------------------------------------------------------------------------


class ThrowawayPostgres:
    """initdb + pg_ctl from ``/usr/lib/postgresql/*/bin`` in a temp dir, on a free port.

    As root the binaries run as the ``postgres`` user (``runuser``). Trust auth on 127.0.0.1.
    """

    def __init__(self) -> None:
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not bins:
            raise FileNotFoundError(
                "PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin/initdb); "
                "install Debian's postgresql package to run these tests"
            )
        self.bin = Path(bins[-1]).parent
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="dicecam-pg-"))
        self.user = "postgres"
        self._as: list[str] = []
        if os.geteuid() == 0:
            if shutil.which("runuser") is None:
                raise FileNotFoundError("running as root and `runuser` is missing")
            shutil.chown(self.dir, user="postgres")
            self._as = ["runuser", "-u", "postgres", "--"]
        else:
            import getpass

            self.user = getpass.getuser()

    def _run(self, *cmd: str) -> None:
        proc = subprocess.run([*self._as, *cmd], capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd[0]} failed: {proc.stderr.strip() or proc.stdout.strip()}")

    def start(self) -> ThrowawayPostgres:
        data = self.dir / "data"
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(data),
            "-U",
            self.user,
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-sync",
        )
        opts = (
            f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c max_connections=200 -c synchronous_commit=off"
        )
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(self.dir / "log"),
            "-o",
            opts,
            "-w",
            "-t",
            "60",
            "start",
        )
        return self

    def stop(self) -> None:
        try:
            self._run(
                str(self.bin / "pg_ctl"), "-D", str(self.dir / "data"), "-m", "immediate", "stop"
            )
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql+psycopg://{self.user}@127.0.0.1:{self.port}/{dbname}"

    def create_database(self) -> str:
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(
            f"host=127.0.0.1 port={self.port} user={self.user} dbname=postgres", autocommit=True
        ) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


@pytest.fixture(scope="session")
def postgres() -> Iterator[ThrowawayPostgres]:
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (pip install 'dicecam[postgres]')")
    try:
        server = ThrowawayPostgres().start()
    except (FileNotFoundError, RuntimeError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"no throwaway PostgreSQL server: {exc}")
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request, tmp_path: Path) -> str:
    """A fresh empty database: a SQLite file, then a new database on the throwaway PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'tracker.sqlite3'}"
    return request.getfixturevalue("postgres").create_database()


@pytest.fixture
def serve():
    """``server = serve(app)``: a real uvicorn server on a free port, stopped after the test."""
    started: list[LiveServer] = []

    def start(app, *, root_path: str = "", port: int | None = None) -> LiveServer:
        server = LiveServer(app, root_path=root_path, port=port).__enter__()
        started.append(server)
        return server

    yield start
    for server in reversed(started):
        server.__exit__(None, None, None)


QUICK_ARGON2 = {"time_cost": 1, "memory_cost": 1024, "parallelism": 1}
"""argon2id's parameters for the tracker in the test process: ``quick_password_hashing``."""


@pytest.fixture(scope="session", autouse=True)
def quick_password_hashing() -> Iterator[object]:
    """The tracker served in this process hashes and checks passwords with argon2id at
    :data:`QUICK_ARGON2` (1 MiB, one pass) instead of 64 MiB and three: the same code and hash
    format at a hundredth of the cost (a player's join, a hash and a check, took 0.3-1.6 s
    here). Yields the real hasher, whose parameters ``test_tracker_password_cost`` checks; a
    ``dicecam`` run as a subprocess hashes with it."""
    from argon2 import PasswordHasher

    from service.tracker import security

    real = security._hasher
    security._hasher = PasswordHasher(**QUICK_ARGON2)
    yield real
    security._hasher = real


@pytest.fixture(scope="session")
def password_hash(quick_password_hashing) -> str:
    """One argon2 hash of ``PASSWORD`` computed once: seeding many players stays fast."""
    from service.tracker.security import hash_password

    return hash_password(PASSWORD)


PASSWORD = "hunter2hunter2"


@pytest.fixture
def seed_players(password_hash):
    """``seed_players(app, names, tz="UTC") -> {name: auth headers}`` straight into the database
    (the password is ``hunter2hunter2``); the HTTP registration path has its own tests."""

    def seed(app, names, tz: str = "UTC") -> dict[str, dict[str, str]]:
        from service.tracker import store
        from service.tracker.schemas import Registration

        out = {}
        with app.state.sessionmaker() as session:
            now = app.state.clock()
            for name in names:
                reg = Registration(name=name, password=PASSWORD, timezone=tz)
                player = store.register(session, reg, now, password_hash=password_hash)
                out[name] = {"Authorization": f"Bearer {store.issue_token(session, player, now)}"}
            session.commit()
        return out

    return seed


def midday_zone_name(now: datetime | None = None) -> str:
    """An IANA zone where it is about 13:00 right now (for tests that use the real clock)."""
    hour = (now or datetime.now(UTC)).hour
    offset = 13 - hour  # -10 .. 13
    return "Etc/GMT" if offset == 0 else f"Etc/GMT{-offset:+d}"


@pytest.fixture
def midday_zone() -> str:
    return midday_zone_name()


# -- the tracker over a real socket ------------------------------------------------------


@pytest.fixture
def tracker_app(database_url, clock):
    app = _create_tracker(database_url, clock=clock)
    yield app
    app.state.db.dispose()


@pytest.fixture
def tracker(tracker_app, clock, serve):
    with httpx.Client(base_url=serve(tracker_app).url, timeout=30) as http:
        yield http, clock


@pytest.fixture
def sqlite_tracker(sqlite_url, clock, serve):
    app = _create_tracker(sqlite_url, clock=clock)
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
        yield http, clock
    app.state.db.dispose()


def join_player(
    http: httpx.Client, name: str, tz: str = "UTC", password: str = "hunter2hunter2"
) -> dict:
    r = http.post("/api/v1/players", json={"name": name, "password": password, "timezone": tz})
    assert r.status_code == 201, r.text
    r = http.post("/api/v1/tokens", json={"name": name, "password": password})
    assert r.status_code == 201, r.text
    return {"Authorization": f"Bearer {r.json()['token']}"}


def turn_body(player: str, score: int = 600, **kw) -> dict:
    return {"player": player, "score": score, "idempotency_key": str(uuid.uuid4()), **kw}


def _create_tracker(*args, **kw):
    from service.tracker import create_app

    return create_app(*args, **kw)


@pytest.fixture
def join():
    """``join(http, name, tz="UTC") -> auth headers``: register over HTTP, then log in."""
    return join_player


@pytest.fixture
def turn():
    """``turn(player, score=600, **fields) -> body`` for ``POST /api/v1/turns``, fresh key."""
    return turn_body


class SharedChromium:
    """One Debian chromium under Playwright, kept open across consecutive tests that ask for
    the ``chromium`` fixture (a launch took 1-2.5 s a test here)."""

    def __init__(self) -> None:
        self.playwright = None
        self.browser = None

    def get(self):
        if self.browser is None or not self.browser.is_connected():
            from playwright.sync_api import sync_playwright

            from dicecam_testing.page import chromium_or_skip

            path = chromium_or_skip()
            self.close()
            self.playwright = sync_playwright().start()
            self.browser = self.playwright.chromium.launch(
                executable_path=path, args=["--no-sandbox"]
            )
        return self.browser

    def close(self) -> None:
        browser, playwright, self.browser, self.playwright = (
            self.browser,
            self.playwright,
            None,
            None,
        )
        try:
            if browser is not None and browser.is_connected():
                browser.close()
        finally:
            if playwright is not None:
                playwright.stop()


_chromium = SharedChromium()


@pytest.fixture
def chromium() -> Iterator[object]:
    """Debian's chromium under Playwright (the test is skipped, saying why, without it). The
    browser is shared with the tests before and after that ask for it too; every context and
    page a test opened is closed after it, so each starts from fresh contexts (cookies,
    storage, permissions)."""
    browser = _chromium.get()
    yield browser
    for context in browser.contexts:
        context.close()


@pytest.fixture(autouse=True)
def _own_playwright(request) -> None:
    """A test without ``chromium`` may start Playwright itself (a chromium fed a fake camera):
    the shared one is closed first, as Playwright's sync API runs one at a time per thread."""
    if "chromium" not in request.fixturenames:
        _chromium.close()


@pytest.fixture(scope="session", autouse=True)
def _close_shared_chromium() -> Iterator[None]:
    yield
    _chromium.close()
