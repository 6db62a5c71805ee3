"""Taking back a mis-tapped keep (:meth:`service.turns.TurnSession.undo`).

A keep is a choice, not a throw: until the next roll is posted, the player may take it back and
the turn awaits a keep of that same roll again, with the same options and advice. A roll is
never taken back (a bust undone would be a cheat), nor a finished turn (banked or bust: final).

The move log stays append-only: the keep stays in :attr:`~service.turns.TurnSession.moves` and
an ``undo`` move follows it, which :meth:`~service.turns.TurnSession.replay` plays again, so a
restart gives the same turn and a stale copy in another process is refused by the database's
conflict check (the file's moves no longer start its own).
"""

from __future__ import annotations

import copy
from typing import Any

from service.turns import TurnError, TurnSession, dice_words, faces

__all__ = ["UNDO", "before_keep", "take_back_keep", "taken_back", "undoable"]

UNDO = "undo"
"""The ``op`` of a keep taken back in a turn's moves."""

ONLY_A_KEEP = "only a keep can be taken back, until the next roll"


def before_keep(turn: Any) -> Any:
    """A copy of the scoring turn (:class:`scoring.FarkleTurn`) as it is, to go back to when
    the keep about to be made is taken back (its rules are shared, not copied)."""
    return copy.deepcopy(turn, {id(turn.game): turn.game})


def _last_keep(session: TurnSession) -> dict[str, Any] | None:
    """The keep of the last roll as the scoring turn holds it (dice, points, forced_reroll)."""
    rolls = session.turn.rolls
    return rolls[-1].get("keep") if rolls else None


def undoable(session: TurnSession) -> dict[str, Any] | None:
    """The keep :func:`take_back_keep` would take back now (``dice``, ``points``,
    ``forced_reroll``), or None when there is none."""
    try:
        _check(session)
    except TurnError:
        return None
    return _last_keep(session)


def _check(session: TurnSession) -> None:
    """Raise TurnError 409 saying why nothing can be taken back now, if so."""
    if session.over:
        raise TurnError(
            f"this turn is over ({session.outcome}): a finished turn is final, nothing can be "
            f"taken back ({ONLY_A_KEEP})"
        )
    last = session.moves[-1]["op"] if session.moves else None
    if last == "roll":
        raise TurnError(
            f"a roll cannot be taken back (the dice showed {faces(session.last_values or [])}): "
            f"{ONLY_A_KEEP}; choose what to keep from it"
        )
    if last == UNDO:
        raise TurnError(
            f"nothing to take back: the keep of {_dice(session.moves[-1])} was taken back "
            f"already, and a roll cannot be taken back ({ONLY_A_KEEP}); choose what to keep"
        )
    if last != "keep" or session.before_keep is None:
        raise TurnError(f"nothing to take back: no keep yet in this turn ({ONLY_A_KEEP})")


def take_back_keep(session: TurnSession) -> dict[str, Any]:
    """Take back the last move of ``session``, a keep with no roll after it: the turn awaits a
    keep of that roll again. Logs an ``undo`` move; returns the keep taken back.

    Raises:
        TurnError: 409 saying what can be taken back and why this cannot (a roll, a finished
            turn, no keep yet, a keep already taken back).
    """
    _check(session)
    kept = dict(_last_keep(session) or {})
    session.turn, session.before_keep = session.before_keep, None
    keep = session.moves[-1]
    session.moves.append(
        {"op": UNDO, "dice": list(keep["dice"]), "forced_reroll": keep.get("forced_reroll")}
    )
    return kept


def taken_back(moves: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The keeps taken back in ``moves``, in order: each one's ``roll`` (1 for the first roll
    of the turn), ``dice`` and ``forced_reroll``."""
    out, rolls = [], 0
    for move in moves:
        if move.get("op") == "roll":
            rolls += 1
        elif move.get("op") == UNDO:
            out.append(
                {
                    "roll": rolls,
                    "dice": list(move["dice"]),
                    "forced_reroll": bool(move.get("forced_reroll")),
                }
            )
    return out


def _dice(move: dict[str, Any]) -> str:
    """A keep's dice in words: "1 1 5 (3 dice)"."""
    dice = list(move.get("dice") or [])
    return f"{faces(dice)} ({dice_words(len(dice))})"
