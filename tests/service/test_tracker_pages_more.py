"""A player's history page (``/players/NAME``) in pages over a real tracker: newest first, 50
turns a page, older and newer links (``rel=next``/``prev``, also a ``Link`` header) that keep
the round and join up to the whole history with nothing lost or shown twice, even when a turn
arrives between page loads; the same few statements for any page; named for a screen reader in
a real chromium."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

import httpx
import pytest

from service.tracker import create_app

from dicecam_testing.tracker_year import Seeded, StatementCounter, seed_rounds

NOW = "2026-12-30T12:00:00+00:00"
"""The server's clock: noon UTC, when ``p000`` (UTC) may take a turn."""


@dataclass
class Site:
    http: httpx.Client
    seeded: Seeded
    counter: StatementCounter


@pytest.fixture
def seeded_site(sqlite_url, serve, clock, password_hash, tmp_path):
    """``seeded_site(players=, rounds=, name=) -> Site``: a tracker on a fresh SQLite file
    seeded in bulk (``seed_rounds``), served over a real socket; the clock at :data:`NOW`."""
    clock.set(NOW)
    apps, clients = [], []

    def start(*, players: int, rounds: dict[int, int], name: str = "tracker") -> Site:
        app = create_app(f"sqlite:///{tmp_path / name}.sqlite3", clock=clock, keep_photos_days=0)
        apps.append(app)
        seeded = seed_rounds(
            app.state.db, clock(), players=players, rounds=rounds, password_hash=password_hash
        )
        http = httpx.Client(base_url=serve(app).url, timeout=30)
        clients.append(http)
        return Site(http, seeded, StatementCounter(app.state.db.engine, app.state.db.read_engine))

    yield start
    for http in clients:
        http.close()
    for app in apps:
        app.state.db.dispose()


def days_of(s: Seeded, player: str, round_: int | None = None) -> list[str]:
    """``player``'s seeded days, newest first."""
    return sorted(
        (
            d.isoformat()
            for r, players in s.scores.items()
            if round_ in (None, r)
            for d, _ in players[player]
        ),
        reverse=True,
    )


@dataclass
class Page:
    days: list[str]
    links: dict[str, str]
    """rel -> the link's URL, as the page's anchors give it."""
    header: str | None
    text: str


def page_at(http: httpx.Client, url: str, **params) -> Page:
    """The history page at ``url``: its days, its ``rel`` links (the ``Link`` header agrees)."""
    r = http.get(url, params=params or None)
    assert r.status_code == 200, r.text
    days = re.findall(r'<tr><th scope="row">([\d-]+)</th>', r.text)
    links = {
        rel: href.replace("&amp;", "&")
        for rel, href in re.findall(r'<a rel="(prev|next)" href="([^"]+)"', r.text)
    }
    header = r.headers.get("link")
    expected = ", ".join(f'<{url}>; rel="{rel}"' for rel, url in links.items()) or None
    assert header == expected
    return Page(days, links, header, r.text)


def walk(http: httpx.Client, first: str, rel: str = "next", **params) -> list[Page]:
    """Every page from ``first`` on, following the ``rel`` links."""
    pages = [page_at(http, first, **params)]
    while rel in pages[-1].links:
        pages.append(page_at(http, pages[-1].links[rel]))
        assert len(pages) < 50, "the pages never end"
    return pages


@pytest.mark.parametrize("round_", [None, 2025])
def test_the_history_page_comes_in_pages_that_join_up(seeded_site, round_):
    """130 days over two rounds: pages of 50 (and 30 with ``limit=``), newest first, hold every
    turn once, the round kept in every link; walking back by the newer links gives the same
    pages; each says which turns it shows of how many."""
    site = seeded_site(players=2, rounds={2025: 60, 2026: 70})
    params = {"round": round_} if round_ else {}
    expected = days_of(site.seeded, "p001", round_)
    for size in (50, 30):
        query = params | ({"limit": size} if size != 50 else {})
        pages = walk(site.http, "/players/p001", **query)
        assert [d for p in pages for d in p.days] == expected
        assert [len(p.days) for p in pages[:-1]] == [size] * (len(pages) - 1)
        assert len(pages) == -(-len(expected) // size) >= 2
        assert "prev" not in pages[0].links and "next" not in pages[-1].links
        for link in [u for p in pages for u in p.links.values()]:
            assert all(f"{k}={v}" in link for k, v in query.items()), link
        back = walk(site.http, pages[-1].links["prev"], rel="prev")
        assert [p.days for p in back] == [p.days for p in reversed(pages[:-1])]
        last = min(2 * size, len(expected))
        assert f"; {len(expected)} turns. This page: turns {size + 1} to {last}," in pages[1].text
    whole = page_at(site.http, "/players/p001", **params, limit=500)
    assert whole.days == expected and whole.links == {} and "This page" not in whole.text


def test_a_turn_arriving_between_page_loads_moves_no_page(seeded_site):
    """A turn taken after the first page was read: the older pages hold exactly the turns not
    read yet; going back to newer pages shows the first page as it was read, then the new turn
    on a page of its own; the first page read afresh starts with it."""
    site = seeded_site(players=1, rounds={2026: 120})
    http, expected = site.http, days_of(site.seeded, "p000")
    first = page_at(http, "/players/p000")
    auth = {"Authorization": f"Bearer {site.seeded.tokens['p000']}"}
    new = http.post(
        "/api/v1/turns",
        json={"player": "p000", "score": 300, "idempotency_key": "between-page-loads"},
        headers=auth,
    )
    assert new.status_code == 201, new.text
    assert new.json()["day"] == "2026-12-30" not in expected
    older = walk(http, first.links["next"])
    assert first.days + [d for p in older for d in p.days] == expected
    newer = walk(http, older[0].links["prev"], rel="prev")
    assert [p.days for p in newer] == [first.days, ["2026-12-30"]]
    assert page_at(http, "/players/p000").days == ["2026-12-30", *first.days[:49]]


def test_every_page_runs_the_same_few_statements(seeded_site):
    """The first page, an older one, a newer one, one of a round and an empty one run the same
    statements for a player of 9 turns as for one of 530 (no query per turn or per page): six,
    and one more for the administrators' names where the page shows a corrected turn."""
    small = seeded_site(players=1, rounds={2026: 9}, name="small")
    large = seeded_site(players=1, rounds={2025: 270, 2026: 260}, name="large")
    paths = [
        "/players/p000",
        "/players/p000?before=2026-01-05",
        "/players/p000?after=2025-12-20",
        "/players/p000?round=2026&before=2026-01-04",
        "/players/p000?limit=1",
    ]
    for site in (small, large):
        for path in paths:
            with site.counter.counting() as seen:
                shown = page_at(site.http, path).days
            corrected = any(("p000", date.fromisoformat(d)) in site.seeded.corrected for d in shown)
            assert shown and len(seen) == 6 + corrected, (path, len(shown), len(seen))
    past_the_end = page_at(large.http, "/players/p000?before=1999-01-01")
    assert past_the_end.days == [] and "No turns on this page." in past_the_end.text
    assert past_the_end.links == {"prev": "/players/p000"}


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"before": "2026-13-01"}, "expected a day written YYYY-MM-DD, e.g. 2026-03-01"),
        ({"after": "yesterday"}, "expected a day written YYYY-MM-DD, e.g. 2026-03-01"),
        ({"limit": 0}, "'limit' (in the query): Input should be greater than or equal to 1"),
        ({"limit": 501}, "'limit' (in the query): Input should be less than or equal to 500"),
        (
            {"before": "2026-03-01", "after": "2026-01-01"},
            "expected one of before= and after=, got both (2026-03-01 and 2026-01-01)",
        ),
    ],
)
def test_bad_page_values_get_a_page_naming_what_was_expected(seeded_site, params, expected):
    site = seeded_site(players=1, rounds={2026: 3})
    r = site.http.get("/players/p000", params=params)
    assert r.status_code == 422 and "<h1>Cannot do that</h1>" in r.text
    assert expected in r.text.replace("&#x27;", "'"), r.text


@pytest.mark.browser
def test_the_page_links_are_named_for_a_screen_reader_and_a_phone(chromium, seeded_site):
    """In chromium at 360 px: the pages' links are in a landmark named for them, called
    "Newer turns" and "Older turns", 44 px high; the table keeps its caption; the page does not
    scroll sideways; following them with the keyboard's Enter shows older turns."""
    site = seeded_site(players=2, rounds={2026: 120})
    page = chromium.new_page(viewport={"width": 360, "height": 640}, timezone_id="UTC")
    page.goto(f"{site.http.base_url}/players/p001?limit=20")
    nav = page.get_by_role("navigation", name="Pages of p001's turns")
    assert nav.get_by_role("link").all_inner_texts() == ["Older turns"]
    assert page.locator("caption").inner_text() == "p001's turns"
    nav.get_by_role("link", name="Older turns").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"before="))
    assert nav.get_by_role("link").all_inner_texts() == ["Newer turns", "Older turns"]
    heights = [b["height"] for b in (a.bounding_box() for a in nav.get_by_role("link").all())]
    assert min(heights) >= 44
    assert page.get_by_role("heading", level=1).all_inner_texts() == ["p001's turns"]
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    shown = page.locator("tbody th[scope=row]").all_inner_texts()
    assert shown == days_of(site.seeded, "p001")[20:40]


# -- a player's time zone changes from their next day ------------------------------------------
