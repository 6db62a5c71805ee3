"""A SQLite database of the service's stores (a TurnDatabase, a SheetDatabase) that cannot be
written, or whose file can grow no more, for as long as a block runs: a save made to fail as on
a read-only or full disk, even as root."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event

__all__ = ["FULL", "READ_ONLY", "full", "pragma", "read_only"]

READ_ONLY = "attempt to write a readonly database"
"""SQLite's words for a write to a database that cannot be written."""
FULL = "database or disk is full"
"""SQLite's words for a write that needs a page its file cannot take."""


@contextmanager
def pragma(setting: str, *databases: Any) -> Iterator[None]:
    """Each connection of the databases (a TurnDatabase, a SheetDatabase) opened meanwhile
    runs ``PRAGMA setting``; the pooled ones are let go of before and after."""

    def on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.execute(f"PRAGMA {setting}")

    for db in databases:
        event.listen(db.engine, "connect", on_connect)
        db.engine.dispose()
    try:
        yield
    finally:
        for db in databases:
            event.remove(db.engine, "connect", on_connect)
            db.engine.dispose()


def read_only(*databases: Any) -> Any:
    """The databases cannot be written meanwhile, nor read in the service's transactions
    (BEGIN IMMEDIATE asks to write): as a file the service may not write."""
    return pragma("query_only = ON", *databases)


def full(db: Any) -> Any:
    """The database's file can take no page more meanwhile (a full disk); it still reads."""
    with db.engine.connect() as conn:
        pages = conn.exec_driver_sql("PRAGMA page_count").scalar()
        assert conn.exec_driver_sql("PRAGMA freelist_count").scalar() == 0
    return pragma(f"max_page_count = {pages}", db)
