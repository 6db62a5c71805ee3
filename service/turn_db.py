"""Turns in progress on disk, so that a restart or a crash of the service loses no turn.

One SQLite row per turn (``<data dir>/turns.sqlite3``, SQLAlchemy), rewritten in one
transaction after every move: the player, the game, the moves as played (replayed through the
rules on load, so the turn's state is never stored twice), each roll's values and reading, the
outcome and the tracker submission. Photos stay out of the database and out of memory: each
roll's photo is a file ``<data dir>/turn-photos/<turn id>-<roll>-<nonce>.photo`` (written
atomically at the move's save, then read back only when the finished turn is handed to the
tracker), deleted once it has been handed over.

The file is created readable by its owner only: it holds the players' tracker tokens (needed to
submit a turn finished after a restart).

Example (not run: needs a played turn and its restore callback):
    >>> db = TurnDatabase(tmp / "turns.sqlite3", tmp / "turn-photos")  # doctest: +SKIP
    >>> db.save(session); db.load(restore)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import JSON, Boolean, Float, Integer, String, Text, delete, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, sessionmaker

from vision.atomic import atomic_write

if TYPE_CHECKING:
    from service.turns import TurnSession

__all__ = [
    "FORMAT",
    "TurnConflict",
    "TurnDatabase",
    "TurnRow",
    "move_names",
    "played_before",
    "player_ids",
    "private_file",
    "recent_ids",
]

log = logging.getLogger("dicecam.service")

FORMAT = 1
"""Version of a row's layout (``moves``, ``rolls``): rows of other versions are not loaded."""


class TurnConflict(RuntimeError):
    """The file holds moves of the turn this copy of it lacks: another process on the same
    data folder (a second ``dicecam serve``) moved it meanwhile."""


class Base(DeclarativeBase):
    pass


class TurnRow(Base):
    __tablename__ = "turns"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    format: Mapped[int] = mapped_column(Integer, default=FORMAT)
    player: Mapped[str] = mapped_column(String(80))
    game: Mapped[str] = mapped_column(String(40))
    created: Mapped[float] = mapped_column(Float, index=True)
    updated: Mapped[float] = mapped_column(Float)
    moves: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    rolls: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    """Each roll's values, off_table, missing, source, reading and photo file name (or null)."""
    outcome: Mapped[str | None] = mapped_column(String(16), nullable=True)
    submission: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    tracker_url: Mapped[str | None] = mapped_column(Text, nullable=True)
    tracker_token: Mapped[str | None] = mapped_column(Text, nullable=True)
    rules: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    """The house rules the turn is played under (null: the game as READINGS.md reads it)."""
    on_board: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    """False: the player had not made the entry score (null: on the board, as before)."""


def _add_missing_columns(engine: Any) -> None:
    """Add the columns of :class:`TurnRow` a file written by an older dicecam lacks (SQLite
    adds a nullable column in place; the rows keep their values and read null there)."""
    from sqlalchemy import inspect, text

    have = {c["name"] for c in inspect(engine).get_columns(TurnRow.__tablename__)}
    with engine.begin() as db:
        for column in TurnRow.__table__.columns:
            if column.name not in have and column.nullable:
                kind = column.type.compile(engine.dialect)
                db.execute(
                    text(f"ALTER TABLE {TurnRow.__tablename__} ADD COLUMN {column.name} {kind}")
                )


def private_file(path: Path) -> None:
    """Create ``path`` readable by its owner only (SQLite gives its -wal/-shm files the same)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    os.close(fd)
    if os.name == "posix":
        path.chmod(0o600)


class TurnDatabase:
    """Saves, loads and deletes turns (:class:`service.turns.TurnSession`) and their photos.

    Args:
        path: the SQLite file (created, with its folder).
        photo_dir: where the photos of unfinished turns are kept (created).
    """

    def __init__(self, path: str | Path, photo_dir: str | Path) -> None:
        from service.tracker.db import make_engine

        self.path = Path(path).expanduser()
        self.photo_dir = Path(photo_dir).expanduser()
        self.photo_dir.mkdir(parents=True, exist_ok=True)
        private_file(self.path)
        self.engine = make_engine(f"sqlite:///{self.path}")
        Base.metadata.create_all(self.engine)
        _add_missing_columns(self.engine)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._lock = threading.Lock()  # one writer at a time in this process

    # -- photos --------------------------------------------------------------------------------
    def _photo_files(self, turn_id: str, index: int) -> list[Path]:
        """The files a roll's photo may be in: ``<id>-<roll>-<nonce>.photo``, or
        ``<id>-<roll>.photo`` as an older dicecam named it."""
        return [
            *self.photo_dir.glob(f"{turn_id}-{index}-*.photo"),
            *self.photo_dir.glob(f"{turn_id}-{index}.photo"),
        ]

    def _sync_photos(
        self, session: TurnSession, written: list[tuple[Any, Path]]
    ) -> tuple[list[str | None], list[Path]]:
        """Write the photos the turn holds in memory, each to a new file (two dicecams on one
        folder never share one), adding each roll and its file to ``written``; returns each
        roll's file name and the files to delete once the row is committed (photos the turn
        has let go of)."""
        names: list[str | None] = []
        stale: list[Path] = []
        for i, roll in enumerate(session.rolls):
            if roll.held is not None:
                path = self.photo_dir / f"{session.id}-{i}-{uuid.uuid4().hex[:8]}.photo"
                atomic_write(path, roll.held, mode=0o600)
                names.append(path.name)
                written.append((roll, path))
            elif roll.photo_file is not None:
                names.append(roll.photo_file.name)
            else:
                names.append(None)
                stale += self._photo_files(session.id, i)
        return names, stale

    def _photo(self, name: str | None) -> Path | None:
        if not name:
            return None
        path = self.photo_dir / Path(name).name
        if not path.is_file():
            log.warning("turn photo %s is gone: the turn goes on without it", path)
            return None
        return path

    # -- rows ----------------------------------------------------------------------------------
    def save(self, session: TurnSession) -> None:
        """Write the whole turn in one transaction (photos first, as files).

        Raises:
            TurnConflict: the file holds moves this copy of the turn lacks (nothing written).
        """
        written: list[tuple[Any, Path]] = []
        try:
            names, stale = self._sync_photos(session, written)
            self._write_row(session, names)
        except BaseException:
            for _, path in written:  # no row names them: nothing ever would read them
                path.unlink(missing_ok=True)
            raise
        for path in stale:
            path.unlink(missing_ok=True)
        for roll, path in written:  # on disk only from now on: read back when it is sent
            roll.held, roll.photo_file = None, path

    def _write_row(self, session: TurnSession, names: list[str | None]) -> None:
        rolls = [
            {**r.to_dict(), "photo": name} for r, name in zip(session.rolls, names, strict=True)
        ]
        row = TurnRow(
            id=session.id,
            format=FORMAT,
            player=session.player,
            game=session.game,
            created=session.created,
            updated=time.time(),
            moves=list(session.moves),
            rolls=rolls,
            outcome=session.outcome,
            submission=session.submission,
            tracker_url=session.tracker_url,
            tracker_token=session.tracker_token,
            rules=session.house_rules or None,
            on_board=session.on_board,
        )
        with self._lock, self._sessions() as db, db.begin():  # BEGIN IMMEDIATE: one writer
            stored = db.get(TurnRow, session.id)
            if stored is not None and not played_before(stored.moves, session.moves):
                raise TurnConflict(
                    f"turn {session.id} was moved by another dicecam on the same data folder "
                    f"(the file holds {len(stored.moves)} moves, {move_names(stored.moves)}; this copy "
                    f"played {move_names(session.moves)})"
                )
            db.merge(row)

    def load(
        self,
        restore: Callable[[TurnRow, list[Path | None]], TurnSession | None],
        since: float,
        ids: Collection[str] | None = None,
    ) -> list[TurnSession]:
        """The turns started at or after ``since`` (epoch seconds; only those of ``ids`` when
        given), least recently saved first, rebuilt by ``restore`` from each row and its photos'
        files (None: none, or gone); rows ``restore`` cannot use are skipped with a warning."""
        query = select(TurnRow).where(TurnRow.created >= since, TurnRow.format == FORMAT)
        if ids is not None:
            query = query.where(TurnRow.id.in_(list(ids)))
        with self._sessions() as db:
            rows = list(db.scalars(query.order_by(TurnRow.updated)))
        out = []
        for row in rows:
            photos = [self._photo(r.get("photo")) for r in row.rolls]
            try:
                session = restore(row, photos)
            except Exception as exc:
                log.warning("turn %s could not be restored and is skipped: %s", row.id, exc)
                continue
            if session is not None:
                out.append(session)
        return out

    def players(self, since: float) -> list[tuple[str, str]]:
        """Each row started at or after ``since``: its id and player."""
        return player_ids(self._sessions, TurnRow, since)

    def recent(self, since: float, limit: int) -> list[str]:
        """The ids of the ``limit`` turns started at or after ``since`` saved last, last first."""
        return recent_ids(self._sessions, TurnRow, FORMAT, since, limit)

    def finished(self, since: float) -> list[tuple[str, dict[str, Any] | None]]:
        """Each finished turn started at or after ``since``: its id and submission."""
        with self._sessions() as db:
            query = select(TurnRow.id, TurnRow.submission).where(
                TurnRow.created >= since, TurnRow.format == FORMAT, TurnRow.outcome.is_not(None)
            )
            return [(i, s) for i, s in db.execute(query)]

    def delete(self, turn_ids: Iterable[str] = (), *, before: float | None = None) -> None:
        """Delete these turns, and those started before ``before``, with their photos."""
        ids = list(turn_ids)
        with self._lock, self._sessions() as db, db.begin():
            if ids:
                db.execute(delete(TurnRow).where(TurnRow.id.in_(ids)))
            if before is not None:
                old = list(db.scalars(select(TurnRow.id).where(TurnRow.created < before)))
                db.execute(delete(TurnRow).where(TurnRow.created < before))
                ids += old
        for turn_id in ids:
            for path in self.photo_dir.glob(f"{turn_id}-*.photo"):
                path.unlink(missing_ok=True)

    def remove_orphan_photos(self) -> int:
        """Delete photo files of turns the database does not hold; returns how many."""
        with self._sessions() as db:
            known = set(db.scalars(select(TurnRow.id)))
        removed = 0
        for path in self.photo_dir.glob("*.photo"):
            if path.name.split("-", 1)[0] not in known:
                path.unlink(missing_ok=True)
                removed += 1
        return removed

    def dispose(self) -> None:
        self.engine.dispose()


def recent_ids(
    sessions: Callable[[], Any], table: Any, version: int, since: float, limit: int
) -> list[str]:
    """The ids of the ``limit`` rows of ``table`` (a row class with ``id``, ``format``,
    ``created`` and ``updated``) of layout ``version`` started at or after ``since`` saved
    last, last first."""
    query = (
        select(table.id)
        .where(table.created >= since, table.format == version)
        .order_by(table.updated.desc())
        .limit(max(limit, 0))
    )
    with sessions() as db:
        return list(db.scalars(query))


def player_ids(sessions: Callable[[], Any], table: Any, since: float) -> list[tuple[str, str]]:
    """Each row of ``table`` (a row class with ``id``, ``player`` and ``created``) started at or
    after ``since``: its id and player."""
    with sessions() as db:
        query = select(table.id, table.player).where(table.created >= since)
        return [(i, p) for i, p in db.execute(query)]


def played_before(stored: list[dict[str, Any]], moves: list[dict[str, Any]]) -> bool:
    """Whether the ``stored`` moves start ``moves``. A move written by an older dicecam lacks
    the fields added since (``missing``), which read as their default: 0, none."""

    def plain(move: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in move.items() if v not in (0, None, False)}

    return len(stored) <= len(moves) and all(
        plain(a) == plain(b) for a, b in zip(stored, moves, strict=False)
    )


def move_names(moves: list[dict[str, Any]]) -> str:
    return ", ".join(str(m.get("op")) for m in moves) or "none"
