"""Storage: concurrent submissions (20 clients at once) and the Alembic migrations, on SQLite
and PostgreSQL."""

from __future__ import annotations

import concurrent.futures as cf

import httpx
import pytest

from service.tracker import create_app


def test_twenty_concurrent_clients_each_store_once(tracker, tracker_app, seed_players, turn):
    http, clock = tracker
    clock.set("2026-09-09T12:00:00+00:00")
    names = [f"p{i:02d}" for i in range(20)]
    auths = seed_players(tracker_app, names)
    bodies = {n: turn(n, 50 * (i + 1)) for i, n in enumerate(names)}

    def send(name: str) -> list[int]:
        with httpx.Client(base_url=str(http.base_url), timeout=60) as c:
            # each client sends its turn twice at once-ish: the key makes it one turn
            return [
                c.post("/api/v1/turns", json=bodies[name], headers=auths[name]).status_code
                for _ in range(2)
            ]

    with cf.ThreadPoolExecutor(20) as pool:
        codes = list(pool.map(send, names))
    assert all(c == [201, 200] for c in codes), codes
    board = http.get("/api/v1/leaderboard").json()["standings"]
    assert sorted((s["player"], s["total"], s["turns"]) for s in board) == [
        (n, 50 * (i + 1), 1) for i, n in enumerate(names)
    ]


def test_same_key_sent_by_many_connections_at_once_is_stored_once(tracker, join, turn):
    http, _ = tracker
    auth = join(http, "heather")
    body = turn("heather", 350)

    def send(_: int) -> int:
        with httpx.Client(base_url=str(http.base_url), timeout=60) as c:
            return c.post("/api/v1/turns", json=body, headers=auth).status_code

    with cf.ThreadPoolExecutor(20) as pool:
        codes = list(pool.map(send, range(20)))
    assert sorted(codes) == [200] * 19 + [201]
    assert len(http.get("/api/v1/players/heather/turns").json()["turns"]) == 1


def test_migrations_match_the_models(database_url):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from service.tracker.models import Base

    app = create_app(database_url)
    with app.state.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    app.state.db.dispose()
    assert diff == []


def test_migrations_downgrade_and_upgrade_again(database_url):
    import sqlalchemy as sa
    from alembic import command
    from alembic.config import Config

    from service.tracker.db import MIGRATIONS, make_engine, migrate

    engine = make_engine(database_url)
    migrate(engine)
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "base")
    assert set(sa.inspect(engine).get_table_names()) <= {"alembic_version"}
    migrate(engine)
    assert {"players", "tokens", "turns", "rolls", "corrections"} <= set(
        sa.inspect(engine).get_table_names()
    )
    engine.dispose()


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_an_in_memory_database_serves_overlapping_requests(serve, url):
    """``sqlite://`` (as in the docs' examples) was one connection shared by the server's
    threads: readers overlapping writers got 500s. It is now a private temporary file. (80
    players from one address: the registration limit is off.)"""
    app = create_app(url, registrations_per_address=0)
    db = app.state.db
    assert db.temporary is not None and (db.temporary / "tracker.sqlite3").is_file()
    url = serve(app).url

    def client(k: int) -> list[int]:
        codes = []
        with httpx.Client(base_url=url, timeout=60) as c:
            for i in range(20):
                body = {"name": f"p{k}n{i}", "password": "hunter2hunter2", "timezone": "UTC"}
                codes.append(c.post("/api/v1/players", json=body).status_code)
                codes.append(c.get("/api/v1/rollcall").status_code)
        return codes

    with cf.ThreadPoolExecutor(4) as pool:
        codes = [c for run in pool.map(client, range(4)) for c in run]
    assert set(codes) == {200, 201}, sorted(set(codes))
    with httpx.Client(base_url=url, timeout=30) as c:
        assert len(c.get("/api/v1/rollcall").json()["players"]) == 80
    db.dispose()
    assert not db.temporary.exists()  # the private database goes with it
