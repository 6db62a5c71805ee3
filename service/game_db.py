"""What the turn and sheet databases share (:mod:`service.turn_db`, :mod:`service.sheet_db`).

A SQLite file readable by its owner only, one row per game, rewritten in one transaction after
every move and refused when the file holds moves of the game this copy lacks (another
``dicecam serve`` on the same data folder moved it), and the queries by start time.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Collection
from pathlib import Path
from typing import Any, ClassVar

from sqlalchemy import delete, select
from sqlalchemy.orm import sessionmaker

__all__ = ["GameDatabase", "TurnConflict"]


class TurnConflict(RuntimeError):
    """The file holds moves of the turn this copy of it lacks: another process on the same
    data folder (a second ``dicecam serve``) moved it meanwhile."""


class GameDatabase:
    """One SQLite file of games saved move by move, a ``row`` each.

    Subclasses set ``row`` (a row class with ``id``, ``format``, ``player``, ``created``,
    ``updated`` and ``moves``) and ``version`` (the layout of the rows they load).

    Args:
        path: the SQLite file (created, with its folder, readable by its owner only).
    """

    row: ClassVar[Any]
    version: ClassVar[int]

    def __init__(self, path: str | Path) -> None:
        from service.tracker.db import make_engine

        self.path = Path(path).expanduser()
        _private_file(self.path)
        self.engine = make_engine(f"sqlite:///{self.path}")
        self.row.metadata.create_all(self.engine)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._lock = threading.Lock()  # one writer at a time in this process

    def _merge(self, row: Any, what: str) -> None:
        """Write ``row`` in one transaction (``what``: the game, as an error names it).

        Raises:
            TurnConflict: the file holds moves ``row`` lacks (nothing written).
        """
        with self._lock, self._sessions() as db, db.begin():  # BEGIN IMMEDIATE: one writer
            stored = db.get(self.row, row.id)
            if stored is not None and not _played_before(stored.moves, row.moves):
                raise TurnConflict(
                    f"{what} was moved by another dicecam on the same data folder "
                    f"(the file holds {len(stored.moves)} moves, {_move_names(stored.moves)}; "
                    f"this copy played {_move_names(row.moves)})"
                )
            db.merge(row)

    def _rows(self, since: float, ids: Collection[str] | None) -> list[Any]:
        """The rows of this layout started at or after ``since`` (only those of ``ids`` when
        given), least recently saved first."""
        table = self.row
        query = select(table).where(table.created >= since, table.format == self.version)
        if ids is not None:
            query = query.where(table.id.in_(list(ids)))
        with self._sessions() as db:
            return list(db.scalars(query.order_by(table.updated)))

    def players(self, since: float) -> list[tuple[str, str]]:
        """Each row started at or after ``since``: its id and player."""
        with self._sessions() as db:
            query = select(self.row.id, self.row.player).where(self.row.created >= since)
            return [(i, p) for i, p in db.execute(query)]

    def recent(self, since: float, limit: int) -> list[str]:
        """The ids of the ``limit`` rows of this layout started at or after ``since`` saved
        last, last first."""
        table = self.row
        query = (
            select(table.id)
            .where(table.created >= since, table.format == self.version)
            .order_by(table.updated.desc())
            .limit(max(limit, 0))
        )
        with self._sessions() as db:
            return list(db.scalars(query))

    def _delete_rows(self, ids: list[str], before: float | None) -> list[str]:
        """Delete the rows of ``ids`` and those started before ``before`` in one transaction;
        returns ``ids`` and the ids of the latter."""
        table = self.row
        with self._lock, self._sessions() as db, db.begin():
            if ids:
                db.execute(delete(table).where(table.id.in_(ids)))
            if before is not None:
                old = list(db.scalars(select(table.id).where(table.created < before)))
                db.execute(delete(table).where(table.created < before))
                ids = [*ids, *old]
        return ids

    def dispose(self) -> None:
        """Close the engine's connections."""
        self.engine.dispose()


def _private_file(path: Path) -> None:
    """Create ``path`` readable by its owner only (SQLite gives its -wal/-shm files the same)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    os.close(fd)
    if os.name == "posix":
        path.chmod(0o600)


def _played_before(stored: list[dict[str, Any]], moves: list[dict[str, Any]]) -> bool:
    """Whether the ``stored`` moves start ``moves``. A move written by an older dicecam lacks
    the fields added since (``missing``), which read as their default: 0, none."""

    def plain(move: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in move.items() if v not in (0, None, False)}

    return len(stored) <= len(moves) and all(
        plain(a) == plain(b) for a, b in zip(stored, moves, strict=False)
    )


def _move_names(moves: list[dict[str, Any]]) -> str:
    """The ``op`` of each move, comma separated (``none`` for no move)."""
    return ", ".join(str(m.get("op")) for m in moves) or "none"
