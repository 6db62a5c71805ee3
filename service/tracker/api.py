"""The JSON API, mounted at ``/api/v1``: turns, rounds, standings and histories, and the
dependencies, errors and bodies every tracker route shares (the account routes are in
:mod:`service.tracker.accounts_api`)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime
from typing import Annotated
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Depends, Header, Path, Query, Request, Response
from pydantic import AfterValidator, BeforeValidator
from sqlalchemy.orm import Session

from service.http_errors import error_responses
from service.tracker import rules, store
from service.tracker.models import Player, Turn
from service.tracker.schemas import (
    CorrectionIn,
    CorrectionOut,
    HistoryPage,
    PlayerOut,
    RollOut,
    Standing,
    TurnIn,
    TurnOut,
    parse_day,
)

__all__ = ["router", "turn_out"]

router = APIRouter(prefix="/api/v1")

WHY = {
    400: "the body is not valid JSON",
    401: "no bearer token, or an unknown, revoked or expired one: log in (POST /api/v1/tokens); "
    "or a wrong current password",
    403: "the player may not do this (a turn for another day, a correction by a non-admin, "
    "an administrator raising their own score)",
    404: "no such player, turn or photo",
    409: "already taken: the player's turn of that day, a name (or one that reads like it), "
    "an idempotency key, or the time zone already in force; or a password changed meanwhile",
    413: "the request is larger than the tracker accepts (DICECAM_MAX_UPLOAD_MB)",
    415: "the body is not sent as JSON (its Content-Type is not application/json)",
    422: "a field is missing, malformed or out of range",
    429: "too many wrong passwords lately (for this name from this address or from many, or "
    "for any names from this address), or too many players registered from this address: "
    "wait the Retry-After seconds",
}
"""What each error status of the tracker API means."""


def errors(*codes: int):
    """The ``responses`` of a tracker route for these error statuses."""
    return error_responses(WHY, *codes)


def db(request: Request) -> Iterator[Session]:
    """A read-only session for the request (write handlers use ``writing``)."""
    with request.app.state.db.reading() as session:
        yield session


def writing(request: Request):
    """A write session; the handler commits before it answers."""
    return request.app.state.db.writing()


async def now(request: Request) -> datetime:
    return request.app.state.clock()


async def bearer(authorization: Annotated[str | None, Header()] = None) -> str | None:
    if authorization is None:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise store.Unauthorized(
            f"expected an 'Authorization: Bearer <token>' header, got a {scheme!r} header"
        )
    return token.strip()


DB = Annotated[Session, Depends(db)]
Now = Annotated[datetime, Depends(now)]
Token = Annotated[str | None, Depends(bearer)]
TurnId = Annotated[int, Path(ge=1, le=2**63 - 1, description="the turn's id")]
"""A turn id: a database row id, so no larger than SQLite's 64-bit integers."""
Year = Annotated[int, Path(ge=1900, le=9999, description="the round: a calendar year")]


def viewer_zone(name: str | None) -> str | None:
    """A ``tz=`` query: an IANA zone name, not the server's own ``localtime`` (a ValueError
    naming what was expected), or None."""
    if name is not None:
        rules.zone_to_pick(name)
    return name


ViewerZone = Annotated[
    str | None,
    AfterValidator(viewer_zone),
    Query(
        max_length=64,
        description="the viewer's IANA time zone, e.g. Pacific/Kiritimati: the current round is "
        "the year of the viewer's day there (UTC when left out)",
    ),
]
PAGE_LIMIT, MAX_PAGE_LIMIT = 100, 500
"""Turns on a page of a player's history unless ``limit=`` says otherwise, and the most."""


def root(request: Request) -> str:
    return request.scope.get("root_path", "").rstrip("/")


def player_out(p: Player, now: datetime) -> PlayerOut:
    """``p`` at ``now``: the zone in force, and a change asked for that has not taken over."""
    pending = store.pending_zone(p, now)
    return PlayerOut(
        name=p.name,
        timezone=store.zone_at(p, now),
        is_admin=p.is_admin,
        created_at=store.utc(p.created_at),
        next_timezone=pending[0] if pending else None,
        timezone_from=pending[1] if pending else None,
    )


def turn_out(turn: Turn, base: str, *, replayed: bool = False) -> TurnOut:
    return TurnOut(
        id=turn.id,
        player=turn.player.name,
        game=turn.game,
        day=turn.day,
        round=turn.round,
        score=turn.score,
        comment=turn.comment,
        idempotency_key=turn.idempotency_key,
        submitted_at=store.utc(turn.submitted_at),
        local_time=turn.local_time,
        rolls=[
            RollOut(
                position=r.position,
                values=list(r.values),
                reading=r.reading,
                photo_url=(
                    f"{base}/api/v1/turns/{turn.id}/rolls/{r.position}/photo.jpg"
                    if r.has_photo
                    else None
                ),
            )
            for r in turn.rolls
        ],
        corrections=[
            CorrectionOut(
                admin=c.admin.name,
                old_score=c.old_score,
                new_score=c.new_score,
                reason=c.reason,
                created_at=store.utc(c.created_at),
            )
            for c in turn.corrections
        ],
        replayed=replayed,
    )


@router.post(
    "/turns",
    status_code=201,
    response_model=TurnOut,
    responses=errors(400, 401, 403, 409, 413, 415, 422),
)
def submit(
    turn_in: TurnIn, now: Now, token: Token, request: Request, response: Response
) -> TurnOut:
    """Store a turn (201), or return the stored one for a known idempotency key (200)."""
    with writing(request) as session:
        player = store.authenticate(session, token, now)
        turn, replayed = store.submit_turn(session, player, turn_in, now)
        session.commit()
    if replayed:
        response.status_code = 200
    return turn_out(turn, root(request), replayed=replayed)


@router.get("/turns/{turn_id}", response_model=TurnOut, responses=errors(404, 422))
def get_turn(turn_id: TurnId, session: DB, request: Request) -> TurnOut:
    return turn_out(store.get_turn(session, turn_id), root(request))


@router.patch(
    "/turns/{turn_id}",
    response_model=TurnOut,
    responses=errors(400, 401, 403, 404, 413, 415, 422),
)
def correct(
    turn_id: TurnId, correction: CorrectionIn, now: Now, token: Token, request: Request
) -> TurnOut:
    """An administrator corrects a score; the correction is kept as an audit record."""
    with writing(request) as session:
        admin = store.authenticate(session, token, now)
        turn = store.correct_score(session, admin, turn_id, correction, now)
        session.commit()
    return turn_out(turn, root(request))


@router.get(
    "/turns/{turn_id}/rolls/{position}/photo.jpg",
    response_class=Response,
    responses={
        200: {"content": {"image/jpeg": {}}, "description": "the photo"},
        **errors(404, 422),
    },
)
def photo(turn_id: TurnId, position: Annotated[int, Path(ge=0, le=1000)], session: DB) -> Response:
    turn = store.get_turn(session, turn_id)
    for roll in turn.rolls:
        if roll.position == position and roll.has_photo:
            return Response(roll.photo, media_type="image/jpeg")  # the one photo loaded
    raise store.NotFound(f"turn {turn_id} has no photo for roll {position}")


@router.get("/rounds", responses=errors(422))
def list_rounds(session: DB, now: Now, tz: ViewerZone = None) -> dict:
    """Every round with a turn and the current one: the year of the viewer's day (``tz``)."""
    current = rules.current_round(now, tz or "UTC")
    return {"current": current, "rounds": store.rounds(session, current)}


@router.get("/leaderboard", response_model=dict, responses=errors(422))
def leaderboard(
    session: DB,
    now: Now,
    round: Annotated[int | None, Query(ge=1900, le=9999)] = None,
    tz: ViewerZone = None,
) -> dict:
    """A round's standings: ``round``, else the current one of a viewer in ``tz``."""
    year = round if round is not None else rules.current_round(now, tz or "UTC")
    rows = [Standing(**r) for r in store.leaderboard(session, year)]
    return {"round": year, "standings": [r.model_dump(mode="json") for r in rows]}


@router.get("/players/{name}/turns", response_model=HistoryPage, responses=errors(404, 422))
def history(
    name: str,
    session: DB,
    now: Now,
    request: Request,
    response: Response,
    round: Annotated[
        int | None, Query(ge=1900, le=9999, description="only this round (a calendar year)")
    ] = None,
    limit: Annotated[
        int, Query(ge=1, le=MAX_PAGE_LIMIT, description="the most turns on the page")
    ] = PAGE_LIMIT,
    before: Annotated[
        date | None,
        BeforeValidator(parse_day),
        Query(
            description="only the days before this one, YYYY-MM-DD: the previous page's next_before"
        ),
    ] = None,
) -> HistoryPage:
    """A page of the player's turns, newest first: at most ``limit``, the days before
    ``before``. The next page's URL is ``next`` (and the ``Link: <...>; rel="next"`` header),
    its cursor ``next_before`` (the page's last day: a turn added meanwhile moves no page)."""
    player, turns = store.player_turns(session, name, round, before=before, limit=limit + 1)
    base = root(request)
    page, more = turns[:limit], len(turns) > limit
    next_before = page[-1].day if more else None
    next_url = None
    if next_before is not None:
        query = {"round": round, "limit": limit, "before": next_before.isoformat()}
        kept = urlencode({k: v for k, v in query.items() if v is not None})
        next_url = f"{base}/api/v1/players/{quote(player.name, safe='')}/turns?{kept}"
        response.headers["Link"] = f'<{next_url}>; rel="next"'
    return HistoryPage(
        player=player_out(player, now),
        round=round,
        limit=limit,
        turns=[turn_out(t, base) for t in page],
        next=next_url,
        next_before=next_before,
    )


@router.get("/rollcall")
def rollcall(session: DB, now: Now) -> dict:
    return {
        "players": [
            {
                **r,
                "joined": r["joined"].isoformat(),
                "last_day": r["last_day"].isoformat() if r["last_day"] else None,
            }
            for r in store.roll_call(session, now)
        ]
    }
