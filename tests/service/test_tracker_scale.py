"""The tracker with a year of data: the SQL statements each page and API route runs do not grow
with the players or the turns, the figures equal a plain Python computation over the seeded
turns, lists of turns leave the photos in the database, and the hot queries use an index.

``seed_rounds`` (tests/support/dicecam_testing/tracker_year.py) inserts in bulk; the full-year
figures of the report (60 players, three rounds, 62,000 turns) came from a script that imports
it, not from these tests, which keep to a few hundred turns.
"""

from __future__ import annotations

import re
import sqlite3
import uuid
from dataclasses import dataclass
from datetime import date

import httpx
import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from sqlalchemy import Engine

from service.tracker import create_app
from service.tracker.db import Database

from dicecam_testing.tracker_year import Seeded, StatementCounter, seed_rounds

NOW = "2026-12-30T12:00:00+00:00"
"""The server's clock: late in round 2026, so the current round holds nearly a year."""


# -- a tracker serving seeded data -------------------------------------------------------------


@dataclass
class Served:
    http: httpx.Client
    seeded: Seeded
    counter: StatementCounter

    def auth(self, kw: dict) -> dict:
        """Request keywords with ``who=`` made that player's ``Authorization`` header."""
        kw = dict(kw)
        if who := kw.pop("who", ""):
            kw["headers"] = {"Authorization": f"Bearer {self.seeded.tokens[who]}"}
        return kw

    def statements(self, method: str, path: str, **kw) -> list[str]:
        """The SQL statements of one request (``who=``: as that player), which must succeed."""
        with self.counter.counting() as seen:
            r = self.http.request(method, path, **self.auth(kw))
        assert r.is_success, (method, path, r.status_code, r.text[:500])
        return [sql for sql, _ in seen]


@pytest.fixture
def serve_seeded(serve, clock, password_hash, tmp_path, request):
    """``serve_seeded(url, players=, rounds=) -> Served``: a tracker on ``url`` (a fresh
    database) with seeded data, over a real socket; the clock at :data:`NOW`."""
    clock.set(NOW)
    apps, clients = [], []

    def start(url: str, *, players: int, rounds: dict[int, int]) -> Served:
        app = create_app(url, clock=clock, keep_photos_days=0)  # the seeded photos are kept
        apps.append(app)
        seeded = seed_rounds(
            app.state.db, clock(), players=players, rounds=rounds, password_hash=password_hash
        )
        counter = StatementCounter(app.state.db.engine, app.state.db.read_engine)
        http = httpx.Client(base_url=serve(app).url, timeout=30)
        clients.append(http)
        return Served(http, seeded, counter)

    yield start
    for http in clients:
        http.close()
    for app in apps:
        app.state.db.dispose()


def _fresh_url(database_url: str, request, name: str) -> str:
    """Another empty database of the same kind as ``database_url``."""
    if database_url.startswith("sqlite"):
        return database_url.replace("tracker.sqlite3", f"{name}.sqlite3")
    return request.getfixturevalue("postgres").create_database()


def _routes(s: Seeded) -> list[tuple[str, str, dict]]:
    """Every page and API route: ``(method, path, request keywords)``; the writes go to
    ``p000`` (UTC) and ``p001`` (Paris), open at :data:`NOW` and without a turn today."""
    camera = s.camera_turn
    return [
        ("GET", "/", {}),
        ("GET", "/rounds/2025", {}),
        ("GET", "/players/p001", {}),
        ("GET", "/players/p001?round=2025", {}),
        ("GET", "/rollcall", {}),
        ("GET", f"/turns/{camera}", {}),
        ("GET", "/api/v1/leaderboard", {}),
        ("GET", "/api/v1/leaderboard?round=2025", {}),
        ("GET", "/api/v1/players/p001/turns", {}),
        ("GET", "/api/v1/players/p001/turns?round=2025&limit=2&before=2025-01-03", {}),
        ("GET", "/api/v1/rollcall", {}),
        ("GET", "/api/v1/rounds", {}),
        ("GET", f"/api/v1/turns/{camera}", {}),
        ("GET", f"/api/v1/turns/{camera}/rolls/1/photo.jpg", {}),
        ("GET", "/api/v1/me", {"who": "p001"}),
        ("POST", "/api/v1/turns", {"who": "p000", "json": _turn_body("p000")}),
        ("POST", "/add", {"data": _form_body("p001")}),
        ("POST", "/api/v1/tokens", {"json": {"name": "p001", "password": PASSWORD}}),
    ]


def _route_key(method: str, path: str, camera: int) -> str:
    """``method path`` with the camera turn's id (which differs between databases) as
    ``{id}``: only a path segment, not the digits of a query's day."""
    return f"{method} {re.sub(rf'/{camera}(?=/|$)', '/{id}', path, count=1)}"


PASSWORD = "hunter2hunter2"  # the password of every seeded player (conftest's password_hash)


def _turn_body(player: str) -> dict:
    return {"player": player, "score": 500, "idempotency_key": uuid.uuid4().hex}


def _form_body(player: str) -> dict:
    key = str(uuid.uuid4())
    return {"name": player, "password": PASSWORD, "score": "450", "idempotency_key": key}


def test_no_route_runs_more_statements_for_more_players_or_turns(
    database_url, request, serve_seeded
):
    """Statements per request are the same for 5 players over a week, 50 players over two
    weeks, and 2 players with 500+ turns each (more than one ``selectinload`` batch). The
    leaderboard loaded each player's latest turn's rolls one by one (64 statements for 60
    players), a player's history each turn's corrections (1,052 for a player's three years)."""
    sizes = {
        "5 players": serve_seeded(database_url, players=5, rounds={2025: 3, 2026: 4}),
        "50 players": serve_seeded(
            _fresh_url(database_url, request, "wide"), players=50, rounds={2025: 6, 2026: 8}
        ),
        "500+ turns each": serve_seeded(
            _fresh_url(database_url, request, "long"), players=2, rounds={2025: 270, 2026: 260}
        ),
    }
    counts = {
        size: {
            _route_key(method, path, served.seeded.camera_turn): len(
                served.statements(method, path, **kw)
            )
            for method, path, kw in _routes(served.seeded)
        }
        for size, served in sizes.items()
    }
    small = counts.pop("5 players")
    for size, found in counts.items():
        grew = {route: (small[route], n) for route, n in found.items() if n != small[route]}
        assert grew == {}, f"statements per request grew with {size}: {grew}"
    assert max(small.values()) <= 12, small


def test_the_figures_equal_a_computation_over_the_seeded_turns(database_url, serve_seeded):
    """Standings of the current and a past round, each player's latest turn on the leaderboard
    page, the roll call and a player's history (scores after corrections, which turn was
    corrected, which has camera rolls) match the seeded turns."""
    served = serve_seeded(database_url, players=12, rounds={2025: 20, 2026: 30})
    http, s = served.http, served.seeded
    for round_ in (2026, 2025):
        board = http.get("/api/v1/leaderboard", params={"round": round_}).json()["standings"]
        assert [tuple(r.values()) for r in board] == s.standings(round_)
        page = http.get("/" if round_ == 2026 else f"/rounds/{round_}").text
        shown = re.findall(r'/players/(p\d+)">[^<]*</a>.*?/turns/\d+">([\d-]+): (\d+)</a>', page)
        latest = {n: max(turns) for n, turns in s.scores[round_].items()}
        assert shown == [
            (n, latest[n][0].isoformat(), str(latest[n][1])) for n in (r["player"] for r in board)
        ]
    call = {p["player"]: p for p in http.get("/api/v1/rollcall").json()["players"]}
    for name in s.players:
        days = [d for turns in s.scores.values() for d, _ in turns[name]]
        assert (call[name]["turns"], call[name]["last_day"]) == (len(days), max(days).isoformat())
    for params in ({}, {"round": 2025}):
        turns = http.get("/api/v1/players/p001/turns", params=params).json()["turns"]
        expected = sorted(
            (day, score)
            for round_, players in s.scores.items()
            if params.get("round", round_) == round_
            for day, score in players["p001"]
        )[::-1]
        assert [(date.fromisoformat(t["day"]), t["score"]) for t in turns] == expected
        for t in turns:
            key = ("p001", date.fromisoformat(t["day"]))
            fixes = [(c["old_score"], c["new_score"], c["admin"]) for c in t["corrections"]]
            assert fixes == ([(*s.corrected[key], "p000")] if key in s.corrected else [])
            photos = [r["photo_url"] is not None for r in t["rolls"]]
            assert photos == ([True, True] if key in s.camera else [])
        page = http.get("/players/p001", params=params).text
        assert f"; {len(expected)} turns.</p>" in page


def test_lists_of_turns_leave_the_photos_in_the_database(sqlite_url, serve_seeded):
    """A player's history and the leaderboard read no photo (a year of camera turns is
    hundreds of photos; only the photo route reads one), and still know which roll has one."""
    served = serve_seeded(sqlite_url, players=3, rounds={2026: 12})
    reads_photo = re.compile(r"rolls\.photo(?! IS NOT NULL)")
    for path in ("/", "/players/p001", "/api/v1/players/p001/turns", "/turns/1"):
        assert not any(reads_photo.search(sql) for sql in served.statements("GET", path)), path
    turn = served.http.get(f"/api/v1/turns/{served.seeded.camera_turn}").json()
    photo = served.http.get(turn["rolls"][1]["photo_url"])
    assert photo.headers["content-type"] == "image/jpeg"
    assert photo.content.startswith(b"\xff\xd8") and len(photo.content) == 200
    page = served.http.get(f"/turns/{served.seeded.camera_turn}").text
    assert page.count('<img class="photo"') == 2


def test_hot_queries_read_the_turns_through_an_index(sqlite_url, serve_seeded):
    """SQLite's plan of every query of today's turn (a new turn), a player's history and a
    round's standings searches an index, never scans the turns table; the standings read
    ``ix_turns_round_player`` alone."""
    served = serve_seeded(sqlite_url, players=5, rounds={2025: 3, 2026: 4})
    seen = []
    for method, path, kw in (
        ("POST", "/api/v1/turns", {"who": "p000", "json": _turn_body("p000")}),
        ("POST", "/add", {"data": _form_body("p001")}),
        ("GET", "/players/p001?round=2026", {}),
        ("GET", "/api/v1/players/p001/turns", {}),
        ("GET", "/api/v1/players/p001/turns?limit=2&before=2026-01-04", {}),
        ("GET", "/", {}),
        ("GET", "/api/v1/leaderboard?round=2025", {}),
    ):
        with served.counter.counting() as statements:
            assert served.http.request(method, path, **served.auth(kw)).is_success
        seen += [(sql, p) for sql, p in statements if "turns" in sql and "DISTINCT" not in sql]
    plans = []
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as conn:
        for sql, params in seen:
            if sql.lstrip().upper().startswith("SELECT"):
                steps = conn.execute(f"EXPLAIN QUERY PLAN {sql}", params).fetchall()
                plans.append((sql, [step[-1] for step in steps]))
    scans = [(sql, plan) for sql, plan in plans if any("SCAN turns" in p for p in plan)]
    assert scans == []
    standings = [plan for sql, plan in plans if "GROUP BY" in sql and "turns.round" in sql]
    assert len(standings) == 3  # two standings, one round's latest turns
    for plan in standings:
        assert "SEARCH turns USING COVERING INDEX ix_turns_round_player (round=?)" in plan


def test_a_database_of_revision_0002_gets_the_index_in_place(database_url, clock, serve):
    """A year of turns stored at revision 0002 is upgraded to ``ix_turns_round_player`` in
    place (``ix_turns_round`` goes); its standings are unchanged; it goes back down too."""
    from service.tracker.db import MIGRATIONS, migrate

    clock.set(NOW)
    db = Database(database_url)
    migrate(db.engine, "0002")
    seeded = seed_rounds(
        db, clock(), players=6, rounds={2025: 30, 2026: 40}, password_hash="not used"
    )
    db.dispose()

    def indexes(engine: Engine) -> set[str]:
        return {i["name"] for i in sa.inspect(engine).get_indexes("turns")}

    app = create_app(database_url, clock=clock)  # migrates to head at start
    assert {"ix_turns_round_player"} <= indexes(app.state.engine)
    assert "ix_turns_round" not in indexes(app.state.engine)
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
        for round_ in (2025, 2026):
            board = http.get("/api/v1/leaderboard", params={"round": round_}).json()
            assert [tuple(r.values()) for r in board["standings"]] == seeded.standings(round_)
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with app.state.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0002")
    assert "ix_turns_round" in indexes(app.state.engine)
    assert "ix_turns_round_player" not in indexes(app.state.engine)
    app.state.db.dispose()
