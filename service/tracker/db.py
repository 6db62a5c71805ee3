"""Engines and migrations: SQLite by default (a file, nothing to set up), PostgreSQL by URL."""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from sqlalchemy import URL, Connection, Engine, create_engine, event, make_url, text
from sqlalchemy.exc import NoSuchModuleError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

__all__ = [
    "Database",
    "database_url_of",
    "default_database_url",
    "make_engine",
    "make_sessionmaker",
    "migrate",
]

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_PG_MIGRATION_LOCK = 0x0D1CECA  # advisory lock id: several processes may start at once


def default_database_url() -> str:
    """``DICECAM_TRACKER_DATABASE_URL``, else a SQLite file under ``Settings().data_dir``."""
    from service.settings import Settings

    settings = Settings()
    url = getattr(settings, "tracker_database_url", None)
    if url:
        return url
    return f"sqlite:///{Path(settings.data_dir).expanduser() / 'tracker.sqlite3'}"


def _expected(database_url: str) -> str:
    return (
        "expected a database URL like sqlite:///path/tracker.sqlite3 or "
        f"postgresql+psycopg://user@host/db, got {database_url!r}"
    )


def database_url_of(database_url: str) -> URL:
    """``database_url`` parsed, or ValueError unless it is a SQLite or PostgreSQL URL."""
    try:
        url = make_url(database_url)
    except Exception as exc:
        raise ValueError(_expected(database_url)) from exc
    if url.get_backend_name() not in ("sqlite", "postgresql"):
        raise ValueError(_expected(database_url))
    return url


def make_engine(database_url: str, *, immediate: bool = True) -> Engine:
    """An engine tuned for concurrent writers.

    SQLite: WAL journal, 30 s busy timeout and (with ``immediate``) ``BEGIN IMMEDIATE`` so that
    concurrent writers queue instead of failing with "database is locked". The file's folder is
    created.
    """
    url = database_url_of(database_url)
    if url.get_backend_name() == "postgresql":
        try:
            return create_engine(url, pool_size=10, max_overflow=20, pool_pre_ping=True)
        except (ImportError, NoSuchModuleError) as exc:
            raise ValueError(
                f"{_expected(database_url)}; its driver is not installed ({exc}): pip install 'dicecam[postgres]'"
            ) from exc

    memory = _in_memory(url)
    if memory:
        engine = create_engine(url, connect_args={"check_same_thread": False}, poolclass=StaticPool)
    else:
        Path(url.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": 30},
            pool_size=10,
            max_overflow=20,
        )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record) -> None:  # pragma: no cover - driver callback
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves, below
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA busy_timeout=30000")
        if not memory:
            _wal(cur)
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn) -> None:  # pragma: no cover - driver callback
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


def _in_memory(database_url: str | URL) -> bool:
    """Whether ``database_url`` names an in-memory SQLite database (``sqlite://``); False for
    one that does not parse (:func:`make_engine` names what it expected)."""
    try:
        url = make_url(database_url)
    except Exception:
        return False
    return url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:")


class Database:
    """The tracker's database: sessions that write, and sessions that only read.

    On SQLite one writer at a time: writers of this process queue on a lock (fair and fast),
    other processes wait on SQLite's busy timeout; readers use WAL snapshots and never wait.
    """

    def __init__(self, database_url: str) -> None:
        self.url = database_url
        self.temporary: Path | None = None
        """Where the private database of an in-memory URL (``sqlite://``) lies, else None."""
        if _in_memory(database_url):
            # one in-memory connection cannot serve the server's threads at once (overlapping
            # requests failed with 500s): a temporary file, removed with this object
            self.temporary = Path(tempfile.mkdtemp(prefix="dicecam-tracker-"))
            database_url = f"sqlite:///{self.temporary / 'tracker.sqlite3'}"
            self._cleanup = weakref.finalize(self, shutil.rmtree, self.temporary, True)
        self.engine = make_engine(database_url)
        self.sqlite = self.engine.dialect.name == "sqlite"
        self.read_engine = (
            make_engine(database_url, immediate=False) if self.sqlite else self.engine
        )
        self._write_lock = threading.Lock() if self.sqlite else None
        self.writer = make_sessionmaker(self.engine)
        self.reader = make_sessionmaker(self.read_engine)

    @contextmanager
    def writing(self) -> Iterator[Session]:
        """A session to write with; commit inside, anything uncommitted is rolled back."""
        lock = self._write_lock or nullcontext()
        with lock, self.writer() as session:
            yield session

    def reading(self) -> Session:
        return self.reader()

    def dispose(self) -> None:
        self.engine.dispose()
        if self.read_engine is not self.engine:
            self.read_engine.dispose()
        if self.temporary is not None:
            self._cleanup()


def _wal(cur: sqlite3.Cursor, seconds: float = 30.0) -> None:
    """``PRAGMA journal_mode=WAL``, asked again while another process holds the file: on a
    fresh database opened by several processes at once SQLite answers "database is locked"
    there at once, without waiting its busy timeout (trackers starting together)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            cur.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def migrate(engine: Engine, revision: str = "head") -> None:
    """Run the Alembic migrations shipped in this package up to ``revision``.

    On SQLite they run with foreign keys off, checked before the commit: a migration that
    rebuilds a table others point to (Alembic's batch mode: copy, drop, rename) would otherwise
    have the drop's cascade delete every row that points to it (a player's tokens, turns and
    rolls). A row left pointing nowhere is refused, the database as it was."""
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.connect() as conn:
        sqlite = conn.dialect.name == "sqlite"
        raw = conn.connection.dbapi_connection
        if sqlite:  # on the driver's connection, outside a transaction, or SQLite ignores it
            raw.execute("PRAGMA foreign_keys=OFF")
        try:
            with conn.begin():
                if conn.dialect.name == "postgresql":
                    lock = text("SELECT pg_advisory_xact_lock(:k)")
                    conn.execute(lock, {"k": _PG_MIGRATION_LOCK})
                _refuse_newer(conn, cfg, engine)
                cfg.attributes["connection"] = conn
                command.upgrade(cfg, revision)
                if sqlite:
                    _check_keys(conn, engine)
        finally:
            if sqlite:
                raw.execute("PRAGMA foreign_keys=ON")


def _check_keys(conn: Connection, engine: Engine) -> None:
    """ValueError (the migration rolled back) when a row points to none after migrating."""
    broken = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
    if broken:
        tables = sorted({str(row[0]) for row in broken})
        raise ValueError(
            f"migrating the tracker database {engine.url.render_as_string(hide_password=True)} "
            f"left {len(broken)} rows of {', '.join(tables)} pointing to none: it was left as "
            "it was"
        )


def _refuse_newer(conn: Connection, cfg: object, engine: Engine) -> None:
    """ValueError, the database untouched, when its schema is at a revision these migrations
    do not hold (a newer dicecam wrote it): Alembic's own error was a traceback at start."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(cfg)
    known = {s.revision for s in script.walk_revisions()}
    unknown = sorted(set(MigrationContext.configure(conn).get_current_heads()) - known)
    if unknown:
        raise ValueError(
            f"the tracker database {engine.url.render_as_string(hide_password=True)} is at "
            f"schema revision {', '.join(unknown)}, which this dicecam does not know (it knows "
            f"up to {script.get_current_head()}): a newer dicecam wrote it; upgrade dicecam to "
            "open it (it was left as it is)"
        )
