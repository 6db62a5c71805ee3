"""``POST /api/v1/read`` (a photo -> the reading) and ``POST /api/v1/score`` (any game)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from starlette.concurrency import run_in_threadpool

from scoring import GAME_NAMES, unknown_game
from service.api.errors import errors
from service.api.uploads import (
    PHOTO_BODY,
    PHOTO_OR_VALUES_BODY,
    RollInput,
    content_type,
    parse_roll_input,
    parse_values,
)

__all__ = ["PostedRoll", "photo_admitted", "posted_roll", "read_roll", "router", "score_values"]

router = APIRouter(tags=["reading"])


def _reader(request: Request):
    return request.app.state.reader


@asynccontextmanager
async def photo_admitted(request: Request) -> AsyncIterator[None]:
    """Hold a place in the reader's queue while a photo is uploaded and read; 503 with
    ``Retry-After`` at once, before the upload is read, when the queue is full; 408 when the
    upload stalls. A request that is not multipart (typed values) needs no place."""
    if content_type(request) != "multipart/form-data":
        yield
        return
    queue = _reader(request).queue
    async with queue.ticket():
        request._receive = queue.idle_limited(request.receive)  # the body is read through it
        yield


@dataclass
class PostedRoll:
    """A roll posted to a game in play: its values, dice off the table, the reading of its
    photo (None for typed values) and, read from a photo, the dice it did not show."""

    input: RollInput
    values: list[int]
    off_table: int
    reading: dict[str, Any] | None
    missing: int

    @property
    def typed(self) -> bool:
        return self.input.values is not None


async def posted_roll(request: Request, dice_left: int) -> PostedRoll:
    """The roll a move posts, a photo read with the ``dice_left`` in play expected (a game
    that is over has none: read without a count, the move is refused) or typed values."""
    async with photo_admitted(request):
        roll = await parse_roll_input(request)
        values, off_table, reading = await read_roll(request, roll, expected_dice=dice_left or None)
    missing = 0
    if roll.values is None:  # read from the photo: dice it did not show are missing
        missing = max(0, dice_left - len(values) - off_table)
    return PostedRoll(roll, values, off_table, reading, missing)


async def read_roll(
    request: Request, roll: RollInput, expected_dice: int | None = None
) -> tuple[list[int], int, dict[str, Any] | None]:
    """Values, dice off the table and the reading JSON of a roll sent as photo or values.

    Values sent beside a photo are corrections: they replace what the reader saw. A game in
    play gives its ``expected_dice``; a photo's ``expected_dice`` field must then agree (422),
    or the reader would fit the photo to another count than the dice missing are counted by.
    """
    reading: dict[str, Any] | None = None
    if roll.photo is not None:
        expected = roll.extra.get("expected_dice", expected_dice)
        if expected_dice is not None and expected != expected_dice:
            raise HTTPException(
                422,
                f"'expected_dice': expected the {expected_dice} dice this game has to roll "
                f"(or no expected_dice), got {expected}",
            )
        result = await _reader(request).read_queued(roll.photo, expected)
        reading = result.to_dict()
        if roll.filename:
            reading["image"] = roll.filename
    if roll.values is not None:
        return roll.values, roll.off_table, reading
    assert reading is not None
    if reading.get("cocked"):
        n = reading["cocked"]
        raise HTTPException(
            422,
            f"{n} {'die leans' if n == 1 else 'dice lean'} (cocked) with no clear top face: "
            "re-roll it, or correct the values by hand",
        )
    return list(reading["values"]), int(reading.get("off_table") or 0), reading


@router.post(
    "/read",
    summary="Read the dice in a photo",
    openapi_extra=PHOTO_BODY,
    response_description="the reading JSON of `dicecam read --json`",
    responses=errors(400, 408, 413, 415, 422, 503),
)
async def read_photo(request: Request) -> dict[str, Any]:
    """A photo (multipart field ``photo``) -> every die with its value, box and table status."""
    async with photo_admitted(request):
        roll = await parse_roll_input(request, photo_required=True)
        result = await _reader(request).read_queued(roll.photo, roll.extra.get("expected_dice"))
    reading = result.to_dict()
    if roll.filename:
        reading["image"] = roll.filename
    return reading


def _games() -> list[str]:
    return list(GAME_NAMES)


def _house_rules(game: str, pairs: list[str]) -> dict[str, Any]:
    """The ``rule`` query's house rules, checked against ``game`` (422 names the valid ones)."""
    from scoring import get_game, parse_house_rules

    try:
        rules = parse_house_rules(pairs)
        get_game(game, **rules)
    except (TypeError, ValueError) as exc:
        raise HTTPException(422, f"rule: {exc}") from None
    return rules


def _plain(obj: Any) -> Any:
    from service.turn_advice import plain

    return plain(obj)


def score_values(
    game: str,
    values: list[int],
    off_table: int = 0,
    banked: int = 0,
    highest_kept: int = 0,
    house_rules: dict[str, Any] | None = None,
    *,
    on_board: bool = True,
    rejects: list[int] | None = None,
) -> dict[str, Any]:
    """Score one roll of ``game`` under its ``house_rules``: legal keeps with advice (Farkle
    family; ``on_board=False``: a player below the entry score) or the game's options
    (Solitaire Dice: for a sheet with ``rejects`` marked so far)."""
    from scoring import SolitaireSheet, get_advisor, get_game

    house_rules = house_rules or {}
    rules = get_game(game, **house_rules)
    if len(values) + off_table > rules.n_dice:  # the rules count only the dice on the table
        raise ValueError(
            f"expected at most {rules.n_dice} dice, got {len(values)} on the table and "
            f"{off_table} off it"
        )
    out: dict[str, Any] = {"game": game, "values": values, "off_table": off_table}
    if callable(getattr(rules, "keeps", None)):
        if banked % 50:
            raise ValueError(f"banked must be a multiple of 50 (points kept), got {banked}")
        keeps = [_plain(k) for k in rules.keeps(list(values))]
        if game == "morning-roll" and off_table > 0:
            keeps = []  # a die off the table busts the roll (M8): nothing to keep, as in a turn
        bust = not keeps
        advice: list[dict[str, Any]] = []
        if not bust:
            advisor = get_advisor(game, on_board=on_board, **house_rules)
            advice = [_plain(o) for o in advisor.advise(list(values), banked)]
        from service.turns import rank_keeps

        out.update(bust=bust, keeps=rank_keeps(keeps, advice), advice=advice)
        if off_table and game == "morning-roll":
            out["bust_reason"] = "a die left the table"
        return out
    options = getattr(rules, "options", None)
    if not callable(options):
        raise HTTPException(500, f"the rules of {game} expose neither keeps() nor options()")
    extra: dict[str, Any] = {"highest_kept": highest_kept} if game == "low-high" else {}
    if game == "solitaire-dice":
        sheet = SolitaireSheet()
        for face in rejects or []:
            sheet.add_reject(face)
        extra["sheet"] = sheet
    result = _plain(options(list(values), **extra))
    out.update(bust=not result, options=result)
    if callable(getattr(rules, "score", None)):
        out["score"] = _plain(rules.score(list(values), **extra))
    return out


@router.post(
    "/score",
    summary="Score a roll of any game",
    openapi_extra=PHOTO_OR_VALUES_BODY,
    responses=errors(400, 408, 413, 415, 422, 503),
)
async def score(
    request: Request,
    game: str = Query(
        ...,
        description="one of the games of /api/v1/games",
        json_schema_extra={"enum": list(GAME_NAMES)},
    ),
    banked: int = Query(0, ge=0, description="points already set aside this turn (Farkle family)"),
    highest_kept: int = Query(0, ge=0, le=6, description="Low-High: highest face kept so far"),
    on_board: bool = Query(
        True,
        description="Farkle family: false for a player below the entry score (F7, G3), whose "
        "turn below it banks nothing (`dicecam advise --not-on-board`)",
    ),
    rejects: str = Query(
        "", description="Solitaire Dice: the faces rejected so far, e.g. 1,1,5,6 (none: empty)"
    ),
    rule: Annotated[
        list[str] | None,
        Query(
            description="a house rule as KEY=VALUE, repeatable (each game's are listed with "
            "their defaults in /api/v1/games), e.g. three_pairs_any=true"
        ),
    ] = None,
) -> dict[str, Any]:
    """A photo or typed values -> the legal keeps and the advisor's expected values."""
    if game not in GAME_NAMES:
        raise HTTPException(422, unknown_game(game))
    house_rules = _house_rules(game, rule or [])
    rejected = parse_values(rejects, what="rejects") if rejects.strip() else []
    async with photo_admitted(request):
        roll = await parse_roll_input(request)
        values, off_table, reading = await read_roll(request, roll)
    try:
        result = await run_in_threadpool(
            score_values,
            game,
            values,
            off_table,
            banked,
            highest_kept,
            house_rules,
            on_board=on_board,
            rejects=rejected,
        )
    except HTTPException:
        raise
    except ValueError as exc:  # ScoringError: wrong number of dice for this game, ...
        reason = str(exc).removeprefix(f"{game}: ")  # the rules' errors may name the game
        raise HTTPException(422, f"cannot score {values} in {game}: {reason}") from None
    result["reading"] = reading
    return result


@router.get("/games", summary="The games dicecam scores, with their house rules")
async def games() -> dict[str, Any]:
    """``games``: the names; ``game_titles``: each game by its rule text's name, for a player
    (``"Five-dice Farkle"``); ``house_rules``: each game's house rules with their defaults
    (``rules`` of a new turn, ``rule`` of /api/v1/score); ``house_rule_choices``: the values
    of those written as text, and ``house_rule_choice_labels`` each such value in a player's
    words; ``house_rule_labels`` and ``house_rule_hints``: each rule in a player's words (a
    short label, one line on what it changes)."""
    from scoring import HOUSE_RULE_CHOICES, HOUSE_RULES
    from scoring.games import (
        GAME_TITLES,
        HOUSE_RULE_CHOICE_LABELS,
        HOUSE_RULE_HINTS,
        HOUSE_RULE_LABELS,
    )

    return {
        "games": _games(),
        "game_titles": {g: GAME_TITLES[g] for g in GAME_NAMES},
        "house_rules": {g: dict(HOUSE_RULES[g]) for g in GAME_NAMES},
        "house_rule_choices": {
            g: {k: list(v) for k, v in HOUSE_RULE_CHOICES.get(g, {}).items()} for g in GAME_NAMES
        },
        "house_rule_choice_labels": {
            g: {k: dict(v) for k, v in HOUSE_RULE_CHOICE_LABELS.get(g, {}).items()}
            for g in GAME_NAMES
        },
        "house_rule_labels": {g: dict(HOUSE_RULE_LABELS.get(g, {})) for g in GAME_NAMES},
        "house_rule_hints": {g: dict(HOUSE_RULE_HINTS.get(g, {})) for g in GAME_NAMES},
    }
