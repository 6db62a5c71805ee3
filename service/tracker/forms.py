"""The site's two forms, for players without the camera: register, and add today's roll.

Plain HTML forms posted to the server (no JavaScript). The add-roll form carries an idempotency
key minted when the page is shown, so pressing "submit" twice stores one turn.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from html import escape
from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse
from pydantic import ValidationError

from service.tracker import rules, store
from service.tracker.api import DB, Now, root, writing
from service.tracker.models import Turn
from service.tracker.pages import _page
from service.tracker.schemas import Credentials, Registration, TurnIn
from service.tracker.security import hash_password

__all__ = ["router"]

router = APIRouter(include_in_schema=False)  # HTML for browsers, not the JSON API


def _errors(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(x) for x in e['loc'])}: {str(e['msg']).removeprefix('Value error, ')}"
        for e in exc.errors()
    )


def _add_form(base: str, message: str = "", name: str = "") -> str:
    key = uuid.uuid4()
    note = f'<p class="muted"><strong>{escape(message)}</strong></p>' if message else ""
    return f"""{note}
<form method="post" action="{base}/add">
<input type="hidden" name="idempotency_key" value="{key}">
<p><label>Player <input name="name" required value="{escape(name)}"></label></p>
<p><label>Password <input name="password" type="password" required></label></p>
<p><label>Score <input name="score" type="number" min="0" step="50" required></label></p>
<p><label>Comment <input name="comment" maxlength="500"></label></p>
<p><button>Add roll</button></p></form>
<p>New here? <a href="{base}/register">Register</a>. Scores are taken from 8am to 8pm in your
own time zone, one turn a day.</p>"""


@router.get("/add", response_class=HTMLResponse)
def add_form(request: Request) -> HTMLResponse:
    return _page(request, "Add roll", _add_form(root(request)))


@router.post("/add", response_class=HTMLResponse)
def add_roll(
    request: Request,
    session: DB,
    now: Now,
    name: Annotated[str, Form()],
    password: Annotated[str, Form()],
    score: Annotated[str, Form()],
    idempotency_key: Annotated[str, Form()],
    comment: Annotated[str, Form()] = "",
) -> HTMLResponse:
    base = root(request)
    try:
        creds = Credentials(name=name, password=password)  # stripped as the API strips them
        guard = request.app.state.login_guard
        player = guard.check_password(session, creds.name, creds.password, now)
        turn_in = TurnIn(
            player=player.name,
            score=score.strip(),
            comment=comment,
            idempotency_key=idempotency_key,
        )
        with writing(request) as w:
            turn, replayed = store.submit_turn(w, w.merge(player), turn_in, now)
            w.commit()
        if replayed and not _same_turn(turn, turn_in, now):
            raise store.Conflict(
                f"this form was already sent: it holds {turn.player.name}'s turn of "
                f"{turn.day.isoformat()} ({_first_score(turn)} points), so nothing was stored "
                "now. Here is a new form: send it to add your roll."
            )
    except ValidationError as exc:
        return _page(request, "Add roll", _add_form(base, _errors(exc), name), status=422)
    except store.TrackerError as exc:
        return _page(request, "Add roll", _add_form(base, str(exc), name), status=exc.status)
    body = (
        f"<p>Stored: {escape(turn.player.name)} scored <strong>{turn.score}</strong> on "
        f'{turn.day.isoformat()}. <a href="{base}/turns/{turn.id}">See the turn</a> or the '
        f'<a href="{base}/">leaderboard</a>.</p>'
    )
    return _page(request, "Roll added", body, status=201)


def _first_score(turn: Turn) -> int:
    """The score as the player sent it, before any administrator's correction."""
    return turn.corrections[0].old_score if turn.corrections else turn.score


def _same_turn(turn: Turn, turn_in: TurnIn, now: datetime) -> bool:
    """Whether a form whose key is stored holds that turn (sent twice), not a new roll typed
    into a form kept open since an earlier day (its key is the stored turn's)."""
    return (
        turn.day == rules.local_day(now, turn.player.timezone)
        and _first_score(turn) == turn_in.score
        and turn.comment == turn_in.comment
    )


def _register_form(base: str, message: str = "") -> str:
    note = f'<p class="muted"><strong>{escape(message)}</strong></p>' if message else ""
    return f"""{note}
<form method="post" action="{base}/register">
<p><label>Name <input name="name" required maxlength="40"></label></p>
<p><label>Password <input name="password" type="password" required minlength="8"></label></p>
<p><label>Time zone <input name="timezone" required placeholder="America/Chicago"></label></p>
<p><button>Register</button></p></form>"""


@router.get("/register", response_class=HTMLResponse)
def register_form(request: Request) -> HTMLResponse:
    return _page(request, "Register", _register_form(root(request)))


@router.post("/register", response_class=HTMLResponse)
def register(
    request: Request,
    now: Now,
    name: Annotated[str, Form()],
    password: Annotated[str, Form()],
    timezone: Annotated[str, Form()],
) -> HTMLResponse:
    base = root(request)
    try:
        reg = Registration(name=name, password=password, timezone=timezone)
        hashed = hash_password(reg.password)
        with writing(request) as w:
            player = store.register(w, reg, now, password_hash=hashed)
            w.commit()
    except ValidationError as exc:
        return _page(request, "Register", _register_form(base, _errors(exc)), status=422)
    except store.TrackerError as exc:
        return _page(request, "Register", _register_form(base, str(exc)), status=exc.status)
    body = (
        f'<p>Welcome, {escape(player.name)}! <a href="{base}/add">Add your first roll</a> '
        "(8am to 8pm your time).</p>"
    )
    return _page(request, "Registered", body, status=201)
