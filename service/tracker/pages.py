"""Server-rendered HTML pages: leaderboard (current and past rounds), player history, roll call,
turn evidence. No CDN: links are built from the mount point (``root_path``). The one script
hides the game information outside 8am-8pm local browser time, as the rules ask; the forms and
error pages have none."""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import date, datetime
from html import escape
from typing import Annotated
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from pydantic import BeforeValidator

from service.logs import say_why
from service.tracker import rules, store
from service.tracker.api import DB, MAX_PAGE_LIMIT, Now, TurnId, Year, root
from service.tracker.models import Player, Turn
from service.tracker.schemas import parse_day

__all__ = ["error_page", "player_link", "render_page", "router"]

router = APIRouter(include_in_schema=False)  # HTML for browsers, not the JSON API

CSS = """
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:60rem;padding:1rem;color:#222}
a,nav a{display:inline-block;min-height:44px;line-height:44px}nav a{margin-right:1rem}
summary{min-height:44px;line-height:44px;cursor:pointer}
:focus-visible{outline:3px solid #1a5fb4;outline-offset:2px}
.scroll{overflow-x:auto}table{border-collapse:collapse;width:100%}
caption{text-align:left;font-weight:bold;padding:.35rem 0}
th,td{border-bottom:1px solid #ddd;padding:.35rem .5rem;text-align:left}
td.n,th.n{text-align:right}.muted{color:#595959}img.photo{max-width:100%;border:1px solid #ccc}
.roll{margin:1rem 0;padding:.5rem;border:1px solid #eee}pre{white-space:pre-wrap;font-size:.8rem}
pre,blockquote,td.text{overflow-wrap:anywhere}
label{display:block;font-weight:bold}input,button{font:inherit;min-height:44px}
input{box-sizing:border-box;width:100%;max-width:24rem}button{padding:0 1.5rem}
.error{color:#a4000f;font-weight:bold}.problems{border:3px solid #a4000f;padding:0 1rem}
"""


CLOSED_SCRIPT = """<script>
(function () {
  var game = document.getElementById("game"), closed = document.getElementById("closed");
  var start = Number(game.dataset.now) - performance.now();  // the server's clock, in ms
  var title = document.title, round = game.dataset.round;
  function check() {
    var now = new Date(start + performance.now());  // in the browser's own zone
    if (round && now.getFullYear() !== Number(round)) {  // the viewer's day is in another round
      location.replace(game.dataset.rounds + now.getFullYear());
      return;
    }
    var hour = now.getHours();
    var open = hour >= Number(game.dataset.opens) && hour < Number(game.dataset.closes);
    game.hidden = !open;
    closed.hidden = open;  // in a live region: a screen reader says it as it appears
    document.title = open ? title : "Closed until 8am: " + title;
  }
  check();
  setInterval(check, 30000);
})();
</script>"""
"""Hides the game information outside 8am-8pm in the browser's time zone, at the server's
clock (the one that decides when scores are taken), and brings it back at 8am. On the current
round's leaderboard (``data-round``, the server's UTC year), a browser whose own day is in
another year (New Year far east or west of UTC) is taken to that year's round."""

_SCRIPT_HASH = base64.b64encode(
    hashlib.sha256(
        CLOSED_SCRIPT.removeprefix("<script>").removesuffix("</script>").encode()
    ).digest()
).decode()
CSP = (
    f"default-src 'none'; script-src 'sha256-{_SCRIPT_HASH}'; style-src 'unsafe-inline'; "
    "img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
"""The pages' Content-Security-Policy: the one script above (by hash) and nothing injected
runs; images (the turns' photos) come from this site only; forms post only to it; no other
site may frame a page."""


def render_page(
    request: Request,
    title: str,
    body: str,
    status: int = 200,
    *,
    now: datetime | None = None,
    current_round: int | None = None,
    error: bool = False,
) -> HTMLResponse:
    """A page headed ``title``; with ``now`` (the server's clock) its ``body`` is game
    information, which the rules show only from 8am to 8pm local browser time. With
    ``current_round`` (the leaderboard of the round under way by UTC) a browser whose own day
    is in another year is taken to that round. ``error``: the page answers a form sent with
    mistakes (its title says so first, as screen readers read it)."""
    base, script = root(request), ""
    if now is not None:
        ms = int(now.timestamp() * 1000)
        follow = (
            f' data-round="{current_round}" data-rounds="{base}/rounds/"'
            if current_round is not None
            else ""
        )
        body = (
            '<div role="status"><p id="closed" hidden>Morning Roll is for the morning: the game '
            "information is shown from 8am to 8pm your time. See you at 8am!</p></div>\n"
            f'<div id="game" data-now="{ms}" data-opens="{rules.OPENS.hour}" '
            f'data-closes="{rules.CLOSES.hour}"{follow}>{body}</div>'
        )
        script = CLOSED_SCRIPT
    prefix = "Error: " if error else ""
    html = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{prefix}{escape(title)} - Morning Roll</title><style>{CSS}</style>
</head>
<body><nav aria-label="Morning Roll"><a href="{base}/">Leaderboard</a>
<a href="{base}/rollcall">Roll call</a> <a href="{base}/add">Add roll</a></nav>
<main><h1>{escape(title)}</h1>
{body}
</main>{script}
</body></html>"""
    return HTMLResponse(html, status_code=status, headers={"Content-Security-Policy": CSP})


def _table(caption: str, head: str, rows: list[str]) -> str:
    """A table named by its ``caption``, in a box that scrolls sideways on a narrow phone (the
    page itself does not); the box takes keyboard focus so it can be scrolled without a mouse."""
    return (  # one table a page: its caption's id is fixed
        '<div class="scroll" role="region" aria-labelledby="caption" tabindex="0"><table>'
        f'<caption id="caption">{escape(caption)}</caption>\n<thead><tr>{head}</tr></thead>\n'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _count(n: int, thing: str) -> str:
    """``1 turn``, ``2 turns``."""
    return f"{n} {thing}" if n == 1 else f"{n} {thing}s"


def player_link(base: str, name: str) -> str:
    return f'<a href="{base}/players/{quote(name)}">{escape(name)}</a>'


def _turn_link(base: str, turn: Turn, text: str) -> str:
    return f'<a href="{base}/turns/{turn.id}">{escape(text)}</a>'


def error_page(request: Request, message: str, status: int) -> HTMLResponse:
    """A page that says what was wrong with the address or the form sent (not JSON: a
    person sees it)."""
    title = "Not found" if status == 404 else "Cannot do that"
    say_why(request, message)  # the server's log says it too
    return render_page(request, title, f"<p>{escape(message)}</p>", status=status)


@router.get("/", response_class=HTMLResponse)
def current_round(request: Request, session: DB, now: Now) -> HTMLResponse:
    """The round under way by UTC; the page takes a browser in another year to its round."""
    return _leaderboard(request, session, now, rules.current_round(now), current=True)


@router.get("/rounds/{year}", response_class=HTMLResponse)
def past_round(year: Year, request: Request, session: DB, now: Now) -> HTMLResponse:
    return _leaderboard(request, session, now, year)


def _leaderboard(
    request: Request, session, now, year: int, *, current: bool = False
) -> HTMLResponse:
    base = root(request)
    rows = store.leaderboard(session, year)
    latest = store.latest_turns(session, year) if rows else {}
    head = (
        '<th scope="col" class="n">Rank</th><th scope="col">Player</th>'
        '<th scope="col" class="n">Total</th><th scope="col" class="n">Turns</th>'
        '<th scope="col" class="n">Best</th><th scope="col">Latest turn</th>'
    )
    trs = []
    for r in rows:
        t = latest.get(r["player"])
        last = _turn_link(base, t, f"{t.day.isoformat()}: {t.score}") if t else ""
        evidence = (
            f' <span class="muted">({_count(len(t.rolls), "roll")})</span>' if t and t.rolls else ""
        )
        trs.append(
            f'<tr><td class="n">{r["rank"]}</td><th scope="row">'
            f'{player_link(base, r["player"])}</th><td class="n">{r["total"]}</td>'
            f'<td class="n">{r["turns"]}</td><td class="n">{r["best"]}</td>'
            f"<td>{last}{evidence}</td></tr>"
        )
    if not rows:
        trs.append('<tr><td colspan="6" class="muted">No turns yet in this round.</td></tr>')
    body = [_table(f"Standings of round {year}", head, trs)]
    others = [y for y in store.rounds(session, rules.current_round(now)) if y != year]
    if others:
        links = " ".join(f'<a href="{base}/rounds/{y}">{y}</a>' for y in others)
        body.append(f"<p>Other rounds: {links}</p>")
    title = f"Round {year} leaderboard"
    return render_page(
        request, title, "\n".join(body), now=now, current_round=year if current else None
    )


HISTORY_PAGE = 50
"""Turns on a page of a player's history (``?limit=`` up to the API's most): a year of daily
turns is about 48 KB of HTML, and the pages never grow with the years."""

Cursor = Annotated[
    date | None,
    BeforeValidator(parse_day),
    Query(description="a day written YYYY-MM-DD: a page's first (after=) or last (before=) day"),
]


@router.get("/players/{name}", response_class=HTMLResponse)
def player_history(
    name: str,
    request: Request,
    session: DB,
    now: Now,
    round: Annotated[int | None, Query(ge=1900, le=9999)] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_LIMIT)] = HISTORY_PAGE,
    before: Cursor = None,
    after: Cursor = None,
) -> HTMLResponse:
    """A page of the player's turns, newest first: the newest ``limit``, those before the day
    ``before`` (older) or after the day ``after`` (newer). The cursors are days, as the API's
    ``before=``: a turn that arrives between two page loads moves no page."""
    if before is not None and after is not None:
        return error_page(
            request,
            f"expected one of before= and after=, got both ({before.isoformat()} and "
            f"{after.isoformat()})",
            422,
        )
    base = root(request)
    try:
        player, turns = store.player_turns(
            session, name, round, before=before, after=after, limit=limit
        )
    except store.TrackerError as exc:
        return error_page(request, str(exc), exc.status)
    total, newer = store.count_turns(session, player, round, after=turns[0].day if turns else None)
    title = f"{player.name}'s turns" + (f" in round {round}" if round else "")
    head = (
        '<th scope="col">Day</th><th scope="col" class="n">Score</th>'
        '<th scope="col">Comment</th><th scope="col">Evidence</th>'
    )
    trs = []
    for t in turns:
        ev = _count(len(t.rolls), "roll") if t.rolls else "by hand"
        trs.append(
            f'<tr><th scope="row">{t.day.isoformat()}</th><td class="n">{t.score}</td>'
            f'<td class="text">{escape(t.comment)}</td><td>{_turn_link(base, t, ev)}</td></tr>'
        )
    paged = before is not None or after is not None
    if not turns:
        empty = "No turns on this page." if paged else "No turns yet."
        trs.append(f'<tr><td colspan="4" class="muted">{empty}</td></tr>')
    shown = f"; {_count(total, 'turn')}."
    if turns and len(turns) < total:
        shown += f" This page: turns {newer + 1} to {newer + len(turns)}, newest first."
    links = _history_links(
        f"{base}/players/{quote(player.name, safe='')}",
        {"round": round, "limit": limit if limit != HISTORY_PAGE else None},
        turns,
        newer=newer > 0 or (paged and not turns),
        older=newer + len(turns) < total,
    )
    body = (
        f'<p class="muted">{_zone_line(player, now)}{shown}</p>\n'
        + _table(title, head, trs)
        + _history_nav(player.name, links)
    )
    page = render_page(request, title, body, now=now)
    if links:
        page.headers["Link"] = ", ".join(f'<{url}>; rel="{rel}"' for rel, (url, _) in links.items())
    return page


def _zone_line(player: Player, now: datetime) -> str:
    """The zone the player's turns count in, and a change asked for that has not taken over."""
    line = f"Time zone {escape(store.zone_at(player, now))}"
    if pending := store.pending_zone(player, now):
        zone, at = pending
        line += f" ({escape(zone)} from {rules.local_now(at, zone):%Y-%m-%d})"
    return line


def _history_links(
    path: str, keep: dict[str, object], turns: list[Turn], *, newer: bool, older: bool
) -> dict[str, tuple[str, str]]:
    """``{"prev"|"next": (url, text)}``: the newer and the older page of a history whose page
    shows ``turns``; each keeps the ``keep`` query values that are set (the round, the size).
    The newer page of an empty page (a cursor past the end) is the newest page."""
    kept = {k: v for k, v in keep.items() if v is not None}

    def url(**cursor: str) -> str:
        query = urlencode(kept | cursor)
        return f"{path}?{query}" if query else path

    links = {}
    if newer:
        first = turns[0].day.isoformat() if turns else None
        links["prev"] = (url(after=first) if first else url(), "Newer turns")
    if older and turns:
        links["next"] = (url(before=turns[-1].day.isoformat()), "Older turns")
    return links


def _history_nav(name: str, links: dict[str, tuple[str, str]]) -> str:
    """The links to the newer and older pages, in a landmark named for them."""
    if not links:
        return ""
    anchors = " ".join(
        f'<a rel="{rel}" href="{escape(url)}">{text}</a>' for rel, (url, text) in links.items()
    )
    return f'<nav aria-label="Pages of {escape(name)}\'s turns"><p>{anchors}</p></nav>'


@router.get("/rollcall", response_class=HTMLResponse)
def rollcall(request: Request, session: DB, now: Now) -> HTMLResponse:
    base = root(request)
    rows = store.roll_call(session, now)
    items = []
    for r in rows:
        today = " - rolled today" if r["rolled_today"] else ""
        items.append(
            f"<li>{player_link(base, r['player'])} "
            f'<span class="muted">({_count(r["turns"], "turn")}, joined {r["joined"].isoformat()}'
            f"{today})</span></li>"
        )
    body = "<p>Big shoutout to the rollers!</p><ul>" + "".join(items) + "</ul>"
    if not rows:
        body = '<p class="muted">Nobody has registered yet.</p>'
    return render_page(request, "Roll call", body, now=now)


@router.get("/turns/{turn_id}", response_class=HTMLResponse)
def turn_evidence(turn_id: TurnId, request: Request, session: DB, now: Now) -> HTMLResponse:
    base = root(request)
    try:
        t = store.get_turn(session, turn_id)
    except store.TrackerError as exc:
        return error_page(request, str(exc), exc.status)
    body = [
        f"<p>{player_link(base, t.player.name)} scored <strong>{t.score}</strong> on "
        f"{t.day.isoformat()} (local time {escape(t.local_time)}).</p>"
    ]
    if t.comment:
        body.append(f"<blockquote>{escape(t.comment)}</blockquote>")
    for c in t.corrections:
        body.append(
            f'<p class="muted">Corrected by {escape(c.admin.name)} from {c.old_score} to '
            f"{c.new_score}: {escape(c.reason)}</p>"
        )
    if not t.rolls:
        body.append('<p class="muted">No camera evidence: the score was entered by hand.</p>')
    for r in t.rolls:
        values = ", ".join(str(v) for v in r.values) or "none"
        alt = f"Photo of roll {r.position + 1} of {t.player.name}'s turn, read as {values}"
        img = (
            f'<img class="photo" alt="{escape(alt)}" '
            f'src="{base}/api/v1/turns/{t.id}/rolls/{r.position}/photo.jpg">'
            if r.has_photo
            else '<p class="muted">no photo</p>'
        )
        reading = (
            f"<details><summary>Reading of roll {r.position + 1}</summary>"
            f"<pre>{escape(json.dumps(r.reading, indent=1))}</pre></details>"
            if r.reading is not None
            else ""
        )
        body.append(
            f'<div class="roll"><h2>Roll {r.position + 1}: {escape(values)}</h2>{img}{reading}</div>'
        )
    title = f"{t.player.name}'s turn of {t.day.isoformat()}"
    return render_page(request, title, "\n".join(body), now=now)
