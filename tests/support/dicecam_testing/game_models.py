"""Models of the games the service plays across rolls, each played with the scoring package:
a Farkle-family turn (:class:`FarkleModel`), a Solitaire Dice sheet (:class:`SheetModel`), a
Low-High turn (:class:`LowHighModel`). Each says what the service should answer a move (done,
or refused with which 4xx and words) and checks the service's view of the game against its own
(``tests/service/test_turns_stateful.py`` plays them against a real service).

Example:
    >>> turn = FarkleModel("t1", game="morning-roll")
    >>> turn.refusal(Move("keep", {"dice": [1]}))
    (409, 'roll the dice first')
    >>> turn.refusal(Move("rolls", {"values": [1, 2, 2, 3, 4, 6]})) is None
    True
    >>> turn.refusal(Move("bank", seen=0))
    (409, 'moved on elsewhere')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scoring import HOUSE_RULES, FarkleTurn, LowHighTurn, SolitaireSheet, get_advisor, get_game

from dicecam_testing.parity import assert_keeps_ranked

__all__ = ["FarkleModel", "Game", "LowHighModel", "Move", "Refusal", "SheetModel"]

MORNING_ROLL = "morning-roll"
Refusal = tuple[int, str] | None
"""What a move should get: None (done), or the 4xx status and a phrase of its ``detail``."""


@dataclass
class Move:
    """A move as sent: its route's last part, its JSON body, or the dice a photo shows (on the
    table, and how many off it) with the player's corrections as ``body`` (``values``,
    ``off_table``) or none, and ``?rolls``."""

    op: str
    body: dict[str, Any] | None = None
    photo: tuple[list[int], int] | None = None
    seen: int | None = None


@dataclass
class Game:
    """The service's game ``id`` as the test expects it to be (subclasses hold the rules')."""

    id: str
    rolls: list[list[int]] = field(default_factory=list)

    def refusal(self, move: Move) -> Refusal:
        """Play ``move`` on the model if the game allows it, else say how it is refused."""
        if move.seen is not None and move.seen != len(self.rolls):
            return 409, "moved on elsewhere"
        if self.over:
            return 409, "over"
        if move.op != "rolls":
            return self.play(move.op, move.body or {})
        if move.body is None:  # read from the photo: the dice it does not show are missing
            values, off = move.photo
            return self.roll(values, off, max(0, self.dice_left - len(values) - off))
        return self.roll(move.body["values"], move.body.get("off_table", 0), 0)

    def check_roll(self, values: list[int], off: int, missing: int, busts: bool) -> Refusal:
        """The refusals every game shares: dice off the table, missing, a wrong count."""
        if off and not busts:
            return 422, "left the table"
        if missing and not busts:
            return 409, f"{missing} {'die' if missing == 1 else 'dice'} missing"
        if len(values) + off + missing != self.dice_left:
            return 422, f"should have {self.dice_left} dice"
        self.rolls.append(values)
        self.last_extra = (off, missing)
        return None

    def check_last_roll(self, view: dict[str, Any]) -> None:
        """The rolls made and the last one as sent (read from the photo left to right)."""
        last = view["last_roll"]
        assert view["rolls"] == len(self.rolls)
        if self.rolls:
            assert (last["values"], last["off_table"], last["missing"]) == (
                self.rolls[-1],
                *self.last_extra,
            )
        else:
            assert last is None


@dataclass
class FarkleModel(Game):
    game: str = MORNING_ROLL
    rules: dict[str, Any] = field(default_factory=dict)
    on_board: bool = True

    def __post_init__(self) -> None:
        self.turn = FarkleTurn(get_game(self.game, **self.rules))
        self.advisor = get_advisor(self.game, on_board=self.on_board, **self.rules)

    over = property(lambda self: self.turn.state in ("bust", "banked"))
    rolls_now = property(lambda self: self.turn.state == "awaiting_roll")
    score = property(lambda self: self.turn.turn_points)
    dice_left = property(lambda self: self.turn.dice_left)

    def roll(self, values: list[int], off: int, missing: int) -> Refusal:
        if self.turn.state == "awaiting_keep":
            return 409, "choose what to keep"
        busts = self.game == MORNING_ROLL
        refused = self.check_roll(values, off, missing, busts)
        if refused is None:
            self.turn.roll(values, off_table=off + missing)
        return refused

    def refusal(self, move: Move) -> Refusal:
        dice = (move.body or {}).get("dice", []) if move.op == "keep" else []
        if any(not 1 <= d <= 6 for d in dice):  # the API's model refuses it before all
            return 422, "expected a face 1 to 6"
        return super().refusal(move)

    def play(self, op: str, body: dict[str, Any]) -> Refusal:
        if op == "keep" and self.turn.state != "awaiting_keep":
            return 409, "roll the dice first"
        try:
            if op == "keep":
                self.turn.keep(body["dice"], forced_reroll=body.get("forced_reroll"))
            else:
                self.turn.bank()
        except ValueError as exc:
            return 422 if op == "keep" else 409, str(exc)  # the scoring package's words
        return None

    def check(self, view: dict[str, Any]) -> None:
        t = self.turn
        bust = t.state == "bust"
        self.check_last_roll(view)
        awaiting = (
            "nothing"
            if self.over
            else "keep"
            if t.state == "awaiting_keep"
            else "roll"
            if t.must_roll or not t.rolls
            else "roll-or-bank"
        )
        assert (view["id"], view["game"], view["state"], view["awaiting"]) == (
            self.id,
            self.game,
            t.state,
            awaiting,
        )
        assert (view["over"], view["bust"], view["outcome"]) == (
            self.over,
            bust,
            t.state if self.over else None,
        )
        state = (t.turn_points, t.dice_left, t.must_roll, t.hot_dice, len(t.rolls))
        got = ("turn_points", "dice_left", "must_roll", "hot_dice", "rolls")
        assert tuple(view[k] for k in got) == state, (view, t.to_dict())
        assert [(h["dice"], h.get("keep")) for h in view["history"]] == [
            (r["dice"], r.get("keep")) for r in t.rolls
        ]
        default = HOUSE_RULES[self.game]
        assert view["rules"] == {k: v for k, v in self.rules.items() if default[k] != v}
        entry = 0 if self.on_board else t.game.entry_threshold
        scored = t.turn_points if t.turn_points >= entry else 0
        assert view["scored"] == (None if not self.over else 0 if bust else scored)
        forced = t.must_roll and bool((t.rolls[-1].get("keep") or {}).get("forced_reroll"))
        assert view["forced_reroll"] == forced
        if bust:
            off = t.rolls[-1]["off_table"]  # the model counts missing dice as off the table
            why = (
                "left the table" if self.last_extra[0] else "missing" if off else "no scoring dice"
            )
            assert why in view["bust_reason"], view["bust_reason"]
        else:
            assert view["bust_reason"] is None
        if t.state == "awaiting_keep":
            roll = list(t.rolls[-1]["dice"])
            options = self.advisor.advise(roll, t.turn_points)
            assert_keeps_ranked(view["keeps"], t.game, roll, options, (self.id, t.rolls))
        else:
            assert view["keeps"] == []


@dataclass
class SheetModel(Game):
    def __post_init__(self) -> None:
        self.sheet = SolitaireSheet()
        self.splits = 0

    over = property(lambda self: self.sheet.finished)
    rolls_now = property(lambda self: self.awaiting == "roll")
    score = property(lambda self: self.sheet.score)
    dice_left = property(lambda self: 0 if self.over else 5)

    @property
    def awaiting(self) -> str:
        return "nothing" if self.over else "split" if len(self.rolls) > self.splits else "roll"

    def roll(self, values: list[int], off: int, missing: int) -> Refusal:
        if self.awaiting == "split":
            return 409, f"split the last roll {self.rolls[-1]}"
        return self.check_roll(values, off, missing, busts=False)

    def refusal(self, move: Move) -> Refusal:
        combos = (move.body or {}).get("combos", []) if move.op == "split" else []
        if any(not 2 <= c <= 12 for c in combos):  # the API's model refuses it before all
            return 422, "expected a combo total 2 to 12"
        return super().refusal(move)

    def play(self, op: str, body: dict[str, Any]) -> Refusal:
        if self.awaiting != "split":
            return 409, "roll the five dice first"
        try:
            self.sheet.apply(self.rolls[-1], body["reject"], body["combos"])
        except ValueError as exc:
            return 422, str(exc)
        self.splits += 1
        return None

    def check(self, view: dict[str, Any]) -> None:
        sheet = self.sheet.to_dict()
        self.check_last_roll(view)
        assert (view["id"], view["awaiting"], view["over"], view["dice_left"]) == (
            self.id,
            self.awaiting,
            self.over,
            self.dice_left,
        )
        assert [view[k] for k in ("score", "marks", "rejects", "free_rides")] == [
            sheet[k] for k in ("score", "marks", "rejects", "free_rides")
        ]
        assert view["reject_faces"] == self.sheet.reject_faces
        assert (view["rolls"], len(view["history"])) == (len(self.rolls), self.splits)
        splits = self.sheet.options(self.rolls[-1]) if self.awaiting == "split" else []
        now = self.sheet.score
        assert view["splits"] == [{**o, "score_change": o["score_after"] - now} for o in splits]


@dataclass
class LowHighModel(Game):
    rules: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.turn = LowHighTurn(get_game("low-high", **self.rules))
        self.sets: list[dict[str, Any]] = []
        self.outcome: str | None = None
        self.last_bad: list[int] = []
        """The bad dice of the last roll, while it is the last move."""

    over = property(lambda self: self.turn.state == "over")
    rolls_now = property(lambda self: self.turn.state == "awaiting_roll")
    score = property(lambda self: self.turn.score)
    dice_left = property(lambda self: 0 if self.over else self.turn.dice_left)

    @property
    def awaiting(self) -> str:
        if self.over:
            return "nothing"
        if self.turn.state == "awaiting_keep":
            return "keep"
        return "roll-or-end" if self.turn.good else "roll"

    def roll(self, values: list[int], off: int, missing: int) -> Refusal:
        if self.awaiting == "keep":
            return 409, "keep a set of the last roll"
        refused = self.check_roll(values, off, missing, busts=False)
        if refused is None:
            bad = len(self.turn.bad)
            self.sets = self.turn.roll(values)
            self.outcome = "all-bad" if self.over else None
            self.last_bad = self.turn.bad[bad:]
        return refused

    def play(self, op: str, body: dict[str, Any]) -> Refusal:
        if op == "keep":
            if self.awaiting != "keep":
                return 409, "roll the dice first"
            if body["face"] not in {s["face"] for s in self.sets}:
                return 422, "expected the face of a set of good dice"
            self.turn.keep(body["face"])
            self.sets, self.outcome = [], "no-dice-left" if self.over else None
            self.last_bad = []
            return None
        if self.awaiting != "roll-or-end":
            return 409, "keep a set" if self.awaiting == "keep" else "nothing rolled yet"
        self.turn.end()
        self.outcome, self.last_bad = "ended", []
        return None

    def check(self, view: dict[str, Any]) -> None:
        t = self.turn
        self.check_last_roll(view)
        assert view["last_bad"] == self.last_bad
        assert (view["id"], view["awaiting"], view["over"], view["outcome"]) == (
            self.id,
            self.awaiting,
            self.over,
            self.outcome,
        )
        assert (view["dice_left"], view["rolls"], view["state"]) == (
            self.dice_left,
            len(self.rolls),
            t.state,
        )
        assert (view["good"], view["bad"], view["highest_kept"]) == (t.good, t.bad, t.highest_kept)
        assert (view["score"], view["sets"]) == (t.score, self.sets)
        scores = {
            "dice": get_game("low-high").turn_score(t.good, t.bad),
            "pips": get_game("low-high", scoring="pips", cancel=t.rules.cancel).turn_score(
                t.good, t.bad
            ),
        }
        assert view["scores"] == scores
