"""Turn endpoints: start a turn, post each roll (photo or values), keep (or take it back), bank."""

from __future__ import annotations

from collections.abc import Callable, Sized
from functools import partial
from typing import Any, Protocol

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import JSONResponse
from pydantic import Field
from starlette.concurrency import run_in_threadpool

from scoring import GAME_NAMES, get_game, unknown_game
from service.api.errors import WHY, errors
from service.api.reading import PostedRoll, posted_roll
from service.api.threads import calling_a_tracker
from service.api.tracker_login import tracker_url
from service.api.uploads import PHOTO_OR_VALUES_BODY, Face, int_from_to
from service.http_errors import StrictBody, error_responses
from service.turn_store import TurnStore
from service.turns import TurnError, TurnSession, dice_words

__all__ = [
    "SEEN_ROLLS",
    "Face",
    "check_read_for",
    "check_seen",
    "int_from_to",
    "move_errors",
    "player_name",
    "refused_roll",
    "router",
    "start_errors",
]

router = APIRouter(prefix="/turns", tags=["turns"])

TURN_GAMES = tuple(g for g in GAME_NAMES if callable(getattr(get_game(g), "keeps", None)))
"""The games played as keep-and-reroll turns (the Farkle family); others are scored by
``POST /api/v1/score``."""

MOST_HOUSE_RULES = 32
"""The most house rules a body may name (a game has at most 3): a million unknown ones took
seconds and were all named back, 9 MB."""


class NewTurn(StrictBody):
    player: str = Field(..., min_length=1, max_length=80, description="who plays the turn")
    game: str = Field(
        "morning-roll",
        description="a Farkle-family game of /api/v1/games",
        json_schema_extra={"enum": list(TURN_GAMES)},
    )
    tracker_token: str | None = Field(
        None, description="the player's tracker token (POST /api/v1/tracker/tokens), to submit"
    )
    rules: dict[str, bool | int | str] = Field(
        default_factory=dict,
        max_length=MOST_HOUSE_RULES,
        description="house rules (the (option) items of READINGS.md; each game's are listed "
        'with their defaults in /api/v1/games), e.g. {"three_pairs_any": true}',
    )
    on_board: bool = Field(
        True,
        description="false: the player has not made the game's entry score yet (farkle-five "
        "500, greed 300): a turn below it banks nothing (its `scored` is 0) and is advised so",
    )


class Keep(StrictBody):
    dice: list[Face] = Field(
        ..., min_length=1, description="the dice values (faces 1 to 6) to set aside"
    )
    forced_reroll: bool | None = Field(
        None, description="for a combo that scores both ways: take it with the forced re-roll"
    )


STORE_FULL = (
    "the service holds as many games as it may and can let go of none of them yet (finished "
    "turns the tracker's outbox has not taken, or, when its database cannot be opened, games "
    "used in the last hour; the detail says which): start the game again later; or the new "
    "game could not be saved (a full disk)"
)
"""What a 503 means to a route that starts a game (:class:`service.session_store.SessionStore`)."""


UNSAVED = (
    "the move could not be saved (a full disk, a database that cannot be written; the detail "
    "says why): it was undone, the game is as it was before it; send it again later"
)
"""What a 503 means to a route that moves a game (:meth:`service.session_store.SessionStore.save`
undid it)."""


UNSAVED_RECEIPT = (
    "the turn is over and saved as it ended, but this receipt could not be saved (a full "
    "disk, a database that cannot be written): the turn shows none until the service hands "
    "it over again, which the tracker counts once"
)
"""Said in a finished turn's ``submission.detail`` (``saved``: false) when the finishing move
was saved and the turn handed over, and then its receipt could not be saved."""


def _with_503(why: str, codes: tuple[int, ...]) -> dict[int | str, dict[str, Any]]:
    """These error statuses, and 503 saying ``why`` (after what it says anyway, when listed)."""
    said = [WHY[503]] if 503 in codes else []
    others = errors(*(code for code in codes if code != 503))
    return {**others, **error_responses({503: "; or ".join([*said, why])}, 503)}


def start_errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses`` of a route that starts a game: these error statuses, and 503."""
    return _with_503(STORE_FULL, codes)


def move_errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses`` of a route that moves a game: these error statuses, and 503 (the move
    could not be saved, besides what 503 says of a roll's photo)."""
    return _with_503(UNSAVED, codes)


def _store(request: Request) -> TurnStore:
    return request.app.state.turns


SEEN_ROLLS = Query(
    None,
    ge=0,
    description="the turn's `rolls` when this move was chosen: a turn that has had more rolls "
    "since (moved on in another tab or on another device) refuses the move with 409, unchanged",
)


SEEN_MOVES = Query(
    None,
    ge=0,
    description="the turn's `moves` when this move was chosen: a turn moved since (a keep taken "
    "back and another made in another tab, which leaves `rolls` as it was) refuses the move with "
    "409, unchanged",
)


def _session(
    request: Request, turn_id: str, seen_rolls: int | None = None, seen_moves: int | None = None
) -> TurnSession:
    """The turn ``turn_id``, refused (409) at once when the view it was chosen on is out of
    date (``rolls``, ``moves``): before a photo is read, so the answer says the turn moved on
    rather than what the photo's fields ask of a turn as it is now."""
    try:
        session = _store(request).get(turn_id)
        check_seen(session, seen_rolls)
        check_moves(session, seen_moves)
    except TurnError as exc:
        raise HTTPException(exc.status, str(exc)) from None
    return session


class Rolled(Protocol):
    """A game played roll by roll: a turn, a Solitaire Dice sheet, a Low-High turn."""

    rolls: Sized


def check_seen(session: Rolled, seen_rolls: int | None, what: str = "turn") -> None:
    """Refuse (409) a move chosen on a copy of the game (``what``: turn, sheet) that has had
    fewer rolls than it has now: a keep from an earlier roll would otherwise be applied to the
    latest one."""
    if seen_rolls is not None and seen_rolls != len(session.rolls):
        raise TurnError(
            f"this {what} moved on elsewhere (another tab or device?): expected a move after "
            f"roll {seen_rolls}, the {what} has had {len(session.rolls)}; nothing was changed, "
            f"GET the {what} again"
        )


def check_moves(session: TurnSession, seen_moves: int | None) -> None:
    """Refuse (409) a move chosen on a copy of the turn that has had another number of moves:
    a keep taken back and another made elsewhere leave its rolls as they were."""
    if seen_moves is not None and seen_moves != len(session.moves):
        raise TurnError(
            f"this turn moved on elsewhere (another tab or device?): expected a move after "
            f"{seen_moves} moves, the turn has had {len(session.moves)}; nothing was changed, "
            "GET the turn again"
        )


def check_read_for(session: Any, read_for: int, roll: PostedRoll, what: str = "turn") -> None:
    """Refuse (409) a roll read from its photo for ``read_for`` dice when the game now has
    another number to roll (a keep made elsewhere while the photo was read): the reader fitted
    the photo to that count and the dice it did not show were counted against it."""
    if not roll.typed and session.dice_left != read_for:
        raise TurnError(
            f"this {what} moved on while the photo was read (another tab or device?): the "
            f"photo was read for {dice_words(read_for)}, the {what} now has "
            f"{dice_words(session.dice_left)} to roll; nothing was changed, GET the {what} "
            "again and send the photo again"
        )


def _view(request: Request, session: TurnSession) -> dict[str, Any]:
    """After a move: save the turn, submit it once finished (and save its receipt), and say
    where it stands. A finishing move is saved before it is submitted: a stale copy of the
    turn (another process moved it) is refused before the tracker hears of it; a receipt that
    cannot be saved after that is said in it (:data:`UNSAVED_RECEIPT`), not as a 503."""
    store = _store(request)
    if not (session.over and session.submission is None):
        store.save(session)  # a failed save undoes the move: 503 says so
        return session.to_dict()
    store.save(session)  # the finishing move, as above
    store.finish(session)
    try:
        store.save(session)
    except TurnError:  # only its receipt is lost (the store logged why): say what is true
        view = session.to_dict()
        receipt = session.submission or {}
        if receipt.get("status") == "not-submitted":  # nothing was handed over: nothing to lose
            return view
        said = [receipt["detail"]] if receipt.get("detail") else []
        view["submission"] = {
            **receipt,
            "saved": False,
            "detail": "; ".join([*said, UNSAVED_RECEIPT]),
        }
        return view
    return session.to_dict()


def player_name(name: str) -> str:
    """``name`` without its outer blanks; 422 for one of only blanks (a game of nobody's: no
    tracker could count it)."""
    if not name.strip():
        raise HTTPException(422, "expected a player's name, got only spaces")
    return name.strip()


@router.post(
    "", status_code=201, summary="Start a turn", responses=start_errors(400, 413, 415, 422)
)
async def start_turn(request: Request, body: NewTurn) -> dict[str, Any]:
    if body.game not in GAME_NAMES:
        raise HTTPException(422, unknown_game(body.game))
    player = player_name(body.player)
    try:  # saved to the database: on a worker thread, the file may be busy a while
        session = await run_in_threadpool(
            partial(
                _store(request).start,
                player,
                body.game,
                tracker_url=tracker_url(request),
                tracker_token=body.tracker_token,
                rules=body.rules,
                on_board=body.on_board,
            )
        )
    except TurnError as exc:
        raise HTTPException(exc.status, str(exc)) from None
    return session.to_dict()


@router.get("/{turn_id}", summary="The state of a turn", responses=errors(404, 422))
async def get_turn(request: Request, turn_id: str) -> dict[str, Any]:
    return _session(request, turn_id).to_dict()


@router.post(
    "/{turn_id}/rolls",
    summary="Post a roll (photo or values)",
    openapi_extra=PHOTO_OR_VALUES_BODY,
    responses=move_errors(400, 404, 408, 409, 413, 415, 422, 503),
)
async def post_roll(
    request: Request,
    turn_id: str,
    rolls: int | None = SEEN_ROLLS,
    moves: int | None = SEEN_MOVES,
) -> dict[str, Any]:
    """A photo of the roll (multipart ``photo``, optional ``values`` corrections) or JSON values.

    Any die off the table busts a Morning Roll turn at once; so do dice missing from the photo
    (``DICECAM_MISSING_DICE=bust``, the default), else (``ask``, and in other games) the roll is
    refused with 409 and ``missing``, ``expected``, ``seen``. Typed values must count every die.
    """
    session = _session(request, turn_id, rolls, moves)
    read_for = session.dice_left
    roll = await posted_roll(request, read_for)
    missing_is_bust = request.app.state.settings.missing_dice == "bust"

    def apply() -> dict[str, Any]:
        with session.lock:
            check_seen(session, rolls)
            check_moves(session, moves)
            check_read_for(session, read_for, roll)
            session.roll(
                roll.values,
                off_table=roll.off_table,
                reading=roll.reading,
                photo=roll.input.photo,
                missing=roll.missing,
                missing_is_bust=missing_is_bust,
                typed=roll.typed,
            )
            return _view(request, session)

    try:
        view = await calling_a_tracker(request, apply)  # a bust submits the turn
    except TurnError as exc:
        return refused_roll(exc, roll.reading)
    view["reading"] = roll.reading
    return view


def refused_roll(exc: TurnError, reading: dict[str, Any] | None) -> JSONResponse:
    """A roll the game refused: its status and reason, and for dice missing from the photo
    how many (``missing``, ``expected``, ``seen``) with the reading, so the page can say so
    and nothing of the game is lost."""
    if not exc.info:
        raise HTTPException(exc.status, str(exc))
    return JSONResponse({"detail": str(exc), **exc.info, "reading": reading}, exc.status)


async def _move(
    request: Request,
    turn_id: str,
    seen: tuple[int | None, int | None],
    play: Callable[[TurnSession], Any],
) -> dict[str, Any]:
    """Make a move that sends no photo (``play`` on the turn: keep, take back, bank) on the
    turn as the client saw it (``seen``: its rolls and moves), save it and say where the turn
    stands."""
    rolls, moves = seen
    session = _session(request, turn_id, rolls, moves)

    def apply() -> dict[str, Any]:
        with session.lock:
            check_seen(session, rolls)
            check_moves(session, moves)
            play(session)
            return _view(request, session)

    try:
        return await calling_a_tracker(request, apply)  # a bank submits the turn
    except TurnError as exc:
        raise HTTPException(exc.status, str(exc)) from None


@router.post(
    "/{turn_id}/keep",
    summary="Set aside scoring dice",
    responses=move_errors(400, 404, 409, 413, 415, 422),
)
async def keep(
    request: Request,
    turn_id: str,
    body: Keep,
    rolls: int | None = SEEN_ROLLS,
    moves: int | None = SEEN_MOVES,
) -> dict[str, Any]:
    def play(session: TurnSession) -> None:
        session.keep(body.dice, body.forced_reroll)

    return await _move(request, turn_id, (rolls, moves), play)


@router.post(
    "/{turn_id}/undo",
    summary="Take back the last keep",
    responses=move_errors(404, 409, 422),
)
async def undo(
    request: Request,
    turn_id: str,
    rolls: int | None = SEEN_ROLLS,
    moves: int | None = SEEN_MOVES,
) -> dict[str, Any]:
    """Take back the last move when it is a keep and no roll came after it: the turn awaits a
    keep of that roll again, with the same options and advice. A roll is never taken back, nor
    a finished turn (409 says so); the keep stays in the turn's moves, followed by an ``undo``,
    and is listed in ``taken_back``."""
    return await _move(request, turn_id, (rolls, moves), TurnSession.undo)


@router.post(
    "/{turn_id}/bank", summary="End the turn and score it", responses=move_errors(404, 409, 422)
)
async def bank(
    request: Request,
    turn_id: str,
    rolls: int | None = SEEN_ROLLS,
    moves: int | None = SEEN_MOVES,
) -> dict[str, Any]:
    return await _move(request, turn_id, (rolls, moves), TurnSession.bank)
