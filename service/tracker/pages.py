"""Server-rendered HTML pages: leaderboard (current and past rounds), player history, roll call,
turn evidence. No CDN: links are built from the mount point (``root_path``). The one script
hides the game information outside 8am-8pm local browser time, as the rules ask; the forms and
error pages have none."""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import datetime
from html import escape
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from service.tracker import store
from service.tracker.api import DB, Now, TurnId, Year, root
from service.tracker.models import Turn
from service.tracker.rules import CLOSES, OPENS

__all__ = ["error_page", "router"]

router = APIRouter(include_in_schema=False)  # HTML for browsers, not the JSON API

CSS = """
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:60rem;padding:1rem;color:#222}
nav a{margin-right:1rem}table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid #ddd;padding:.35rem .5rem;text-align:left}
td.n,th.n{text-align:right}.muted{color:#777}img.photo{max-width:100%;border:1px solid #ccc}
.roll{margin:1rem 0;padding:.5rem;border:1px solid #eee}pre{white-space:pre-wrap;font-size:.8rem}
"""


CLOSED_SCRIPT = """<script>
(function () {
  var game = document.getElementById("game"), closed = document.getElementById("closed");
  var start = Number(game.dataset.now) - performance.now();  // the server's clock, in ms
  function check() {
    var hour = new Date(start + performance.now()).getHours();  // the browser's own zone
    var open = hour >= Number(game.dataset.opens) && hour < Number(game.dataset.closes);
    game.hidden = !open;
    closed.hidden = open;
  }
  check();
  setInterval(check, 30000);
})();
</script>"""
"""Hides the game information outside 8am-8pm in the browser's time zone, at the server's
clock (the one that decides when scores are taken), and brings it back at 8am."""

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


def _page(
    request: Request, title: str, body: str, status: int = 200, *, now: datetime | None = None
) -> HTMLResponse:
    """A page; with ``now`` (the server's clock) it is game information, which the rules show
    only from 8am to 8pm local browser time."""
    base = root(request)
    main = f"<h1>{escape(title)}</h1>\n{body}"
    if now is not None:
        ms = int(now.timestamp() * 1000)
        main = (
            f'<p id="closed" hidden>Morning Roll is for the morning: the game information is '
            f"shown from 8am to 8pm your time. See you at 8am!</p>\n"
            f'<main id="game" data-now="{ms}" data-opens="{OPENS.hour}" '
            f'data-closes="{CLOSES.hour}">{main}</main>\n{CLOSED_SCRIPT}'
        )
    html = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)} - Morning Roll</title><style>{CSS}</style></head>
<body><nav><a href="{base}/">Leaderboard</a><a href="{base}/rollcall">Roll call</a>
<a href="{base}/add">Add roll</a></nav>
{main}
</body></html>"""
    return HTMLResponse(html, status_code=status, headers={"Content-Security-Policy": CSP})


def _turns(n: int) -> str:
    return f"{n} turn" if n == 1 else f"{n} turns"


def _player_link(base: str, name: str) -> str:
    return f'<a href="{base}/players/{quote(name)}">{escape(name)}</a>'


def _turn_link(base: str, turn: Turn, text: str) -> str:
    return f'<a href="{base}/turns/{turn.id}">{escape(text)}</a>'


def error_page(request: Request, message: str, status: int) -> HTMLResponse:
    """A page that says what was wrong with the address or the form sent (not JSON: a
    person sees it)."""
    title = "Not found" if status == 404 else "Cannot do that"
    return _page(request, title, f"<p>{escape(message)}</p>", status=status)


@router.get("/", response_class=HTMLResponse)
def current_round(request: Request, session: DB, now: Now) -> HTMLResponse:
    return _leaderboard(request, session, now, store.utc(now).year)


@router.get("/rounds/{year}", response_class=HTMLResponse)
def past_round(year: Year, request: Request, session: DB, now: Now) -> HTMLResponse:
    return _leaderboard(request, session, now, year)


def _leaderboard(request: Request, session, now, year: int) -> HTMLResponse:
    base = root(request)
    rows = store.leaderboard(session, year)
    latest = {}
    if rows:
        from sqlalchemy import select

        from service.tracker.models import Player

        stmt = (
            select(Turn, Player.name)
            .join(Player, Turn.player_id == Player.id)
            .where(Turn.round == year)
            .order_by(Turn.day.desc(), Turn.id.desc())
        )
        for turn, name in session.execute(stmt):
            latest.setdefault(name, turn)
    body = [
        "<table><tr><th>#</th><th>Player</th><th class=n>Total</th><th class=n>Turns</th>"
        "<th class=n>Best</th><th>Latest turn</th></tr>"
    ]
    for r in rows:
        t = latest.get(r["player"])
        last = _turn_link(base, t, f"{t.day.isoformat()}: {t.score}") if t else ""
        evidence = f' <span class="muted">({len(t.rolls)} rolls)</span>' if t and t.rolls else ""
        body.append(
            f"<tr><td>{r['rank']}</td><td>{_player_link(base, r['player'])}</td>"
            f"<td class=n>{r['total']}</td><td class=n>{r['turns']}</td><td class=n>{r['best']}</td>"
            f"<td>{last}{evidence}</td></tr>"
        )
    if not rows:
        body.append('<tr><td colspan=6 class="muted">No turns yet in this round.</td></tr>')
    body.append("</table>")
    others = [y for y in store.rounds(session, now) if y != year]
    if others:
        links = " ".join(f'<a href="{base}/rounds/{y}">{y}</a>' for y in others)
        body.append(f"<p>Other rounds: {links}</p>")
    return _page(request, f"Round {year}", "\n".join(body), now=now)


@router.get("/players/{name}", response_class=HTMLResponse)
def player_history(
    name: str,
    request: Request,
    session: DB,
    now: Now,
    round: Annotated[int | None, Query(ge=1900, le=9999)] = None,
) -> HTMLResponse:
    base = root(request)
    try:
        player, turns = store.player_turns(session, name, round)
    except store.TrackerError as exc:
        return error_page(request, str(exc), exc.status)
    body = [
        f'<p class="muted">Time zone {escape(player.timezone)}; {_turns(len(turns))}.</p>',
        "<table><tr><th>Day</th><th class=n>Score</th><th>Comment</th><th>Evidence</th></tr>",
    ]
    for t in turns:
        ev = (
            _turn_link(base, t, f"{len(t.rolls)} rolls") if t.rolls else _turn_link(base, t, "turn")
        )
        body.append(
            f"<tr><td>{t.day.isoformat()}</td><td class=n>{t.score}</td>"
            f"<td>{escape(t.comment)}</td><td>{ev}</td></tr>"
        )
    body.append("</table>")
    return _page(request, f"{player.name}", "\n".join(body), now=now)


@router.get("/rollcall", response_class=HTMLResponse)
def rollcall(request: Request, session: DB, now: Now) -> HTMLResponse:
    base = root(request)
    rows = store.roll_call(session, now)
    items = []
    for r in rows:
        today = " - rolled today" if r["rolled_today"] else ""
        items.append(
            f"<li>{_player_link(base, r['player'])} "
            f'<span class="muted">({_turns(r["turns"])}, joined {r["joined"].isoformat()}'
            f"{today})</span></li>"
        )
    body = "<p>Big shoutout to the rollers!</p><ul>" + "".join(items) + "</ul>"
    if not rows:
        body = '<p class="muted">Nobody has registered yet.</p>'
    return _page(request, "Roll call", body, now=now)


@router.get("/turns/{turn_id}", response_class=HTMLResponse)
def turn_evidence(turn_id: TurnId, request: Request, session: DB, now: Now) -> HTMLResponse:
    base = root(request)
    try:
        t = store.get_turn(session, turn_id)
    except store.TrackerError as exc:
        return error_page(request, str(exc), exc.status)
    body = [
        f"<p>{_player_link(base, t.player.name)} scored <strong>{t.score}</strong> on "
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
        img = (
            f'<img class="photo" alt="photo of roll {r.position + 1}" '
            f'src="{base}/api/v1/turns/{t.id}/rolls/{r.position}/photo.jpg">'
            if r.photo is not None
            else '<p class="muted">no photo</p>'
        )
        reading = (
            f"<details><summary>Reading</summary><pre>{escape(json.dumps(r.reading, indent=1))}"
            "</pre></details>"
            if r.reading is not None
            else ""
        )
        body.append(
            f'<div class="roll"><h2>Roll {r.position + 1}: {escape(values)}</h2>{img}{reading}</div>'
        )
    return _page(request, f"Turn {t.id}", "\n".join(body), now=now)
