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
import time
import uuid
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import JSON, Boolean, Float, Integer, String, Text, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from service.game_db import GameDatabase, TurnConflict
from vision.atomic import atomic_write

if TYPE_CHECKING:
    from service.turns import TurnSession

__all__ = ["FORMAT", "TurnConflict", "TurnDatabase", "TurnRow"]

log = logging.getLogger("dicecam.service")

FORMAT = 1
"""Version of a row's layout (``moves``, ``rolls``): rows of other versions are not loaded."""


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


class TurnDatabase(GameDatabase):
    """Saves, loads and deletes turns (:class:`service.turns.TurnSession`) and their photos.

    Args:
        path: the SQLite file (created, with its folder).
        photo_dir: where the photos of unfinished turns are kept (created).
    """

    row = TurnRow
    version = FORMAT

    def __init__(self, path: str | Path, photo_dir: str | Path) -> None:
        self.photo_dir = Path(photo_dir).expanduser()
        self.photo_dir.mkdir(parents=True, exist_ok=True)
        super().__init__(path)
        _add_missing_columns(self.engine)

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
        self._merge(row, f"turn {session.id}")

    def load(
        self,
        restore: Callable[[TurnRow, list[Path | None]], TurnSession | None],
        since: float,
        ids: Collection[str] | None = None,
    ) -> list[TurnSession]:
        """The turns started at or after ``since`` (epoch seconds; only those of ``ids`` when
        given), least recently saved first, rebuilt by ``restore`` from each row and its photos'
        files (None: none, or gone); rows ``restore`` cannot use are skipped with a warning."""
        out = []
        for row in self._rows(since, ids):
            photos = [self._photo(r.get("photo")) for r in row.rolls]
            try:
                session = restore(row, photos)
            except Exception as exc:
                log.warning("turn %s could not be restored and is skipped: %s", row.id, exc)
                continue
            if session is not None:
                out.append(session)
        return out

    def finished(self, since: float) -> list[tuple[str, dict[str, Any] | None]]:
        """Each finished turn started at or after ``since``: its id and submission."""
        with self._sessions() as db:
            query = select(TurnRow.id, TurnRow.submission).where(
                TurnRow.created >= since, TurnRow.format == FORMAT, TurnRow.outcome.is_not(None)
            )
            return [(i, s) for i, s in db.execute(query)]

    def delete(self, turn_ids: Iterable[str] = (), *, before: float | None = None) -> None:
        """Delete these turns, and those started before ``before``, with their photos."""
        for turn_id in self._delete_rows(list(turn_ids), before):
            for path in self.photo_dir.glob(f"{turn_id}-*.photo"):
                path.unlink(missing_ok=True)

    def remove_orphan_photos(self) -> int:
        """Delete photo files of turns the database does not hold; returns how many. The files
        are listed before the turns are read: a turn's row is saved before any photo of it, so
        a photo another dicecam on the folder saves meanwhile is either not listed or of a turn
        read (listing them after lost the photo of a turn started between the two)."""
        files = list(self.photo_dir.glob("*.photo"))
        with self._sessions() as db:
            known = set(db.scalars(select(TurnRow.id)))
        removed = 0
        for path in files:
            if path.name.split("-", 1)[0] not in known:
                path.unlink(missing_ok=True)
                removed += 1
        return removed
