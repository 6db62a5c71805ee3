"""The games the camera plays across rolls besides Farkle turns: a Solitaire Dice score sheet
(:class:`SheetSession`, a :class:`scoring.SolitaireSheet`: S1-S4) and a Low-High turn
(:class:`LowHighSession`, a :class:`scoring.LowHighTurn`: L1-L4).

Each records its moves as played (``roll``, ``split``; ``roll``, ``keep``, ``end``) and is
rebuilt by replaying them through the rules, as turns are (:mod:`service.turns`). They live in a
:class:`service.sheet_store.SheetStore`, saved after every move (:mod:`service.sheet_db`).

Example:
    >>> sheet = SheetSession("ann")
    >>> sheet.roll([1, 4, 4, 4, 6])
    >>> sheet.split(1, [8, 10])["score_after"]
    -400
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, ClassVar

from scoring import LowHigh, LowHighTurn, SolitaireSheet, get_game
from service.turns import RollRecord, TurnError, dice_words, missing_dice

__all__ = ["LowHighSession", "RollGame", "SheetSession", "new_session"]


@dataclass
class RollGame:
    """What a Solitaire Dice sheet and a Low-High turn share: a player, house rules, the rolls
    (values and reading) and the moves that replay them."""

    game: ClassVar[str]
    player: str
    rules: dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    created: float = field(default_factory=time.time)
    rolls: list[RollRecord] = field(default_factory=list)
    moves: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        try:
            self.start(get_game(self.game, **self.rules))
        except (TypeError, ValueError) as exc:  # a house rule of another game, a bad value
            raise TurnError(str(exc), 422) from None

    def start(self, rules: Any) -> None:
        """Set up the game state from the rules object (subclasses)."""
        raise NotImplementedError

    @property
    def awaiting(self) -> str:
        raise NotImplementedError

    @property
    def over(self) -> bool:
        return self.awaiting == "nothing"

    @property
    def dice_left(self) -> int:
        raise NotImplementedError

    @property
    def score(self) -> int:
        """The score now: the sheet's, or the Low-High turn's under its rules."""
        raise NotImplementedError

    @property
    def last_values(self) -> list[int] | None:
        return self.rolls[-1].values if self.rolls else None

    def roll(
        self,
        values: list[int],
        *,
        off_table: int = 0,
        missing: int = 0,
        reading: dict[str, Any] | None = None,
        source: str = "typed",
    ) -> None:
        """Record a roll of the dice in play; dice off the table or missing from the photo
        refuse it (422 and 409 with ``missing``), as do values of the wrong count (422)."""
        if self.over:
            raise TurnError(f"this {self.game} {self.noun} is over; start a new one")
        if not self.awaiting.startswith("roll"):
            raise TurnError(f"{self.awaiting_text()} before rolling again")
        expected = self.dice_left
        if off_table:
            raise TurnError(f"{dice_words(off_table)} left the table: roll again", 422)
        if missing:
            seen = len(values)
            raise missing_dice(missing, seen, expected)
        if len(values) != expected:
            raise TurnError(
                f"this roll should have {expected} dice, but the "
                f"{'photo shows' if source == 'photo' else 'values typed give'} {len(values)} "
                f"({values}); retake the photo or type the values",
                422,
            )
        try:
            self.play_roll(list(values))
        except ValueError as exc:
            raise TurnError(f"cannot roll {values}: {exc}", 422) from None
        self.moves.append({"op": "roll", "values": list(values)})
        self.rolls.append(RollRecord(list(values), reading=reading, source=source))

    def play_roll(self, values: list[int]) -> None:
        raise NotImplementedError

    def replay(self, moves: list[dict[str, Any]]) -> None:
        """Play ``moves`` (as recorded in :attr:`moves`) on this fresh game."""
        for move in moves:
            op = move.get("op")
            if op == "roll":
                self.roll(list(move["values"]))
            else:
                self.replay_move(op, move)

    def replay_move(self, op: Any, move: dict[str, Any]) -> None:
        raise NotImplementedError

    noun: ClassVar[str] = "game"

    def awaiting_text(self) -> str:
        return "finish the last roll"

    def base_dict(self) -> dict[str, Any]:
        last = self.rolls[-1] if self.rolls else None
        return {
            "id": self.id,
            "player": self.player,
            "game": self.game,
            "rules": self.rules,
            "awaiting": self.awaiting,
            "over": self.over,
            "dice_left": self.dice_left,
            "rolls": len(self.rolls),
            "last_roll": None if last is None else last.to_dict(),
        }


@dataclass
class SheetSession(RollGame):
    """One player's Solitaire Dice score sheet: roll five dice, split them, until the eighth
    reject of one face (S4)."""

    game: ClassVar[str] = "solitaire-dice"
    noun: ClassVar[str] = "sheet"
    sheet: SolitaireSheet = field(init=False)
    splits: list[dict[str, Any]] = field(init=False, default_factory=list)
    """Each split made: the roll, the reject (None: a free ride), the combos, the score after."""

    def start(self, rules: Any) -> None:
        self.sheet = SolitaireSheet()

    @property
    def awaiting(self) -> str:
        if self.sheet.finished:
            return "nothing"
        return "split" if len(self.rolls) > len(self.splits) else "roll"

    @property
    def dice_left(self) -> int:
        return 0 if self.over else 5

    @property
    def score(self) -> int:
        return int(self.sheet.score)

    def awaiting_text(self) -> str:
        return f"split the last roll {self.last_values}"

    def play_roll(self, values: list[int]) -> None:
        self.sheet.options(values)  # a bad roll is refused before it is recorded

    def options(self) -> list[dict[str, Any]]:
        """The legal splits of the last roll, each with ``score_change``, what it adds."""
        if self.awaiting != "split":
            return []
        now = self.sheet.score
        return [
            {**o, "score_change": o["score_after"] - now}
            for o in self.sheet.options(self.last_values)
        ]

    def split(self, reject: int | None, combos: list[int]) -> dict[str, Any]:
        """Mark a split of the last roll: 409 before a roll or after the end, 422 naming the
        legal splits for one this roll does not allow."""
        if self.over:
            raise TurnError("this sheet is over (eighth reject of one face); start a new one")
        if self.awaiting != "split":
            raise TurnError("nothing to split: roll the five dice first")
        if len(combos) != 2:
            raise TurnError(f"expected two combos (sums 2 to 12), got {combos}", 422)
        try:
            chosen = self.sheet.apply(self.last_values, reject, combos)
        except ValueError as exc:
            raise TurnError(f"for the roll {self.last_values}: {exc}", 422) from None
        self.moves.append({"op": "split", "reject": reject, "combos": sorted(combos)})
        self.splits.append({"roll": list(self.last_values or []), **chosen})
        return chosen

    def replay_move(self, op: Any, move: dict[str, Any]) -> None:
        if op != "split":
            raise ValueError(f"expected a move 'roll' or 'split', got {op!r}")
        self.split(move.get("reject"), list(move["combos"]))

    def to_dict(self) -> dict[str, Any]:
        sheet = self.sheet.to_dict()
        return {
            **self.base_dict(),
            "score": sheet["score"],
            "marks": sheet["marks"],
            "rejects": sheet["rejects"],
            "reject_faces": self.sheet.reject_faces,
            "free_rides": sheet["free_rides"],
            "splits": self.options(),
            "history": self.splits,
        }


@dataclass
class LowHighSession(RollGame):
    """One player's Low-High turn: roll the unlocked dice, keep a set, roll again or end; a
    roll whose dice all go bad, or a keep of the last dice, ends it (L3)."""

    game: ClassVar[str] = "low-high"
    noun: ClassVar[str] = "turn"
    turn: LowHighTurn = field(init=False)
    sets: list[dict[str, Any]] = field(init=False, default_factory=list)
    ended: bool = field(init=False, default=False)

    def start(self, rules: Any) -> None:
        self.turn = LowHighTurn(rules)

    @property
    def awaiting(self) -> str:
        if self.turn.state == "over":
            return "nothing"
        if self.turn.state == "awaiting_keep":
            return "keep"
        return "roll-or-end" if self.turn.good else "roll"

    @property
    def dice_left(self) -> int:
        return 0 if self.over else self.turn.dice_left

    @property
    def score(self) -> int:
        return int(self.turn.score)

    def awaiting_text(self) -> str:
        return f"keep a set of the last roll {self.last_values}"

    def play_roll(self, values: list[int]) -> None:
        self.sets = self.turn.roll(values)

    def keep(self, face: int) -> None:
        if self.over:
            raise TurnError("this turn is over; start a new one")
        if self.awaiting != "keep":
            raise TurnError("nothing to keep now: roll the dice first")
        if face not in {s["face"] for s in self.sets}:
            faces = ", ".join(str(s["face"]) for s in self.sets)
            raise TurnError(
                f"expected the face of a set of good dice ({faces}) in the roll "
                f"{self.last_values}, got {face!r}",
                422,
            )
        self.turn.keep(face)
        self.sets = []
        self.moves.append({"op": "keep", "face": face})

    def end(self) -> None:
        if self.over:
            raise TurnError("this turn is over already")
        if self.awaiting != "roll-or-end":
            raise TurnError(
                "keep a set of the last roll before ending the turn"
                if self.awaiting == "keep"
                else "nothing rolled yet: roll the 13 dice first"
            )
        self.turn.end()
        self.ended = True
        self.moves.append({"op": "end"})

    def replay_move(self, op: Any, move: dict[str, Any]) -> None:
        if op == "keep":
            self.keep(int(move["face"]))
        elif op == "end":
            self.end()
        else:
            raise ValueError(f"expected a move 'roll', 'keep' or 'end', got {op!r}")

    @property
    def outcome(self) -> str | None:
        """Why the turn is over: ``ended`` by the player, ``all-bad`` (L3), ``no-dice-left``."""
        if not self.over:
            return None
        if self.ended:
            return "ended"
        return "all-bad" if self.moves[-1]["op"] == "roll" else "no-dice-left"

    def to_dict(self) -> dict[str, Any]:
        rules: LowHigh = self.turn.rules
        good, bad = self.turn.good, self.turn.bad
        last_bad = []
        if self.rolls and self.moves and self.moves[-1]["op"] == "roll":
            last_bad = rules.split(self.last_values, self._highest_before_last())[1]
        return {
            **self.base_dict(),
            "state": self.turn.state,
            "outcome": self.outcome,
            "good": good,
            "bad": bad,
            "last_bad": last_bad,
            "highest_kept": self.turn.highest_kept,
            "sets": self.sets,
            "score": self.turn.score,
            "scores": {
                "dice": LowHigh(scoring="dice").turn_score(good, bad),
                "pips": LowHigh(scoring="pips", cancel=rules.cancel).turn_score(good, bad),
            },
        }

    def _highest_before_last(self) -> int:
        """The highest face kept before the last roll (the dice at or below it went bad)."""
        kept = [m["face"] for m in self.moves if m["op"] == "keep"]
        return max(kept, default=0)


GAMES: dict[str, type[RollGame]] = {"solitaire-dice": SheetSession, "low-high": LowHighSession}


def new_session(game: str, player: str, rules: dict[str, Any] | None = None) -> RollGame:
    """A fresh sheet or turn of ``game`` (TurnError 422 for another game or a bad rule)."""
    if game not in GAMES:
        raise TurnError(f"expected one of {', '.join(GAMES)}, got {game!r}", 422)
    return GAMES[game](player, dict(rules or {}))
