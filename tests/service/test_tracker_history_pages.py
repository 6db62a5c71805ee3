"""A player's history (``GET /api/v1/players/{name}/turns``) in pages, over a real server:
the pages join up to exactly the whole history, newest first, corrections included; the cursor
(``before=`` a day) holds when a turn is added between pages; ``TrackerClient.history`` walks
every page; a bad ``limit``, ``before`` or ``round`` is refused naming what was expected."""

from __future__ import annotations

from datetime import date

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from service.tracker import create_app
from service.tracker_client import TrackerClient

from dicecam_testing.tracker_year import Seeded, seed_rounds

NOW = "2026-12-30T12:00:00+00:00"
"""The server's clock: noon UTC, when ``p000`` (UTC, an administrator) may take a turn."""


@pytest.fixture
def seeded_tracker(serve, clock, password_hash):
    """``seeded_tracker(url, players=, rounds=, mount="") -> (http, seeded)``: a tracker on a
    fresh database seeded in bulk (``seed_rounds``), served over a real socket, optionally
    mounted under ``mount`` as the camera service mounts it under ``/tracker``."""
    clock.set(NOW)
    apps, clients = [], []

    def start(url: str, *, players: int, rounds: dict[int, int], mount: str = ""):
        app = create_app(url, clock=clock)
        apps.append(app)
        seeded = seed_rounds(
            app.state.db, clock(), players=players, rounds=rounds, password_hash=password_hash
        )
        outer = Starlette(routes=[Mount(mount, app)]) if mount else app
        http = httpx.Client(base_url=serve(outer).url + mount, timeout=30)
        clients.append(http)
        return http, seeded

    yield start
    for http in clients:
        http.close()
    for app in apps:
        app.state.db.dispose()


def expected_days(s: Seeded, player: str, round_: int | None = None) -> list[tuple[date, int]]:
    """``player``'s seeded ``(day, score)``, newest first."""
    return sorted(
        (
            turn
            for r, players in s.scores.items()
            if round_ in (None, r)
            for turn in players[player]
        ),
        reverse=True,
    )


def walk(http: httpx.Client, first: str, **params) -> list[dict]:
    """Every page from ``first`` on, following ``next`` (a URL reference, resolved against the
    page's URL); checks each page against its limit and its ``Link`` header."""
    pages, url = [], first
    while url is not None:
        r = http.get(url, params=params if params and not pages else None)
        assert r.status_code == 200, r.text
        page = r.json()
        pages.append(page)
        assert len(page["turns"]) <= page["limit"]
        if page["next"] is None:
            assert "link" not in r.headers and page["next_before"] is None
        else:
            assert len(page["turns"]) == page["limit"]
            assert r.headers["link"] == f'<{page["next"]}>; rel="next"'
            assert page["next_before"] == page["turns"][-1]["day"]
        url = page["next"] and str(r.url.join(page["next"]))  # resolved as RFC 8288 has it
        assert len(pages) < 100, "the pages never end"
    return pages


@pytest.mark.parametrize("round_", [None, 2025])
def test_pages_join_up_to_the_whole_history(database_url, seeded_tracker, round_):
    """Pages of 7 turns over two rounds (and over one) hold every turn once, newest first,
    each with its corrections and its camera rolls, as seeded; the page size and the round
    carry over to the next page."""
    http, s = seeded_tracker(database_url, players=2, rounds={2025: 40, 2026: 35})
    params = {"limit": 7} | ({"round": round_} if round_ else {})
    pages = walk(http, "/api/v1/players/P001/turns", **params)
    turns = [t for page in pages for t in page["turns"]]
    expected = expected_days(s, "p001", round_)
    assert [(date.fromisoformat(t["day"]), t["score"]) for t in turns] == expected
    assert len({t["id"] for t in turns}) == len(turns) == len(expected) > 7 * 4
    assert {(p["limit"], p["round"], p["player"]["name"]) for p in pages} == {(7, round_, "p001")}
    for t in turns:
        key = ("p001", date.fromisoformat(t["day"]))
        fixes = [(c["old_score"], c["new_score"]) for c in t["corrections"]]
        assert fixes == ([s.corrected[key]] if key in s.corrected else [])
        assert len(t["rolls"]) == (2 if key in s.camera else 0)
    assert any(t["corrections"] for t in turns)
    whole = http.get("/api/v1/players/p001/turns", params={**params, "limit": 500})
    assert whole.status_code == 200 and whole.json()["turns"] == turns


def test_the_first_page_is_the_newest_hundred(sqlite_url, seeded_tracker):
    """Without ``limit``, a page holds the newest 100 turns: a year of daily turns is no
    longer one answer of several megabytes."""
    http, s = seeded_tracker(sqlite_url, players=1, rounds={2025: 120, 2026: 30})
    page = http.get("/api/v1/players/p000/turns").json()
    days = [date.fromisoformat(t["day"]) for t in page["turns"]]
    assert days == [d for d, _ in expected_days(s, "p000")][:100]
    assert page["next"] == f"/api/v1/players/p000/turns?limit=100&before={days[-1].isoformat()}"


def test_the_next_link_keeps_the_mount_path(sqlite_url, seeded_tracker):
    """Under the camera service's ``/tracker`` mount the next page's URL keeps the prefix,
    as the photo URLs do."""
    http, s = seeded_tracker(sqlite_url, players=1, rounds={2026: 12}, mount="/tracker")
    pages = walk(http, "/api/v1/players/p000/turns", limit=5)
    assert pages[0]["next"].startswith("/tracker/api/v1/players/p000/turns?limit=5&before=")
    turns = [t["day"] for page in pages for t in page["turns"]]
    assert turns == [d.isoformat() for d, _ in expected_days(s, "p000")]
    assert len(pages) == -(-len(turns) // 5)


def test_the_cursor_holds_when_a_turn_is_added_between_pages(sqlite_url, seeded_tracker):
    """A turn taken (and another corrected) while a client reads the pages moves no page: the
    rest of the pages hold exactly the turns not read yet, the corrected score shows, and the
    new turn heads the first page read afresh."""
    http, s = seeded_tracker(sqlite_url, players=1, rounds={2026: 25})
    auth = {"Authorization": f"Bearer {s.tokens['p000']}"}
    first = http.get("/api/v1/players/p000/turns", params={"limit": 6}).json()
    new = http.post(
        "/api/v1/turns",
        json={"player": "p000", "score": 300, "idempotency_key": "between-pages-1"},
        headers=auth,
    )
    assert new.status_code == 201, new.text
    oldest = expected_days(s, "p000")[-1][0].isoformat()
    old_id = next(
        t["id"]
        for t in http.get("/api/v1/players/p000/turns", params={"limit": 500}).json()["turns"]
        if t["day"] == oldest
    )
    fix = http.patch(
        f"/api/v1/turns/{old_id}", json={"score": 50, "reason": "recounted"}, headers=auth
    )
    assert fix.status_code == 200, fix.text
    rest = walk(http, first["next"])
    turns = first["turns"] + [t for page in rest for t in page["turns"]]
    assert [date.fromisoformat(t["day"]) for t in turns] == [d for d, _ in expected_days(s, "p000")]
    assert new.json()["id"] not in {t["id"] for t in turns}
    assert turns[-1]["score"] == 50 and turns[-1]["corrections"][-1]["reason"] == "recounted"
    again = http.get("/api/v1/players/p000/turns", params={"limit": 6}).json()
    assert again["turns"][0]["id"] == new.json()["id"]
    assert again["turns"][1:] == first["turns"][:5]


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"limit": 0}, "'limit' (in the query): Input should be greater than or equal to 1"),
        ({"limit": 501}, "'limit' (in the query): Input should be less than or equal to 500"),
        ({"limit": "ten"}, "'limit' (in the query): Input should be a valid integer"),
        ({"before": "2026-13-01"}, "'before' (in the query): expected a day written YYYY-MM-DD"),
        ({"before": "1767225600"}, "'before' (in the query): expected a day written YYYY-MM-DD"),
        ({"before": "2026-01-05T00:00"}, "expected a day written YYYY-MM-DD, e.g. 2026-03-01"),
        ({"round": 1800}, "'round' (in the query): Input should be greater than or equal to 1900"),
        ({"round": "last"}, "'round' (in the query): Input should be a valid integer"),
    ],
)
def test_bad_page_values_are_refused_naming_what_was_expected(
    sqlite_tracker, join, params, expected
):
    http, _ = sqlite_tracker
    join(http, "heather")
    r = http.get("/api/v1/players/heather/turns", params=params)
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert expected in detail and repr(str(next(iter(params.values())))) in detail, detail


def test_the_client_reads_every_page(sqlite_url, seeded_tracker, tmp_path):
    """``TrackerClient.history`` follows the pages to the end (here of 9 turns) and hands back
    the whole history, or one round of it."""
    http, s = seeded_tracker(sqlite_url, players=2, rounds={2025: 20, 2026: 15})
    with TrackerClient(str(http.base_url).rstrip("/"), outbox_dir=tmp_path / "outbox") as client:
        for round_ in (None, 2026):
            got = client.history("p001", round=round_, page_size=9)
            days = [(date.fromisoformat(t["day"]), t["score"]) for t in got["turns"]]
            assert days == expected_days(s, "p001", round_)
            assert got["player"]["name"] == "p001" and got["round"] == round_
            assert len(days) > 9 and got["next"] is None
