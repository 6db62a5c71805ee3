"""Turn sessions the service holds while a player plays a turn with the camera.

A :class:`TurnSession` wraps a :class:`scoring.FarkleTurn` and adds what the camera brings: each
roll's reading and photo (the evidence sent to the tracker), dice off the table (an immediate
bust in Morning Roll), and the advisor's ranking of the legal keeps. Sessions live in memory in a
:class:`TurnStore`; a finished Morning Roll turn is handed to a submitter (the tracker client).
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MORNING_ROLL",
    "RollRecord",
    "TurnError",
    "TurnSession",
    "TurnStore",
    "Submitter",
]

MORNING_ROLL = "morning-roll"

Submitter = Callable[["TurnSession"], dict[str, Any]]
"""Sends a finished turn somewhere (the tracker); returns a JSON-able receipt."""


class TurnError(ValueError):
    """A move the turn does not allow now (``status`` is the HTTP status to answer with)."""

    def __init__(self, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.status = status


@dataclass(slots=True)
class RollRecord:
    values: list[int]
    off_table: int = 0
    reading: dict[str, Any] | None = None
    photo: bytes | None = None
    source: str = "typed"

    def to_dict(self) -> dict[str, Any]:
        return {
            "values": self.values,
            "off_table": self.off_table,
            "source": self.source,
            "reading": self.reading,
        }


def _plain(obj: Any) -> Any:
    """Dataclasses / named tuples / objects with to_dict to JSON-able values."""
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    if hasattr(obj, "_asdict"):
        return {k: _plain(v) for k, v in obj._asdict().items()}
    if hasattr(obj, "__dataclass_fields__"):
        return {k: _plain(getattr(obj, k)) for k in obj.__dataclass_fields__}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    return obj


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
        """What the turn waits for: ``roll``, ``keep``, ``keep-or-bank`` or ``nothing``."""
        if self.over:
            return "nothing"
        state = str(getattr(self.turn, "state", ""))
        if "keep" in state or "choos" in state:
            return "keep"
        if self.turn.must_roll:
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
    ) -> None:
        """Record a roll of the dice left. Dice off the table bust a Morning Roll turn at once."""
        self._ensure_open()
        if self.awaiting == "keep":
            raise TurnError("choose a keep from the last roll before rolling again")
        expected = self.dice_left
        seen = len(values) + off_table
        if off_table and self.game == MORNING_ROLL:
            self.rolls.append(RollRecord(values, off_table, reading, photo, _src(photo)))
            self._bust(f"{off_table} {'die' if off_table == 1 else 'dice'} left the table")
            return
        if off_table:
            raise TurnError(
                f"{off_table} {'die' if off_table == 1 else 'dice'} left the table: "
                "roll them again (only Morning Roll busts on it)",
                422,
            )
        if seen != expected:
            raise TurnError(
                f"this roll should have {expected} dice, but {len(values)} were "
                f"{'read' if photo else 'given'} ({values}); retake the photo or type the values",
                422,
            )
        self.turn.roll(list(values))
        self.rolls.append(RollRecord(list(values), 0, reading, photo, _src(photo)))
        if _is_bust(self.turn):
            self._bust("no scoring dice")

    def keep(self, dice: list[int]) -> None:
        self._ensure_open()
        if not self.rolls:
            raise TurnError("roll the dice before keeping any")
        try:
            self.turn.keep(list(dice))
        except TurnError:
            raise
        except Exception as exc:  # scoring.ScoringError and friends
            raise TurnError(f"cannot keep {dice}: {exc}", 422) from None

    def bank(self) -> None:
        self._ensure_open()
        try:
            self.turn.bank()
        except Exception as exc:
            raise TurnError(f"cannot bank now: {exc}", 409) from None
        self.outcome = "banked"

    def _bust(self, reason: str) -> None:
        self.outcome = "bust"
        self.bust_reason = reason
        if hasattr(self.turn, "bust") and callable(self.turn.bust):
            with contextlib.suppress(Exception):
                self.turn.bust()

    @property
    def points(self) -> int:
        if self.outcome == "bust":
            return 0
        return int(self.turn.turn_points)

    # -- what the page shows ------------------------------------------------------------------
    def options(self) -> list[dict[str, Any]]:
        """Legal keeps of the last roll, ranked by the advisor's expected turn value."""
        if self.over or not self.rolls or self.awaiting != "keep":
            return []
        dice = self.last_values or []
        keeps = [_plain(k) for k in self.rules.keeps(list(dice))]
        advice = self.advice()
        best: dict[tuple[int, ...], dict[str, Any]] = {}
        for a in advice:
            key = tuple(sorted(a.get("keep") or []))
            if key not in best or (a.get("expected") or 0) > (best[key].get("expected") or 0):
                best[key] = a
        for k in keeps:
            a = best.get(tuple(sorted(k.get("dice") or [])))
            k["expected"] = None if a is None else a.get("expected")
            k["then"] = None if a is None else a.get("then")
        keeps.sort(key=lambda k: (k["expected"] is None, -(k["expected"] or 0), -k["points"]))
        return keeps

    def advice(self) -> list[dict[str, Any]]:
        if self.advisor is None or self.over or not self.rolls:
            return []
        banked = self._banked_before_roll()
        try:
            options = self.advisor.advise(list(self.last_values or []), banked)
        except Exception:
            return []
        return [_plain(o) for o in options]

    def _banked_before_roll(self) -> int:
        return int(getattr(self.turn, "turn_points", 0))

    def to_dict(self) -> dict[str, Any]:
        turn = _plain(self.turn)
        last = self.rolls[-1] if self.rolls else None
        return {
            "id": self.id,
            "player": self.player,
            "game": self.game,
            "state": "bust"
            if self.outcome == "bust"
            else ("banked" if self.over else turn.get("state")),
            "awaiting": self.awaiting,
            "over": self.over,
            "outcome": self.outcome,
            "bust": self.outcome == "bust",
            "bust_reason": self.bust_reason,
            "forced_reroll": bool(
                turn.get("forced_reroll") or turn.get("must_roll") and not self.over and self.rolls
            ),
            "must_roll": bool(getattr(self.turn, "must_roll", False)),
            "turn_points": self.points,
            "dice_left": self.dice_left,
            "last_roll": None if last is None else last.to_dict(),
            "rolls": len(self.rolls),
            "keeps": self.options(),
            "turn": turn,
            "submission": self.submission,
        }


def _src(photo: bytes | None) -> str:
    return "photo" if photo else "typed"


def _is_bust(turn: Any) -> bool:
    state = str(getattr(turn, "state", "")).lower()
    return "bust" in state or bool(getattr(turn, "busted", False))


class TurnStore:
    """Turn sessions by id, in memory, with a cap (oldest finished turns go first)."""

    def __init__(self, submitter: Submitter | None = None, max_turns: int = 1000) -> None:
        self._turns: dict[str, TurnSession] = {}
        self._lock = threading.Lock()
        self.submitter = submitter
        self.max_turns = max_turns

    def start(self, player: str, game: str) -> TurnSession:
        from scoring import FarkleTurn, get_advisor, get_game

        rules = get_game(game)
        if not callable(getattr(rules, "keeps", None)):
            raise TurnError(
                f"{game} is not played as keep-and-reroll turns; score its rolls with "
                f"POST /api/v1/score?game={game}",
                422,
            )
        try:
            advisor = get_advisor(game)
        except Exception:
            advisor = None
        session = TurnSession(
            player=player, game=game, turn=FarkleTurn(rules), rules=rules, advisor=advisor
        )
        with self._lock:
            if len(self._turns) >= self.max_turns:
                victim = min(self._turns.values(), key=lambda s: (not s.over, s.created))
                del self._turns[victim.id]
            self._turns[session.id] = session
        return session

    def get(self, turn_id: str) -> TurnSession:
        with self._lock:
            session = self._turns.get(turn_id)
        if session is None:
            raise TurnError(
                f"no turn with id {turn_id!r} (turns are kept in memory until restart)", 404
            )
        return session

    def finish(self, session: TurnSession) -> None:
        """Submit a finished Morning Roll turn (bank or bust) once."""
        if not session.over or session.submission is not None or session.game != MORNING_ROLL:
            return
        if self.submitter is None:
            session.submission = {"status": "not-submitted", "detail": "no tracker configured"}
            return
        try:
            session.submission = self.submitter(session)
        except Exception as exc:  # the turn is kept; the player sees why it was not sent
            session.submission = {"status": "failed", "detail": f"{type(exc).__name__}: {exc}"}
