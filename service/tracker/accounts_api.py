"""The account routes of the JSON API, mounted at ``/api/v1``: register, log in and out,
the player's own record, time zone and password (:mod:`service.tracker.api` holds the turns,
rounds and standings, and the dependencies both share)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from service.tracker import store
from service.tracker.api import DB, Now, Token, errors, player_out, writing
from service.tracker.schemas import (
    Credentials,
    PasswordChange,
    PasswordChanged,
    PlayerOut,
    Registration,
    TimezoneIn,
    TokenOut,
)
from service.tracker.security import hash_password
from service.tracker.throttle import client_address

__all__ = ["router"]

router = APIRouter(prefix="/api/v1")


@router.post(
    "/players",
    status_code=201,
    response_model=PlayerOut,
    responses=errors(400, 409, 413, 415, 422, 429),
)
def register(reg: Registration, request: Request, now: Now) -> PlayerOut:
    """Anyone can register: name, password, IANA time zone (a few players an hour from one
    address: ``DICECAM_TRACKER_REGISTRATIONS_PER_ADDRESS``)."""
    with request.app.state.registrations.holding(client_address(request), now):
        with request.app.state.db.reading() as session:  # a refused name costs no hash
            store.check_name_free(session, reg.name)
        hashed = hash_password(reg.password)  # slow on purpose: outside the write lock
        with writing(request) as session:
            player = store.register(session, reg, now, password_hash=hashed)
            session.commit()
    return player_out(player, now)


@router.post(
    "/tokens",
    status_code=201,
    response_model=TokenOut,
    responses=errors(400, 401, 413, 415, 422, 429),
)
def login(creds: Credentials, session: DB, request: Request, now: Now) -> TokenOut:
    guard = request.app.state.login_guard
    player = guard.check_password(session, creds.name, creds.password, now, client_address(request))
    days = request.app.state.token_days
    with writing(request) as w:
        token = store.issue_token(w, player, now, days=days)
        w.commit()
    return TokenOut(
        token=token,
        expires_at=store.utc(store.token_expiry(now, days)),
        player=player_out(player, now),
    )


@router.delete("/tokens/current", status_code=204, responses=errors(401))
def logout(token: Token, request: Request) -> Response:
    """Log out: revoke the bearer token of this request (an expired one too)."""
    with writing(request) as session:
        store.revoke_token(session, token)
        session.commit()
    return Response(status_code=204)


@router.delete("/tokens", status_code=204, responses=errors(401))
def logout_everywhere(token: Token, now: Now, request: Request) -> Response:
    """Log out everywhere: revoke every token of the bearer token's player, this one too."""
    with writing(request) as session:
        player = store.authenticate(session, token, now)
        store.revoke_tokens(session, player)
        session.commit()
    return Response(status_code=204)


@router.get("/me", response_model=PlayerOut, responses=errors(401))
def me(session: DB, token: Token, now: Now) -> PlayerOut:
    return player_out(store.authenticate(session, token, now), now)


@router.put(
    "/me/timezone", response_model=PlayerOut, responses=errors(400, 401, 409, 413, 415, 422)
)
def change_timezone(change: TimezoneIn, now: Now, token: Token, request: Request) -> PlayerOut:
    """The token's player plays in ``timezone`` from their next day: from the first midnight
    there once the day under way in their zone is over (``timezone_from``); turns until then
    count in the zone in force, turns taken keep their day. Before it takes over, the zone in
    force calls the change off; 409 when it is in force with nothing to call off."""
    with writing(request) as session:
        player = store.authenticate(session, token, now)
        store.change_timezone(session, player, change.timezone, now)
        session.commit()
    return player_out(player, now)


@router.put(
    "/me/password",
    response_model=PasswordChanged,
    responses=errors(400, 401, 409, 413, 415, 422, 429),
)
def change_password(
    change: PasswordChange, session: DB, token: Token, now: Now, request: Request
) -> PasswordChanged:
    """The token's player's new password (the rules of a registration's). The current one is
    checked as a login is: a wrong one is 401 and counts as a failed login (429 once the name
    from this address, the name from all addresses or this address has too many: see
    :mod:`service.tracker.throttle`). Every other token of the
    player is revoked (``tokens_revoked``); the one used stays valid."""
    player = store.authenticate(session, token, now)
    guard = request.app.state.login_guard
    try:
        guard.check_password(session, player.name, change.password, now, client_address(request))
    except store.Unauthorized:
        raise store.Unauthorized(
            f"expected {player.name}'s current password in 'password', got a wrong one: the "
            "password is unchanged"
        ) from None
    hashed = hash_password(change.new_password)  # slow on purpose: outside the write lock
    with writing(request) as w:
        current = store.authenticate(w, token, now)  # revoked meanwhile: 401
        revoked = store.change_password(
            w, current, hashed, checked=player.password_hash, keep=token
        )
        w.commit()
    return PasswordChanged(player=player_out(current, now), tokens_revoked=revoked)
