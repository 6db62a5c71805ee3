"""The site's change-password form (``/password``): name, current password, the new one twice.

A plain HTML form as those of :mod:`service.tracker.forms`, with their fields, problems, login
guard and log lines: the current password is checked as a login is (a wrong one counts), the
new one follows a registration's rules, and every token of the player is revoked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, ClassVar

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse
from pydantic import ValidationError, ValidationInfo, field_validator

from service.tracker import store
from service.tracker.api import DB, Now, root, writing
from service.tracker.forms import (
    NAME_ATTRS,
    Problem,
    _field,
    _form_page,
    _logged_in,
    _login_fields,
    _problems,
    _summary,
)
from service.tracker.pages import player_link, render_page
from service.tracker.schemas import PasswordChange
from service.tracker.security import hash_password

__all__ = ["router"]

router = APIRouter(include_in_schema=False)  # HTML for browsers, not the JSON API

PASSWORD_FIELDS = {
    "name": "Player",
    "password": "Current password",
    "new_password": "New password",
    "new_password_again": "New password again",
}
NEW = ' type="password" minlength="8" maxlength="256" autocomplete="new-password"'


class PasswordForm(PasswordChange):
    """The form's passwords: a change's, the new one typed twice (a NUL character in it taken
    as the API takes it)."""

    hashed: ClassVar[frozenset[str]] = PasswordChange.hashed | {"new_password_again"}
    new_password_again: str

    @field_validator("new_password_again")
    @classmethod
    def _twice(cls, v: str, info: ValidationInfo) -> str:
        if "new_password" in info.data and v != info.data["new_password"]:
            raise ValueError("expected the new password twice, got two different ones")
        return v


def _password_form(base: str, problems: Sequence[Problem] = (), name: str = "") -> str:
    """The change-password form; sent back with ``problems``, it keeps the name, never a
    password."""
    f = PASSWORD_FIELDS
    fields = [
        _field("name", f, problems, NAME_ATTRS, value=name),
        _field("password", f, problems, ' type="password" autocomplete="current-password"'),
        _field("new_password", f, problems, NEW, hint="At least 8 characters."),
        _field("new_password_again", f, problems, NEW),
    ]
    return f"""{_summary(problems, f)}
<form method="post" action="{base}/password">
{"".join(fields)}
<p><button>Change password</button></p></form>
<p>Every device logged in as you is logged out: log in there again with the new password.
Forgot your password? An administrator of this tracker can set a new one.</p>"""


@router.get("/password", response_class=HTMLResponse)
def password_form(request: Request) -> HTMLResponse:
    return render_page(request, "Change password", _password_form(root(request)))


@router.post("/password", response_class=HTMLResponse)
def change_password(
    request: Request,
    session: DB,
    now: Now,
    name: Annotated[str, Form()] = "",
    password: Annotated[str, Form()] = "",
    new_password: Annotated[str, Form()] = "",
    new_password_again: Annotated[str, Form()] = "",
) -> HTMLResponse:
    base = root(request)
    try:
        change = PasswordForm(
            password=password, new_password=new_password, new_password_again=new_password_again
        )
        player = _logged_in(request, session, name, change.password, now)
        hashed = hash_password(change.new_password)  # slow on purpose: outside the write lock
        with writing(request) as w:
            current = store.get_player(w, player.name)
            revoked = store.change_password(w, current, hashed, checked=player.password_hash)
            w.commit()
    except (ValidationError, store.TrackerError) as exc:
        problems = _problems(exc, tuple(PASSWORD_FIELDS), _login_fields(exc, ("password",)))
        form = _password_form(base, problems, name)
        return _form_page(request, "Change password", form, exc)
    devices = f"{revoked} {'session' if revoked == 1 else 'sessions'}"
    body = (
        f"<p>Password changed: {player_link(base, player.name)} logs in with the new one from "
        f"now on. Logged out everywhere ({devices} ended): log in again on each device.</p>"
    )
    return render_page(request, "Password changed", body)
