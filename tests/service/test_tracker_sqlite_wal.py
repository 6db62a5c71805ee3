"""The tracker's SQLite engine opening a database another process is writing (trackers that
start together on one fresh file): it waits for the writer, as it does for any write."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from service.tracker.db import make_engine


def test_a_database_another_process_is_writing_is_opened_once_the_writer_is_done(
    tmp_path: Path,
) -> None:
    """SQLite answers ``PRAGMA journal_mode=WAL`` with "database is locked" at once while
    another connection writes, without waiting its busy timeout: four trackers migrating one
    fresh file at once failed so about one round in four
    (test_trackers_starting_at_once_on_one_fresh_database_migrate_it_once)."""
    path = tmp_path / "tracker.sqlite3"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("CREATE TABLE started (n INTEGER)")
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO started VALUES (1)")
    done = threading.Timer(0.5, lambda: other.execute("COMMIT"))  # the writer finishes
    done.start()
    engine = make_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("SELECT n FROM started").scalars().all() == [1]
    finally:
        done.join()
        engine.dispose()
        other.close()
