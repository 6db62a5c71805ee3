"""The tracker's migrations on databases an older dicecam made, on SQLite and PostgreSQL.

Each test builds the older database by running the migrations to that revision and writing
rows with plain SQL as that revision's tracker stored them (players, tokens, turns with their
rolls, a correction); the next start upgrades it to head with every row kept.
"""

from __future__ import annotations

import time
from datetime import UTC, date, datetime, timedelta

import httpx
import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from sqlalchemy import Engine

from service.tracker import create_app
from service.tracker.db import MIGRATIONS, make_engine, migrate

HEAD = "0004"
OLDER = ["0001", "0002", "0003"]
TABLES = ("players", "tokens", "turns", "rolls", "corrections")
T0 = datetime(2025, 12, 30, 7, 15, tzinfo=UTC)


def _alembic(engine: Engine, verb: str, revision: str) -> None:
    """``alembic <verb> <revision>`` on ``engine``, as ``service.tracker.db.migrate`` runs it."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        getattr(command, verb)(cfg, revision)


def _table(name: str, *columns: sa.Column) -> sa.TableClause:
    return sa.table(name, *(sa.column(c.name, c.type) for c in columns))


def _seed(engine: Engine, revision: str) -> None:
    """Two players (one an admin), three tokens, three turns over two rounds with their rolls
    (a photo, a reading, none) and a correction, as the tracker of ``revision`` wrote them."""
    dt = sa.DateTime(timezone=True)
    players = _table(
        "players",
        *(sa.Column(c, sa.String) for c in ("name", "name_key", "password_hash", "timezone")),
        sa.Column("id", sa.Integer),
        sa.Column("is_admin", sa.Boolean),
        sa.Column("created_at", dt),
    )
    token_columns = [sa.Column(c, sa.Integer) for c in ("id", "player_id")]
    token_columns += [sa.Column("token_hash", sa.String), sa.Column("created_at", dt)]
    if revision >= "0002":
        token_columns.append(sa.Column("expires_at", dt))
    tokens = _table("tokens", *token_columns)
    turns = _table(
        "turns",
        *(sa.Column(c, sa.Integer) for c in ("id", "player_id", "round", "score")),
        *(sa.Column(c, sa.String) for c in ("comment", "game", "idempotency_key", "local_time")),
        sa.Column("day", sa.Date),
        sa.Column("submitted_at", dt),
    )
    rolls = _table(
        "rolls",
        *(sa.Column(c, sa.Integer) for c in ("id", "turn_id", "position")),
        sa.Column("values", sa.JSON),
        sa.Column("reading", sa.JSON),
        sa.Column("photo", sa.LargeBinary),
    )
    corrections = _table(
        "corrections",
        *(sa.Column(c, sa.Integer) for c in ("id", "turn_id", "admin_id")),
        *(sa.Column(c, sa.Integer) for c in ("old_score", "new_score")),
        sa.Column("reason", sa.Text),
        sa.Column("created_at", dt),
    )
    player = {"password_hash": "$argon2id$v=19$m=8,t=1,p=1$c2FsdA$aGFzaA"}
    expiry = {"expires_at": T0 + timedelta(days=30)} if revision >= "0002" else {}
    with engine.begin() as conn:
        conn.execute(
            sa.insert(players),
            [
                player
                | {"id": 1, "name": "Ann", "name_key": "ann", "timezone": "Europe/Paris"}
                | {"is_admin": True, "created_at": T0},
                player
                | {"id": 2, "name": "Bob", "name_key": "bob", "timezone": "Asia/Tokyo"}
                | {"is_admin": False, "created_at": T0 + timedelta(hours=1)},
            ],
        )
        conn.execute(
            sa.insert(tokens),
            [
                {"id": 1, "player_id": 1, "token_hash": "a" * 64, "created_at": T0} | expiry,
                {"id": 2, "player_id": 1, "token_hash": "b" * 64}
                | {"created_at": T0 + timedelta(days=3, minutes=7)}
                | expiry,
                {"id": 3, "player_id": 2, "token_hash": "c" * 64}
                | {"created_at": T0 + timedelta(days=40, seconds=5)}
                | expiry,
            ],
        )
        turn = {"comment": "", "game": "morning-roll", "local_time": "08:15"}
        conn.execute(
            sa.insert(turns),
            [
                turn
                | {"id": 1, "player_id": 1, "round": 2025, "score": 350, "comment": "ok"}
                | {"day": date(2025, 12, 30), "idempotency_key": "k1", "submitted_at": T0},
                turn
                | {"id": 2, "player_id": 1, "round": 2026, "score": 0}
                | {"day": date(2026, 1, 2), "idempotency_key": "k2"}
                | {"submitted_at": T0 + timedelta(days=3)},
                turn
                | {"id": 3, "player_id": 2, "round": 2026, "score": 1200}
                | {"day": date(2026, 1, 2), "idempotency_key": "k3"}
                | {"submitted_at": T0 + timedelta(days=3, hours=2)},
            ],
        )
        reading = {"dice": [{"value": 5, "confidence": 0.97}], "model": "dice-n"}
        conn.execute(
            sa.insert(rolls),
            [
                {"id": 1, "turn_id": 1, "position": 0, "values": [1, 5, 2, 3, 4, 6]}
                | {"reading": reading, "photo": b"\xff\xd8\x00jpeg\x00\xff\xd9"},
                {"id": 2, "turn_id": 1, "position": 1, "values": [5, 5]}
                | {"reading": None, "photo": None},
                {"id": 3, "turn_id": 2, "position": 0, "values": [2, 2, 3, 4, 6, 6]}
                | {"reading": None, "photo": None},
                {"id": 4, "turn_id": 3, "position": 0, "values": [1, 1, 1, 1, 5, 5]}
                | {"reading": reading, "photo": None},
            ],
        )
        conn.execute(
            sa.insert(corrections),
            {"id": 1, "turn_id": 1, "admin_id": 1, "old_score": 300, "new_score": 350}
            | {"reason": "a five missed", "created_at": T0 + timedelta(hours=5)},
        )


def _rows(engine: Engine) -> dict[str, list[dict]]:
    """Every row of the tracker's tables by id, read through their reflected columns."""
    out = {}
    with engine.connect() as conn:
        for name in TABLES:
            table = sa.Table(name, sa.MetaData(), autoload_with=conn)
            rows = conn.execute(sa.select(table).order_by(table.c.id)).mappings()
            out[name] = [dict(row) for row in rows]
    return out


def _schema(engine: Engine) -> dict[str, dict]:
    """The tracker's tables as the database reports them: columns (type, null, default), key,
    indexes, unique constraints and foreign keys."""
    inspector = sa.inspect(engine)
    out = {}
    for name in sorted(set(inspector.get_table_names()) - {"alembic_version"}):
        out[name] = {
            "columns": sorted(
                (c["name"], str(c["type"]), c["nullable"], c.get("default"))
                for c in inspector.get_columns(name)
            ),
            "key": inspector.get_pk_constraint(name)["constrained_columns"],
            "indexes": sorted(
                (i["name"], tuple(i["column_names"]), bool(i["unique"]))
                for i in inspector.get_indexes(name)
            ),
            "unique": sorted(
                tuple(sorted(u["column_names"])) for u in inspector.get_unique_constraints(name)
            ),
            "foreign": sorted(
                (tuple(f["constrained_columns"]), f["referred_table"])
                + (tuple(f["referred_columns"]), f["options"].get("ondelete"))
                for f in inspector.get_foreign_keys(name)
            ),
        }
    return out


def _version(engine: Engine) -> list[str]:
    with engine.connect() as conn:
        return list(conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalars())


@pytest.mark.parametrize("revision", OLDER)
def test_an_older_database_is_upgraded_at_start_with_every_row_kept(
    database_url, revision, clock, serve
):
    """Players, tokens, turns, rolls (photo and reading too) and corrections stored at
    ``revision`` come through the upgrade at the next start unchanged; the tokens of 0001 each
    expire a year after they were made, and nobody has a zone change pending."""
    engine = make_engine(database_url)
    migrate(engine, revision)
    _seed(engine, revision)
    before = _rows(engine)
    engine.dispose()

    app = create_app(database_url, clock=clock)  # migrates to head at start
    after = _rows(app.state.engine)
    assert _version(app.state.engine) == [HEAD]
    for name in TABLES:
        kept = [{k: row[k] for k in before[name][0]} for row in after[name]]
        assert kept == before[name], name
    expiry = [(t["id"], t["expires_at"]) for t in after["tokens"]]
    if revision == "0001":
        year = timedelta(days=365)
        assert expiry == [(t["id"], t["created_at"] + year) for t in before["tokens"]]
    else:
        assert expiry == [(t["id"], t["expires_at"]) for t in before["tokens"]]
    assert [(p["next_timezone"], p["timezone_from"]) for p in after["players"]] == [
        (None, None)
    ] * 2
    indexes = {
        i["name"]: i["column_names"] for i in sa.inspect(app.state.engine).get_indexes("turns")
    }
    assert indexes.get("ix_turns_round_player") == ["round", "player_id", "day", "score"]
    assert "ix_turns_round" not in indexes

    clock.set("2026-01-02T12:00:00+00:00")
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
        board = http.get("/api/v1/leaderboard", params={"round": 2026}).json()["standings"]
        assert [(s["player"], s["total"], s["turns"]) for s in board] == [
            ("Bob", 1200, 1),
            ("Ann", 0, 1),
        ]
    app.state.db.dispose()


@pytest.mark.parametrize("revision", OLDER)
def test_a_downgrade_gives_back_the_schema_and_rows_of_its_revision(database_url, revision):
    """Up to head and back down to ``revision``: the tables are those that ``revision`` made
    (columns, types, indexes, keys) and hold the same rows; going back down lost all tokens,
    turns, rolls and corrections on SQLite (dropping ``players`` to rebuild it cascaded)."""
    engine = make_engine(database_url)
    migrate(engine, revision)
    schema = _schema(engine)
    _seed(engine, revision)
    rows = _rows(engine)
    migrate(engine)
    _alembic(engine, "downgrade", revision)
    assert _version(engine) == [revision]
    assert _schema(engine) == schema
    assert _rows(engine) == rows
    engine.dispose()


def test_an_upgraded_database_matches_the_models_server_defaults_too(database_url):
    """A database of 0001 with rows, upgraded, has what the models declare and no more: no
    column default left behind by a migration (the models have none)."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from service.tracker.models import Base

    engine = make_engine(database_url)
    migrate(engine, "0001")
    _seed(engine, "0001")
    migrate(engine)
    with engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "compare_server_default": True}
        )
        assert compare_metadata(context, Base.metadata) == []
    engine.dispose()


def test_a_newer_database_is_refused_untouched_with_its_url_password_hidden(database_url):
    """A database at a revision these migrations do not hold is refused before anything runs:
    the message names the revision, the newest this dicecam knows and the URL without its
    password; its rows and revision stay as they were."""
    engine = make_engine(database_url)
    migrate(engine, "0003")
    _seed(engine, "0003")
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE alembic_version SET version_num = '0007'"))
    rows = _rows(engine)
    engine.dispose()
    url = sa.make_url(database_url)
    if url.get_backend_name() == "postgresql":  # trust authentication: any password will do
        url = url.set(password="s3cret-pw")
    engine = make_engine(url.render_as_string(hide_password=False))
    with pytest.raises(ValueError) as refused:
        migrate(engine)
    said = str(refused.value)
    assert "schema revision 0007, which this dicecam does not know" in said
    assert f"it knows up to {HEAD}" in said and "upgrade dicecam" in said
    assert url.render_as_string(hide_password=True) in said and "s3cret-pw" not in said
    assert _version(engine) == ["0007"]
    assert _rows(engine) == rows
    assert "next_timezone" not in {c["name"] for c in sa.inspect(engine).get_columns("players")}
    engine.dispose()


_MIGRATE_WHEN_TOLD = """
import pathlib, sys, time
from service.tracker.db import make_engine, migrate
folder = pathlib.Path(sys.argv[1])
for n, url in enumerate(sys.argv[3:]):
    (folder / f"ready-{sys.argv[2]}-{n}").touch()
    while not (folder / f"go-{n}").exists():
        time.sleep(0.001)
    migrate(make_engine(url))
"""


def test_trackers_starting_at_once_on_one_fresh_database_migrate_it_once(
    request, database_url, tmp_path
):
    """Four processes migrate an empty database at the same moment (a tracker run by several
    workers, or started beside the admin command), five databases over: each one starts, head
    is reached. Without PostgreSQL's lock most rounds failed (tables created twice)."""
    import subprocess
    import sys

    if database_url.startswith("sqlite"):
        urls = [f"sqlite:///{tmp_path / f'tracker-{n}.sqlite3'}" for n in range(5)]
    else:
        urls = [request.getfixturevalue("postgres").create_database() for _ in range(5)]
    code = [sys.executable, "-c", _MIGRATE_WHEN_TOLD, str(tmp_path)]
    workers = [subprocess.Popen([*code, str(i), *urls], stderr=subprocess.PIPE) for i in range(4)]
    try:
        deadline = time.monotonic() + 120
        for n in range(len(urls)):  # all four imported, done with the database before and
            while len(list(tmp_path.glob(f"ready-*-{n}"))) < len(workers):  # waiting ...
                if any(w.poll() is not None for w in workers):
                    break  # one failed: its error is said below
                assert time.monotonic() < deadline, f"the processes did not reach database {n}"
                time.sleep(0.01)
            (tmp_path / f"go-{n}").touch()  # ... they migrate it at once
        said = [w.communicate(timeout=120)[1].decode() for w in workers]
    finally:
        for w in workers:
            w.kill()
            w.communicate()
    assert [w.returncode for w in workers] == [0] * 4, [s[-800:] for s in said]
    for url in urls:
        engine = make_engine(url)
        assert _version(engine) == [HEAD]
        assert set(TABLES) <= set(sa.inspect(engine).get_table_names())
        engine.dispose()


def test_autogenerate_writes_the_next_migration_from_the_models(database_url, tmp_path):
    """A maintainer's ``alembic revision --autogenerate`` through this ``env.py`` (on a copy
    of the migrations up to 0003): the new script adds the two zone columns of the models and
    nothing else, in a batch on SQLite (which cannot alter most things in place)."""
    import shutil

    scripts = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS, scripts, ignore=shutil.ignore_patterns("0004_*", "__pycache__"))
    engine = make_engine(database_url)
    migrate(engine, "0003")
    cfg = Config()
    cfg.set_main_option("script_location", str(scripts))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.revision(cfg, message="zones", autogenerate=True, rev_id="0004")
    engine.dispose()
    [written] = (scripts / "versions").glob("0004_*.py")
    code = written.read_text()
    compile(code, str(written), "exec")
    upgrade = code.split("def upgrade() -> None:")[1].split("def downgrade")[0]
    ops = [line.strip().split("(")[0] for line in upgrade.splitlines() if "op." in line]
    sqlite = engine.dialect.name == "sqlite"
    assert ops == (
        ["with op.batch_alter_table", "batch_op.add_column", "batch_op.add_column"]
        if sqlite
        else ["op.add_column", "op.add_column"]
    )
    assert "Column('next_timezone', sa.String(length=64), nullable=True)" in upgrade
    assert "Column('timezone_from', sa.DateTime(timezone=True), nullable=True)" in upgrade
    assert "down_revision = '0003'" in code
