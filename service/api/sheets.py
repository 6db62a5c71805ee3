"""Solitaire Dice sheets (``/sheets``) and Low-High turns (``/low-high/turns``): start one,
post each roll (a photo or typed values, read as turn rolls are), then split it or keep a set.
``/open-games`` lists a player's open games of every kind (these and turns), to resume them on
another device."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from scoring import GAME_NAMES, unknown_game
from service.api.errors import errors
from service.api.reading import posted_roll
from service.api.turns import (
    MOST_HOUSE_RULES,
    SEEN_ROLLS,
    Face,
    check_read_for,
    check_seen,
    int_from_to,
    move_errors,
    player_name,
    refused_roll,
    start_errors,
)
from service.api.uploads import PHOTO_OR_VALUES_BODY
from service.http_errors import StrictBody
from service.sheet_store import SheetStore
from service.sheets import LowHighSession, RollGame, SheetSession
from service.turns import TurnError, TurnSession

__all__ = ["router"]

router = APIRouter(tags=["sheets"])

SOLITAIRE, LOW_HIGH = SheetSession.game, LowHighSession.game


class NewGame(StrictBody):
    player: str = Field(..., min_length=1, max_length=80, description="who plays")
    rules: dict[str, bool | int | str] = Field(
        default_factory=dict,
        max_length=MOST_HOUSE_RULES,
        description="house rules (listed with their defaults in /api/v1/games), e.g. "
        'low-high {"scoring": "pips", "cancel": "descending"}; Solitaire Dice has none',
    )


ComboTotal = int_from_to("a combo total", 2, 12)
"""The sum of a pair of dice: a row of the Solitaire Dice sheet."""


class Split(StrictBody):
    reject: Face | None = Field(
        ..., description="the face rejected, 1 to 6; null: a free ride (S3)"
    )
    combos: list[ComboTotal] = Field(
        ..., min_length=2, max_length=2, description="the two combo sums, each 2 to 12"
    )


class KeepSet(StrictBody):
    face: Face = Field(..., description="the face (1 to 6) of the set of good dice to keep")


class OpenGame(BaseModel):
    id: str
    game: str
    player: str = Field(..., description="the name as the game was started with it")
    started: datetime = Field(..., description="when it was started (UTC)")
    rolls: int = Field(..., description="the rolls made: a move sends it as ?rolls=N")
    awaiting: str = Field(..., description="what it waits for: roll, keep, split, roll-or-...")
    dice_left: int
    score: int = Field(..., description="a turn's points so far, a sheet's or Low-High score")
    url: str = Field(..., description="where to GET it (and to POST its moves under)")


class OpenGames(BaseModel):
    player: str
    games: list[OpenGame] = Field(..., description="newest first")


ROUTES = {SOLITAIRE: "/sheets", LOW_HIGH: "/low-high/turns"}
"""Where each game of this module is played; the others are turns (``/turns``)."""


def _open_game(request: Request, session: RollGame | TurnSession) -> OpenGame:
    route = ROUTES.get(session.game, "/turns")
    root = request.scope.get("root_path", "").rstrip("/")
    score = session.points if isinstance(session, TurnSession) else session.score
    return OpenGame(
        id=session.id,
        game=session.game,
        player=session.player,
        started=datetime.fromtimestamp(session.created, UTC),
        rolls=len(session.rolls),
        awaiting=session.awaiting,
        dice_left=session.dice_left,
        score=score,
        url=f"{root}/api/v1{route}/{session.id}",
    )


def _store(request: Request) -> SheetStore:
    return request.app.state.sheets


def _get(request: Request, game: str, game_id: str, seen_rolls: int | None = None) -> Any:
    try:
        session = _store(request).get(game_id, game)
        check_seen(session, seen_rolls, session.noun)
    except TurnError as exc:
        raise HTTPException(exc.status, str(exc)) from None
    return session


async def _start(request: Request, game: str, body: NewGame) -> dict[str, Any]:
    player = player_name(body.player)
    try:  # saved to the database: on a worker thread, the file may be busy a while
        session = await run_in_threadpool(_store(request).start, game, player, body.rules)
    except TurnError as exc:
        raise HTTPException(exc.status, str(exc)) from None
    return session.to_dict()


async def _move(
    request: Request, session: RollGame, seen_rolls: int | None, play: Callable[[], Any]
) -> dict[str, Any]:
    """Play a move under the session's lock, save it, and say where the game stands (a
    TurnError, the move refused, is raised as it is)."""

    def apply() -> dict[str, Any]:
        with session.lock:
            check_seen(session, seen_rolls, session.noun)
            play()
            _store(request).save(session)
            return session.to_dict()

    return await run_in_threadpool(apply)


async def _answer(
    request: Request, session: RollGame, seen_rolls: int | None, play: Callable[[], Any]
) -> dict[str, Any]:
    try:
        return await _move(request, session, seen_rolls, play)
    except TurnError as exc:
        raise HTTPException(exc.status, str(exc)) from None


async def _roll(
    request: Request, game: str, game_id: str, seen_rolls: int | None
) -> dict[str, Any] | JSONResponse:
    """A roll sent as a photo (read with the dice in play expected) or typed values."""
    session = _get(request, game, game_id, seen_rolls)
    read_for = session.dice_left
    roll = await posted_roll(request, read_for)

    def play() -> None:
        check_read_for(session, read_for, roll, session.noun)
        session.roll(
            roll.values,
            off_table=roll.off_table,
            missing=roll.missing,
            reading=roll.reading,
            source="typed" if roll.typed else "photo",
        )

    try:
        view = await _move(request, session, seen_rolls, play)
    except TurnError as exc:
        return refused_roll(exc, roll.reading)
    view["reading"] = roll.reading
    return view


# -- Solitaire Dice -------------------------------------------------------------------------
@router.post(
    "/sheets",
    status_code=201,
    summary="Start a Solitaire Dice sheet",
    responses=start_errors(400, 415, 422),
)
async def start_sheet(request: Request, body: NewGame) -> dict[str, Any]:
    return await _start(request, SOLITAIRE, body)


@router.get("/sheets/{sheet_id}", summary="A Solitaire Dice sheet", responses=errors(404, 422))
async def get_sheet(request: Request, sheet_id: str) -> dict[str, Any]:
    return _get(request, SOLITAIRE, sheet_id).to_dict()


@router.post(
    "/sheets/{sheet_id}/rolls",
    summary="Post a Solitaire Dice roll (photo or values): its legal splits",
    openapi_extra=PHOTO_OR_VALUES_BODY,
    responses=move_errors(400, 404, 408, 409, 413, 415, 422, 503),
)
async def post_sheet_roll(request: Request, sheet_id: str, rolls: int | None = SEEN_ROLLS) -> Any:
    """Five dice: a photo (multipart ``photo``, optional ``values`` corrections) or JSON values.
    The answer's ``splits`` are the legal ones for this sheet (S3: a free ride too), each with
    ``score_after`` and ``score_change``. Dice off the table or missing are refused."""
    return await _roll(request, SOLITAIRE, sheet_id, rolls)


@router.post(
    "/sheets/{sheet_id}/split",
    summary="Mark a split of the last roll",
    responses=move_errors(400, 404, 409, 415, 422),
)
async def split(
    request: Request, sheet_id: str, body: Split, rolls: int | None = SEEN_ROLLS
) -> dict[str, Any]:
    """409 before a roll or after the sheet's end; 422 for a split the roll does not allow
    (the answer names the legal ones)."""
    session = _get(request, SOLITAIRE, sheet_id, rolls)
    return await _answer(request, session, rolls, lambda: session.split(body.reject, body.combos))


# -- Low-High -------------------------------------------------------------------------------
@router.post(
    "/low-high/turns",
    status_code=201,
    summary="Start a Low-High turn",
    responses=start_errors(400, 415, 422),
)
async def start_low_high(request: Request, body: NewGame) -> dict[str, Any]:
    return await _start(request, LOW_HIGH, body)


@router.get("/low-high/turns/{turn_id}", summary="A Low-High turn", responses=errors(404, 422))
async def get_low_high(request: Request, turn_id: str) -> dict[str, Any]:
    return _get(request, LOW_HIGH, turn_id).to_dict()


@router.post(
    "/low-high/turns/{turn_id}/rolls",
    summary="Post a Low-High roll (photo or values): its bad dice and sets",
    openapi_extra=PHOTO_OR_VALUES_BODY,
    responses=move_errors(400, 404, 408, 409, 413, 415, 422, 503),
)
async def post_low_high_roll(request: Request, turn_id: str, rolls: int | None = SEEN_ROLLS) -> Any:
    """The unlocked dice (13 at first). Dice at or below the highest face kept go to the bad
    track (L1); ``sets`` are what may be kept; a roll that is all bad ends the turn (L3)."""
    return await _roll(request, LOW_HIGH, turn_id, rolls)


@router.post(
    "/low-high/turns/{turn_id}/keep",
    summary="Keep a set of good dice",
    responses=move_errors(400, 404, 409, 415, 422),
)
async def keep_set(
    request: Request, turn_id: str, body: KeepSet, rolls: int | None = SEEN_ROLLS
) -> dict[str, Any]:
    session = _get(request, LOW_HIGH, turn_id, rolls)
    return await _answer(request, session, rolls, lambda: session.keep(body.face))


@router.post(
    "/low-high/turns/{turn_id}/end",
    summary="End the Low-High turn and score it",
    responses=move_errors(404, 409, 422),
)
async def end_low_high(
    request: Request, turn_id: str, rolls: int | None = SEEN_ROLLS
) -> dict[str, Any]:
    session = _get(request, LOW_HIGH, turn_id, rolls)
    return await _answer(request, session, rolls, session.end)


# -- a player's open games ------------------------------------------------------------------
@router.get(
    "/open-games",
    response_model=OpenGames,
    summary="A player's open games (turns, sheets, Low-High turns)",
    responses=errors(422),
)
async def open_games(
    request: Request,
    player: Annotated[
        str,
        Query(
            min_length=1,
            max_length=80,
            description="the player's name as a game was started with it (case and outer "
            "spaces aside)",
        ),
    ],
    game: Annotated[
        str | None,
        Query(
            description="only this game's",
            json_schema_extra={"enum": list(GAME_NAMES)},
        ),
    ] = None,
) -> OpenGames:
    """The games ``player`` started in the last day and has not finished, newest first, each
    with where to GET it: resume one on another device (its moves take ``?rolls=N``, as
    on the device that started it). A finished game is not listed."""
    if game is not None and game not in GAME_NAMES:
        raise HTTPException(422, unknown_game(game))
    name = player_name(player)
    held = [*request.app.state.turns.open_of(player), *_store(request).open_of(player)]
    held.sort(key=lambda s: s.created, reverse=True)
    return OpenGames(
        player=name,
        games=[_open_game(request, s) for s in held if game is None or s.game == game],
    )
