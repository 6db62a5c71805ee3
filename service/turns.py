"""Turn sessions the service holds while a player plays a turn with the camera.

A :class:`TurnSession` wraps a :class:`scoring.FarkleTurn` and adds what the camera brings: each
roll's reading and photo (the evidence sent to the tracker), dice off the table (an immediate
bust in Morning Roll), and the advisor's ranking of the legal keeps. Sessions live in a
:class:`service.turn_store.TurnStore` (in memory, and saved to SQLite after every move:
:mod:`service.turn_db`; a roll's photo is held in memory only until its move is saved, then
read back from its file when the turn is sent); a finished Morning Roll turn is handed to a
submitter (the tracker).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from service.turn_advice import plain, rank_keeps

__all__ = [
    "MORNING_ROLL",
    "RollRecord",
    "Submitter",
    "TurnError",
    "TurnSession",
    "dice_words",
    "missing_dice",
    "rank_keeps",
]

MORNING_ROLL = "morning-roll"

log = logging.getLogger("dicecam.service")

Submitter = Callable[["TurnSession"], dict[str, Any]]
"""Sends a finished turn somewhere (the tracker); returns a JSON-able receipt."""


class TurnError(ValueError):
    """A move the turn does not allow now (``status`` is the HTTP status to answer with;
    ``info`` holds extra JSON fields for the answer, such as ``missing``)."""

    def __init__(self, message: str, status: int = 409, **info: Any) -> None:
        super().__init__(message)
        self.status = status
        self.info = info


def faces(values: Sequence[int]) -> str:
    """Dice as a player writes them down.

    Example:
        >>> faces([2, 2, 3, 4, 6])
        '2 2 3 4 6'
    """
    return " ".join(map(str, values))


def dice_words(n: int) -> str:
    """``n`` dice in words: "1 die", "3 dice"."""
    return f"{n} {'die' if n == 1 else 'dice'}"


def missing_dice(missing: int, seen: int, expected: int) -> TurnError:
    """The 409 of a photo that shows ``seen`` of the ``expected`` dice rolled (``missing`` not
    found), carrying the counts for the page."""
    return TurnError(
        f"{dice_words(missing)} missing: the photo shows {seen} of the {expected} dice rolled; "
        "retake the photo with every die in view, or type the values",
        409,
        missing=missing,
        expected=expected,
        seen=seen,
    )


@dataclass(slots=True)
class RollRecord:
    values: list[int]
    off_table: int = 0
    reading: dict[str, Any] | None = None
    held: bytes | None = field(default=None, repr=False)
    """The roll's photo until the turn is saved: then it is on disk only (:attr:`photo_file`),
    so that open turns hold no photo in memory (an upload may be 20 MB)."""
    source: str = "typed"
    missing: int = 0
    """Dice rolled but not found in the photo."""
    photo_file: Path | None = None
    """Where the saved photo is (:mod:`service.turn_db`), read back when the turn is sent."""

    @property
    def has_photo(self) -> bool:
        return self.held is not None or self.photo_file is not None

    @property
    def photo(self) -> bytes | None:
        """The photo's bytes (read from :attr:`photo_file` once saved); None without one, or
        when its file is gone."""
        if self.held is not None or self.photo_file is None:
            return self.held
        try:
            return self.photo_file.read_bytes()
        except OSError as exc:
            log.warning(
                "turn photo %s is gone (%s): the turn goes on without it", self.photo_file, exc
            )
            return None

    @photo.setter
    def photo(self, photo: bytes | None) -> None:
        """Hold ``photo`` until the turn is saved; None lets go of it (its file is deleted at
        the next save)."""
        self.held, self.photo_file = photo, None

    def to_dict(self) -> dict[str, Any]:
        return {
            "values": self.values,
            "off_table": self.off_table,
            "missing": self.missing,
            "source": self.source,
            "reading": self.reading,
        }


@dataclass
class TurnSession:
    """One player's turn in one Farkle-family game (Morning Roll, Five-dice Farkle, Greed)."""

    player: str
    game: str
    turn: Any
    rules: Any
    advisor: Any = None
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    created: float = field(default_factory=time.time)
    rolls: list[RollRecord] = field(default_factory=list)
    outcome: str | None = None  # "banked" or "bust" once the turn is over
    bust_reason: str | None = None
    submission: dict[str, Any] | None = None
    tracker_url: str | None = None
    tracker_token: str | None = field(default=None, repr=False)
    on_board: bool = True
    """False: the player has not made the entry score yet (F7, G3): below it the turn banks 0."""
    moves: list[dict[str, Any]] = field(default_factory=list)
    """Every move as played (``roll``, ``keep``, ``bank``, ``undo``: a keep taken back):
    replayed to restore the turn."""
    before_keep: Any = field(default=None, repr=False, compare=False)
    """The scoring turn as it was before the last keep (:mod:`service.turn_undo`)."""
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # -- what the turn says --------------------------------------------------------------
    @property
    def over(self) -> bool:
        return self.outcome is not None

    @property
    def dice_left(self) -> int:
        return int(self.turn.dice_left)

    @property
    def last_values(self) -> list[int] | None:
        return self.rolls[-1].values if self.rolls else None

    @property
    def awaiting(self) -> str:
        """What the turn waits for: ``roll``, ``roll-or-bank``, ``keep`` or ``nothing``."""
        if self.over:
            return "nothing"
        if self.turn.state == "awaiting_keep":
            return "keep"
        if self.turn.must_roll or not self.rolls:
            return "roll"
        return "roll-or-bank"

    # -- moves ------------------------------------------------------------------------------
    def _ensure_open(self) -> None:
        if self.over:
            raise TurnError(f"this turn is over ({self.outcome}); start a new turn")

    def roll(
        self,
        values: list[int],
        *,
        off_table: int = 0,
        reading: dict[str, Any] | None = None,
        photo: bytes | None = None,
        missing: int = 0,
        missing_is_bust: bool = True,
        typed: bool = False,
    ) -> None:
        """Record a roll of the dice left. Dice off the table bust a Morning Roll turn at once.
        ``typed``: the values were typed (corrections sent with the ``photo`` too).

        ``missing``: dice the photo did not show (only for values read from a photo; typed
        values must count every die). They bust a Morning Roll turn when ``missing_is_bust``,
        else the roll is refused (409, with ``missing``) so the player retakes or types it.
        """
        self._ensure_open()
        if self.awaiting == "keep":
            raise TurnError("choose what to keep from the last roll before rolling again")
        if off_table and self.game != MORNING_ROLL:
            raise TurnError(
                f"{dice_words(off_table)} left the table: roll again (only Morning Roll busts on it)",
                422,
            )
        expected = self.dice_left
        seen = len(values) + off_table
        if missing < 0 or (missing and seen + missing != expected):
            raise ValueError(f"expected 0 <= missing <= {expected - seen}, got {missing}")
        busts = self.game == MORNING_ROLL and (off_table > 0 or missing_is_bust)
        if missing and not busts:
            raise missing_dice(missing, seen, expected)
        if seen + missing != expected:
            shown = f"{len(values)} on the table" + (
                f" and {off_table} off it" if off_table else ""
            )
            raise TurnError(
                f"this roll should have {expected} dice, but "
                f"{'the photo shows' if photo and not typed else 'the values typed give'} "
                f"{shown} ({faces(values) or 'none'}); retake the photo or type the values",
                422,
            )
        try:
            self.turn.roll(list(values), off_table=off_table + missing)
        except ValueError as exc:  # ScoringError
            raise TurnError(f"cannot roll {faces(values)}: {exc}", 422) from None
        if missing:  # the scoring turn counted them as off the table: say what they were
            self.turn.rolls[-1].update(off_table=off_table, missing=missing)
        self.moves.append(
            {"op": "roll", "values": list(values), "off_table": off_table, "missing": missing}
        )
        self.before_keep = None  # a keep before this roll is played for good
        record = RollRecord(list(values), off_table, reading, photo, _src(photo), missing)
        self.rolls.append(record)
        if self.turn.state == "bust":
            self.outcome = "bust"
            if off_table:
                self.bust_reason = f"{dice_words(off_table)} left the table" + (
                    f" ({missing} more missing)" if missing else ""
                )
            elif missing:
                self.bust_reason = (
                    f"{dice_words(missing)} missing: the photo shows {seen} of the {expected} "
                    "dice rolled"
                )
            else:
                self.bust_reason = f"no scoring dice in {faces(sorted(values))}"
        elif self.turn.state == "banked":
            self.outcome = "banked"

    def keep(self, dice: list[int], forced_reroll: bool | None = None) -> None:
        from service.turn_undo import before_keep

        self._ensure_open()
        if self.awaiting != "keep":
            raise TurnError("nothing to keep now: roll the dice first")
        before = before_keep(self.turn)
        try:
            chosen = self.turn.keep(list(dice), forced_reroll=forced_reroll)
        except ValueError as exc:  # ScoringError
            raise TurnError(str(exc), 422) from None
        self.before_keep = before
        self.moves.append(
            {"op": "keep", "dice": list(chosen.dice), "forced_reroll": chosen.forced_reroll}
        )
        if self.turn.state == "banked":  # five 1s win a five-dice Farkle game (F4)
            self.outcome = "banked"

    def bank(self) -> None:
        self._ensure_open()
        try:
            self.turn.bank()
        except ValueError as exc:  # ScoringError: forced re-roll, total ending in 50, ...
            raise TurnError(str(exc), 409) from None
        self.moves.append({"op": "bank"})
        self.outcome = "banked"

    def undo(self) -> dict[str, Any]:
        """Take back the last keep while no roll came after it (:mod:`service.turn_undo`);
        returns the keep taken back. TurnError 409 says why not otherwise."""
        from service.turn_undo import take_back_keep

        return take_back_keep(self)

    def replay(self, moves: list[dict[str, Any]]) -> None:
        """Play ``moves`` (as recorded in :attr:`moves`) on this fresh turn.

        Raises:
            TurnError, ValueError: a move the rules refuse (the moves are not of this game).
        """
        for move in moves:
            op = move.get("op")
            if op == "roll":
                self.roll(
                    list(move["values"]),
                    off_table=int(move.get("off_table", 0)),
                    missing=int(move.get("missing", 0)),
                )
            elif op == "keep":
                self.keep(list(move["dice"]), move.get("forced_reroll"))
            elif op == "bank":
                self.bank()
            elif op == "undo":
                self.undo()
            else:
                raise ValueError(f"expected a move 'roll', 'keep', 'bank' or 'undo', got {op!r}")

    @property
    def points(self) -> int:
        return 0 if self.outcome == "bust" else int(self.turn.turn_points)

    # -- what the page shows ------------------------------------------------------------------
    def options(self) -> list[dict[str, Any]]:
        """Legal keeps of the last roll, ranked by the advisor's expected turn value."""
        if self.awaiting != "keep":
            return []
        keeps = [k.to_dict() for k in self.turn.keeps]
        return rank_keeps(keeps, self.advice())

    def advice(self) -> list[dict[str, Any]]:
        """The advisor's options for the last roll (empty without an advisor)."""
        if self.advisor is None or self.awaiting != "keep":
            return []
        try:
            options = self.advisor.advise(list(self.last_values or []), int(self.turn.turn_points))
        except Exception:  # advice is a help, never a reason to fail a move
            return []
        return [plain(o) for o in options]

    def to_dict(self) -> dict[str, Any]:
        from service.turn_undo import taken_back, undoable

        last = self.rolls[-1] if self.rolls else None
        forced = bool(
            self.turn.must_roll
            and self.turn.rolls
            and (self.turn.rolls[-1].get("keep") or {}).get("forced_reroll")
        )
        return {
            "id": self.id,
            "player": self.player,
            "game": self.game,
            "state": self.turn.state,
            "awaiting": self.awaiting,
            "over": self.over,
            "outcome": self.outcome,
            "bust": self.outcome == "bust",
            "bust_reason": self.bust_reason,
            "forced_reroll": forced,
            "must_roll": bool(self.turn.must_roll),
            "hot_dice": bool(self.turn.hot_dice),
            "turn_points": self.points,
            "dice_left": self.dice_left,
            "last_roll": None if last is None else last.to_dict(),
            "rolls": len(self.rolls),
            "moves": len(self.moves),
            "keeps": self.options(),
            "history": self.turn.to_dict()["rolls"],
            "submission": self.submission,
            "rules": self.house_rules,
            "on_board": self.on_board,
            "scored": self.scored,
            "take_back": undoable(self),
            "taken_back": taken_back(self.moves),
        }

    @property
    def scored(self) -> int | None:
        """What the finished turn adds to the player's score (None while it is open): its
        points, or 0 for a bust or, before the player is on the board, below the entry score."""
        if not self.over:
            return None
        if self.outcome != "banked":
            return 0
        entry = 0 if self.on_board else self.rules.entry_threshold
        return self.points if self.points >= entry else 0

    @property
    def house_rules(self) -> dict[str, Any]:
        """The house rules that differ from the game as READINGS.md reads it."""
        from scoring import HOUSE_RULES

        default = HOUSE_RULES.get(self.game, {})
        played = getattr(self.rules, "house_rules", {})
        return {k: v for k, v in played.items() if default.get(k) != v}


def _src(photo: bytes | None) -> str:
    return "photo" if photo else "typed"
