"""A migration that rebuilds a table others point to, on SQLite (Alembic's batch mode, which
env.py's ``render_as_batch`` writes for SQLite: copy the table, drop it, rename the copy).

The tracker's connections run with foreign keys on, and the drop's cascade deleted every token,
turn and roll of every player (0004's downgrade did: 9ec5b91). ``migrate`` now runs the
migrations with foreign keys off and checks them before the commit.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import sqlalchemy as sa

from service.tracker import db
from service.tracker.db import make_engine, migrate

TABLES = ("players", "tokens", "turns", "rolls")
SEED = [
    "INSERT INTO players (id, name, name_key, password_hash, timezone, is_admin, created_at)"
    " VALUES (1, 'Ann', 'ann', 'h', 'UTC', 0, '2026-01-01'),"
    " (2, 'Bob', 'bob', 'h', 'Asia/Tokyo', 0, '2026-01-02')",
    "INSERT INTO tokens (id, token_hash, player_id, created_at, expires_at)"
    " VALUES (1, 'a', 1, '2026-01-01', '2027-01-01'), (2, 'b', 2, '2026-01-02', '2027-01-02')",
    "INSERT INTO turns (id, player_id, round, day, score, comment, game, idempotency_key,"
    " submitted_at, local_time) VALUES"
    " (1, 1, 2026, '2026-01-03', 600, '', 'morning-roll', 'k1', '2026-01-03', '07:00'),"
    " (2, 2, 2026, '2026-01-03', 0, '', 'morning-roll', 'k2', '2026-01-03', '08:00')",
    "INSERT INTO rolls (id, turn_id, position, \"values\") VALUES (1, 1, 0, '[1, 5]'),"
    " (2, 2, 0, '[2, 3]')",
]


def _seeded(tmp_path: Path) -> sa.Engine:
    """A tracker database at head holding two players, their tokens, turns and rolls."""
    engine = make_engine(f"sqlite:///{tmp_path / 'tracker.sqlite3'}")
    migrate(engine)
    with engine.begin() as conn:
        for statement in SEED:
            conn.exec_driver_sql(statement)
    return engine


def _rows(engine: sa.Engine) -> dict[str, list[tuple]]:
    with engine.connect() as conn:
        return {
            name: [tuple(r) for r in conn.exec_driver_sql(f"SELECT * FROM {name} ORDER BY id")]
            for name in TABLES
        }


NEXT = '''"""A test's next migration."""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"


def upgrade() -> None:
{body}


def downgrade() -> None:
    pass
'''

REBUILD_PLAYERS = """\
    with op.batch_alter_table("players", recreate="always") as batch:
        batch.add_column(sa.Column("nickname", sa.String(40), nullable=True))"""

DELETE_A_PLAYER = """\
    op.execute("DELETE FROM players WHERE id = 2")"""


def _with_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    """The shipped migrations and a 0005 doing ``body``, as the ones ``migrate`` runs."""
    copy = tmp_path / "migrations"
    shutil.copytree(db.MIGRATIONS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "versions" / "0005_next.py").write_text(NEXT.format(body=body))
    monkeypatch.setattr(db, "MIGRATIONS", copy)


def _keys_on(engine: sa.Engine) -> int:
    with engine.connect() as conn:
        return conn.exec_driver_sql("PRAGMA foreign_keys").scalar()


def test_a_migration_rebuilding_the_players_table_keeps_every_row_pointing_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = _seeded(tmp_path)
    before = _rows(engine)
    assert all(before[name] for name in TABLES)

    _with_next(tmp_path, monkeypatch, REBUILD_PLAYERS)
    migrate(engine)
    after = _rows(engine)
    assert [p[:-1] for p in after["players"]] == before["players"]  # and a nickname column
    assert {name: after[name] for name in TABLES[1:]} == {n: before[n] for n in TABLES[1:]}
    assert _keys_on(engine) == 1  # the pooled connection has its foreign keys back on
    engine.dispose()


def test_a_migration_that_leaves_rows_pointing_to_none_is_refused_and_rolled_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = _seeded(tmp_path)
    before = _rows(engine)

    _with_next(tmp_path, monkeypatch, DELETE_A_PLAYER)  # its tokens and turns stay behind
    with pytest.raises(ValueError, match=r"left \d+ rows of .*tokens.* pointing to none"):
        migrate(engine)
    assert _rows(engine) == before
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar() == "0004"
    assert _keys_on(engine) == 1
    engine.dispose()
