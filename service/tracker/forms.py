"""The site's forms, for players without the camera: register, add today's roll, and change
one's time zone.

Plain HTML forms posted to the server (no JavaScript). The add-roll form carries an idempotency
key minted when the page is shown, so pressing "submit" twice stores one turn.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from html import escape
from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse
from pydantic import ValidationError
from sqlalchemy.orm import Session

from service.logs import say_why
from service.tracker import rules, store
from service.tracker.api import DB, Now, root, writing
from service.tracker.models import Player, Turn
from service.tracker.pages import player_link, render_page
from service.tracker.schemas import Credentials, Registration, TimezoneIn, TurnIn
from service.tracker.security import hash_password
from service.tracker.throttle import TooManyTries, client_address

__all__ = ["router"]

router = APIRouter(include_in_schema=False)  # HTML for browsers, not the JSON API


Problem = tuple[tuple[str, ...], str]
"""A mistake in a form sent: the fields it is about (none: the form as a whole), and what was
wrong."""


HIDDEN_PROBLEMS = {
    "idempotency_key": "this form's hidden key was missing or damaged (a form not sent from "
    "this page, or cut short on the way), so nothing was stored. Here is a fresh form with "
    "what you typed: send it again.",
}
"""What a player reads when a hidden input of a form is wrong: the field's name and pydantic's
words would mean nothing to them."""


def _problems(
    exc: ValidationError | store.TrackerError, fields: tuple[str, ...], about: tuple[str, ...]
) -> list[Problem]:
    """The problems a form's ``exc`` names: pydantic's each by the form's field (a hidden one's
    in :data:`HIDDEN_PROBLEMS`' words, another it does not show for the whole form, named in the
    message), the store's one about the fields ``about``."""
    if isinstance(exc, store.TrackerError):
        return [(about, str(exc))]
    out = []
    for e in exc.errors():
        loc = ".".join(str(x) for x in e["loc"])
        msg = str(e["msg"]).removeprefix("Value error, ")
        if loc in HIDDEN_PROBLEMS:
            out.append(((), HIDDEN_PROBLEMS[loc]))
        else:
            out.append(((loc,), msg) if loc in fields else ((), f"{loc}: {msg}" if loc else msg))
    return out


def _field(
    name: str,
    labels: dict[str, str],
    problems: Sequence[Problem],
    attrs: str = "",
    *,
    value: str = "",
    required: bool = True,
    hint: str = "",
) -> str:
    """A labelled input, ``(required)`` or ``(optional)`` in its label. A problem about it is
    shown above it, tied to it (``aria-describedby``) and marks it ``aria-invalid``; the first
    input with a problem takes the focus, so that a screen reader reads it with its problem."""
    errors = [f"error-{i}" for i, (fields, _) in enumerate(problems) if name in fields]
    shown = "".join(  # a problem about two fields is shown once, at the second
        f'<span class="error" id="error-{i}">Error: {escape(message)}</span><br>'
        for i, (fields, message) in enumerate(problems)
        if fields and fields[-1] == name
    )
    state = " required" if required else ""
    if errors:
        state += ' aria-invalid="true"'
        if name == next(f[0] for f, _ in problems if f):
            state += " autofocus"
    described = ([f"{name}-hint"] if hint else []) + errors
    if described:
        state += f' aria-describedby="{" ".join(described)}"'
    hint = f'<span class="muted" id="{name}-hint">{escape(hint)}</span><br>' if hint else ""
    mark = "required" if required else "optional"
    return (
        f'<p><label for="{name}">{escape(labels[name])} ({mark})</label>{hint}{shown}'
        f'<input id="{name}" name="{name}"{attrs} value="{escape(value)}"{state}></p>'
    )


def _summary(problems: Sequence[Problem], labels: dict[str, str]) -> str:
    """The problems at the top of the form, announced as the page opens (``role=alert``); each
    about a field links to it."""
    if not problems:
        return ""
    items = "".join(
        f'<li><a href="#{fields[0]}">{escape(labels[fields[0]])}: {escape(message)}</a></li>'
        if fields
        else f"<li>{escape(message)}</li>"
        for fields, message in problems
    )
    return f'<div class="problems" role="alert"><h2>There is a problem</h2><ul>{items}</ul></div>'


ADD_FIELDS = {"name": "Player", "password": "Password", "score": "Score", "comment": "Comment"}
REGISTER_FIELDS = {"name": "Name", "password": "Password", "timezone": "Time zone"}
NAME_ATTRS = ' autocomplete="username" autocapitalize="none" spellcheck="false"'


def _add_form(
    base: str,
    problems: Sequence[Problem] = (),
    name: str = "",
    score: str = "",
    comment: str = "",
) -> str:
    """The add-roll form; sent back with ``problems``, it keeps what was typed but the password."""
    key = uuid.uuid4()
    f = ADD_FIELDS
    fields = [
        _field("name", f, problems, NAME_ATTRS, value=name),
        _field("password", f, problems, ' type="password" autocomplete="current-password"'),
        _field(
            "score",
            f,
            problems,
            ' type="number" min="0" step="50" inputmode="numeric"',
            value=score,
            hint="A multiple of 50.",
        ),
        _field("comment", f, problems, ' maxlength="500"', value=comment, required=False),
    ]
    inputs = "".join(fields)
    return f"""{_summary(problems, f)}
<form method="post" action="{base}/add">
<input type="hidden" name="idempotency_key" value="{key}">
{inputs}
<p><button>Add roll</button></p></form>
<p>New here? <a href="{base}/register">Register</a>. Scores are taken from 8am to 8pm in your
own time zone, one turn a day. Moving? <a href="{base}/timezone">Change your time zone</a>.
<a href="{base}/password">Change your password</a>.</p>"""


@router.get("/add", response_class=HTMLResponse)
def add_form(request: Request) -> HTMLResponse:
    return render_page(request, "Add roll", _add_form(root(request)))


@router.post("/add", response_class=HTMLResponse)
def add_roll(
    request: Request,
    session: DB,
    now: Now,
    name: Annotated[str, Form()] = "",
    password: Annotated[str, Form()] = "",
    score: Annotated[str, Form()] = "",
    idempotency_key: Annotated[str, Form()] = "",
    comment: Annotated[str, Form()] = "",
) -> HTMLResponse:
    base = root(request)
    try:
        player = _logged_in(request, session, name, password, now)
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
    except (ValidationError, store.TrackerError) as exc:
        problems = _problems(exc, tuple(ADD_FIELDS), _login_fields(exc))
        form = _add_form(base, problems, name, score, comment)
        return _form_page(request, "Add roll", form, exc)
    body = (
        f"<p>Stored: {escape(turn.player.name)} scored <strong>{turn.score}</strong> on "
        f'{turn.day.isoformat()}. <a href="{base}/turns/{turn.id}">See the turn</a> or the '
        f'<a href="{base}/">leaderboard</a>.</p>'
    )
    return render_page(request, "Roll added", body, status=201)


def _logged_in(
    request: Request, session: Session, name: str, password: str, now: datetime
) -> Player:
    """The player a form's name and password log in (stripped as the API strips them), through
    the site's login guard."""
    creds = Credentials(name=name, password=password)
    guard = request.app.state.login_guard
    return guard.check_password(session, creds.name, creds.password, now, client_address(request))


def _login_fields(exc: Exception, otherwise: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The fields a form's problem ``exc`` is about: the name and password for a refused login
    (or too many tries), else ``otherwise``."""
    return ("name", "password") if isinstance(exc, store.Unauthorized | TooManyTries) else otherwise


def _form_page(
    request: Request, title: str, form: str, exc: ValidationError | store.TrackerError
) -> HTMLResponse:
    """A form sent back with its problems, at the status of ``exc`` (a wait: ``Retry-After``),
    which the server's log says (no field's value: a password is one)."""
    status = exc.status if isinstance(exc, store.TrackerError) else 422
    say_why(request, "; ".join(message for _, message in _problems(exc, (), ())))
    page = render_page(request, title, form, status=status, error=True)
    if isinstance(exc, TooManyTries):
        page.headers["Retry-After"] = str(exc.retry_after)
    return page


def _first_score(turn: Turn) -> int:
    """The score as the player sent it, before any administrator's correction."""
    return turn.corrections[0].old_score if turn.corrections else turn.score


def _same_turn(turn: Turn, turn_in: TurnIn, now: datetime) -> bool:
    """Whether a form whose key is stored holds that turn (sent twice), not a new roll typed
    into a form kept open since an earlier day (its key is the stored turn's)."""
    return (
        turn.day == rules.local_day(now, store.zone_at(turn.player, now))
        and _first_score(turn) == turn_in.score
        and turn.comment == turn_in.comment
    )


def _register_form(
    base: str, problems: Sequence[Problem] = (), name: str = "", timezone: str = ""
) -> str:
    """The registration form; sent back with ``problems``, it keeps what was typed but the
    password."""
    f = REGISTER_FIELDS
    fields = [
        _field(
            "name",
            f,
            problems,
            ' maxlength="40"' + NAME_ATTRS,
            value=name,
            hint="Letters, digits, spaces, '.', '_' or '-'; at most 40.",
        ),
        _field(
            "password",
            f,
            problems,
            ' type="password" minlength="8" autocomplete="new-password"',
            hint="At least 8 characters.",
        ),
        _field(
            "timezone",
            f,
            problems,
            ' autocapitalize="none" spellcheck="false"',
            value=timezone,
            hint="Where you play, for example America/Chicago or Europe/Paris.",
        ),
    ]
    inputs = "".join(fields)
    return f"""{_summary(problems, f)}
<form method="post" action="{base}/register">
{inputs}
<p><button>Register</button></p></form>"""


@router.get("/register", response_class=HTMLResponse)
def register_form(request: Request) -> HTMLResponse:
    return render_page(request, "Register", _register_form(root(request)))


@router.post("/register", response_class=HTMLResponse)
def register(
    request: Request,
    now: Now,
    name: Annotated[str, Form()] = "",
    password: Annotated[str, Form()] = "",
    timezone: Annotated[str, Form()] = "",
) -> HTMLResponse:
    base = root(request)
    try:
        reg = Registration(name=name, password=password, timezone=timezone)
        with request.app.state.registrations.holding(client_address(request), now):
            with request.app.state.db.reading() as session:  # a refused name costs no hash
                store.check_name_free(session, reg.name)
            hashed = hash_password(reg.password)
            with writing(request) as w:
                player = store.register(w, reg, now, password_hash=hashed)
                w.commit()
    except (ValidationError, store.TrackerError) as exc:
        about = ("name",) if isinstance(exc, store.Conflict) else ()
        problems = _problems(exc, tuple(REGISTER_FIELDS), about)
        form = _register_form(base, problems, name, timezone)
        return _form_page(request, "Register", form, exc)
    body = (
        f'<p>Welcome, {escape(player.name)}! <a href="{base}/add">Add your first roll</a> '
        "(8am to 8pm your time).</p>"
    )
    return render_page(request, "Registered", body, status=201)


ZONE_FIELDS = {"name": "Player", "password": "Password", "timezone": "New time zone"}
ZONE_HINT = (
    "Your turns count in it from your next day: from its first midnight once your day under way "
    "is over. Until then they count in your zone now; turns taken keep their day."
)


def _zone_form(
    base: str, problems: Sequence[Problem] = (), name: str = "", timezone: str = ""
) -> str:
    """The time zone form; sent back with ``problems``, it keeps what was typed but the
    password."""
    f = ZONE_FIELDS
    fields = [
        _field("name", f, problems, NAME_ATTRS, value=name),
        _field("password", f, problems, ' type="password" autocomplete="current-password"'),
        _field(
            "timezone",
            f,
            problems,
            ' maxlength="64" autocapitalize="none" spellcheck="false"',
            value=timezone,
            hint="For example America/Chicago or Europe/Paris. " + ZONE_HINT,
        ),
    ]
    return f"""{_summary(problems, f)}
<form method="post" action="{base}/timezone">
{"".join(fields)}
<p><button>Change time zone</button></p></form>
<p>Changing back to your zone now before the change takes over calls it off.</p>"""


@router.get("/timezone", response_class=HTMLResponse)
def zone_form(request: Request) -> HTMLResponse:
    return render_page(request, "Change time zone", _zone_form(root(request)))


@router.post("/timezone", response_class=HTMLResponse)
def change_zone(
    request: Request,
    session: DB,
    now: Now,
    name: Annotated[str, Form()] = "",
    password: Annotated[str, Form()] = "",
    timezone: Annotated[str, Form()] = "",
) -> HTMLResponse:
    base = root(request)
    try:
        player = _logged_in(request, session, name, password, now)
        change = TimezoneIn(timezone=timezone)
        with writing(request) as w:
            player = store.change_timezone(w, w.merge(player), change.timezone, now)
            w.commit()
    except (ValidationError, store.TrackerError) as exc:
        problems = _problems(exc, tuple(ZONE_FIELDS), _login_fields(exc, ("timezone",)))
        return _form_page(
            request, "Change time zone", _zone_form(base, problems, name, timezone), exc
        )
    return render_page(request, "Time zone changed", _zone_answer(base, player, now))


def _zone_answer(base: str, player: Player, now: datetime) -> str:
    """What the change means: the zone in force, and from when the new one counts."""
    zone = store.zone_at(player, now)
    who = player_link(base, player.name)
    pending = store.pending_zone(player, now)
    if pending is None:
        return f"<p>Called off: {who}'s turns go on counting in {escape(zone)}.</p>"
    new, at = pending
    start = rules.local_now(at, new)
    return (
        f"<p>{who}'s turns count in {escape(new)} from {start:%Y-%m-%d %H:%M} "
        f"there (their first day in it is {start:%Y-%m-%d}); until then they count in "
        f"{escape(zone)}. Turns taken keep their day.</p>"
    )
