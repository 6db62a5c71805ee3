"""Turn and game state machines for the Farkle family.

>>> from scoring import FarkleTurn, get_game
>>> turn = FarkleTurn(get_game("morning-roll"))
>>> turn.roll([1, 2, 2, 3, 5, 6]); turn.keep([1]).points
100
>>> turn.roll([1, 4, 4, 4, 6]); turn.keep([1, 4, 4, 4]).points
500
>>> turn.bank()
600
"""

from __future__ import annotations

import copy
from typing import Any

from scoring.dice import as_int, check_dice, is_submultiset
from scoring.farkle import FarkleRules, Keep

__all__ = ["FarkleGame", "FarkleTurn", "ScoringError"]


class ScoringError(ValueError):
    """An illegal move: rolling when a keep is due, keeping dice that were not rolled, ..."""


class FarkleTurn:
    """One player's turn: ``roll`` -> ``keep`` -> (``roll`` | ``bank``) ... until bust or bank.

    States: ``awaiting_roll`` (roll the :attr:`dice_left` dice, or bank unless
    :attr:`must_roll`), ``awaiting_keep``, ``bust``, ``banked``. ``turn_points`` is what the turn
    has scored so far (0 after a bust). A die off the table (``roll(..., off_table=1)``) busts
    the turn (M8).
    """

    def __init__(self, game: FarkleRules) -> None:
        self.game = game
        self.state = "awaiting_roll"
        self.turn_points = 0
        self.dice_left = game.n_dice
        self.must_roll = False
        self.hot_dice = False
        """Every die has scored: the next roll is a roll-over of all dice."""
        self.skips_next_turn = False
        self.wins_game = False
        self.rolls: list[dict[str, Any]] = []
        self._current: tuple[int, ...] | None = None
        self._keeps: list[Keep] = []

    # --- moves --------------------------------------------------------------------------------
    def roll(self, dice: Any, *, off_table: int = 0) -> None:
        """Record a roll of exactly :attr:`dice_left` dice (those on the table, plus
        ``off_table`` dice that left it, which busts the turn)."""
        if self.state != "awaiting_roll":
            raise ScoringError(f"cannot roll now: the turn is {self.state}")
        count = as_int(off_table)
        if count is None or count < 0:
            raise ScoringError(f"off_table must be a whole number of dice >= 0, got {off_table!r}")
        off_table = count
        try:
            seen = check_dice(dice, min_count=0, max_count=self.game.n_dice)
        except ValueError as exc:
            raise ScoringError(f"{self.game.name}: {exc}") from None
        if len(seen) + off_table != self.dice_left:
            raise ScoringError(
                f"expected a roll of {self.dice_left} dice, got {len(seen) + off_table}"
                + (f" ({off_table} off the table)" if off_table else "")
            )
        self._current = seen
        entry: dict[str, Any] = {"dice": list(seen), "off_table": off_table}
        self.rolls.append(entry)
        self._keeps = [] if off_table else self.game.keeps(seen)
        if not self._keeps:
            entry["bust"] = True
            self.state = "bust"
            self.turn_points = 0
            return
        self.state = "awaiting_keep"
        self.hot_dice = False

    def keep(self, dice: Any, *, forced_reroll: bool | None = None) -> Keep:
        """Set aside ``dice`` from the last roll; returns the :class:`Keep` with its points.

        ``forced_reroll`` picks between the two readings of a combo that scores both ways (only
        under the Morning Roll three-pairs option); by default the higher-scoring one.
        """
        if self.state != "awaiting_keep" or self._current is None:
            raise ScoringError(f"cannot keep now: the turn is {self.state}")
        try:
            kept = check_dice(dice, max_count=self.game.n_dice)
        except ValueError as exc:
            raise ScoringError(f"{self.game.name}: {exc}") from None
        if not is_submultiset(kept, self._current):
            raise ScoringError(f"cannot keep {list(kept)}: the roll was {list(self._current)}")
        if forced_reroll is not None and not isinstance(forced_reroll, bool):
            raise ScoringError(f"forced_reroll must be true, false or None, got {forced_reroll!r}")
        matches = [k for k in self._keeps if k.dice == kept]
        if matches and forced_reroll is not None:
            matches = [k for k in matches if k.forced_reroll == forced_reroll]
            if not matches:
                why = "is no 2500 combo" if forced_reroll else "scores only as a 2500 combo"
                raise ScoringError(
                    f"{list(kept)} {why}: keep it with forced_reroll={not forced_reroll} or None"
                )
        if not matches:
            legal = ", ".join(str(list(k.dice)) for k in self._keeps)
            raise ScoringError(
                f"{list(kept)} is not a legal keep from {list(self._current)}; legal: {legal}"
            )
        chosen = max(matches, key=lambda k: k.points)
        self.turn_points += chosen.points
        self.rolls[-1]["keep"] = chosen.to_dict()
        self.dice_left -= len(chosen.dice)
        if self.dice_left == 0:
            self.dice_left = self.game.n_dice
            self.hot_dice = True
        self.must_roll = chosen.forced_reroll or (
            self.game.no_bank_on_50 and self.turn_points % 100 == 50
        )
        self._current = None
        self.state = "awaiting_roll"
        if chosen.wins_game:  # F4 ends the turn and the game: no roll is due (F2)
            self.wins_game = True
            self.must_roll = False
            self.state = "banked"
        return chosen

    def bank(self) -> int:
        """End the turn and return its points."""
        if self.state != "awaiting_roll" or not self.rolls:
            raise ScoringError(f"cannot bank now: the turn is {self.state}")
        if self.must_roll:
            why = (
                "a 2500 combo forces a re-roll"
                if self.rolls[-1].get("keep", {}).get("forced_reroll")
                else f"a total ending in 50 ({self.turn_points}) cannot be banked"
            )
            raise ScoringError(f"cannot bank: {why}")
        self.skips_next_turn = self.game.skip_after_pass and self.hot_dice
        self.state = "banked"
        return self.turn_points

    # --- views --------------------------------------------------------------------------------
    @property
    def keeps(self) -> list[Keep]:
        """Legal keeps of the last roll while a keep is due."""
        return list(self._keeps) if self.state == "awaiting_keep" else []

    @property
    def finished(self) -> bool:
        return self.state in ("bust", "banked")

    @property
    def score(self) -> int:
        """The turn's result: its points once banked, else 0."""
        return self.turn_points if self.state == "banked" else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "game": self.game.name,
            "state": self.state,
            "turn_points": self.turn_points,
            "dice_left": self.dice_left,
            "must_roll": self.must_roll,
            "hot_dice": self.hot_dice,
            "skips_next_turn": self.skips_next_turn,
            "wins_game": self.wins_game,
            "keeps": [k.to_dict() for k in self.keeps],
            "rolls": copy.deepcopy(self.rolls),  # the caller may edit it (the service does)
        }


class FarkleGame:
    """Players taking turns in order: entry thresholds, skipped turns, final round, winner.

    >>> from scoring import get_game
    >>> g = FarkleGame(get_game("greed"), ["ann", "bob"])
    >>> g.record(250)   # ann: below the 300 entry, banks nothing
    0
    >>> g.current_player
    'bob'

    Use :meth:`new_turn` and :meth:`finish` to play with a :class:`FarkleTurn`, or
    :meth:`record` with a turn's banked points. A skipped turn (F3) during the final round
    uses up that player's last turn.
    """

    def __init__(self, game: FarkleRules, players: list[str]) -> None:
        if isinstance(players, str | bytes):
            raise ValueError(f"expected a list of player names, got the string {players!r}")
        if not players:
            raise ValueError("a game needs at least one player")
        odd = [p for p in players if not isinstance(p, str) or not p.strip()]
        if odd:
            raise ValueError(f"a player name must be a non-empty string, got {odd[0]!r}")
        if len(set(players)) != len(players):
            raise ValueError(f"player names must be distinct, got {players}")
        self.game = game
        self.players = list(players)
        self.scores = {p: 0 for p in players}
        self.on_board = {p: game.entry_threshold <= 0 for p in players}
        self.skip_next = {p: False for p in players}
        self.turns_taken = {p: 0 for p in players}
        self.history: list[dict[str, Any]] = []
        self._index = 0
        self.final_round_by: str | None = None
        self._final_turns_left: set[str] = set()
        self.instant_winner: str | None = None

    @property
    def current_player(self) -> str | None:
        return None if self.finished else self.players[self._index]

    @property
    def finished(self) -> bool:
        if self.instant_winner is not None:
            return True
        return self.final_round_by is not None and not self._final_turns_left

    @property
    def winners(self) -> list[str]:
        """Players with the highest total once the game is over (several on a tie)."""
        if not self.finished:
            return []
        if self.instant_winner is not None:
            return [self.instant_winner]
        top = max(self.scores.values())
        return [p for p in self.players if self.scores[p] == top]

    @property
    def winner(self) -> str | None:
        w = self.winners
        return w[0] if len(w) == 1 else None

    def new_turn(self) -> FarkleTurn:
        if self.finished:
            raise ScoringError("the game is over")
        return FarkleTurn(self.game)

    def finish(self, turn: FarkleTurn) -> int:
        """Credit a finished turn to the current player; returns the points added."""
        if turn.game != self.game:
            raise ScoringError(f"expected a turn of {self.game!r}, got one of {turn.game!r}")
        if not turn.finished:
            raise ScoringError(f"the turn is not over: it is {turn.state}")
        return self.record(
            turn.score, skips_next_turn=turn.skips_next_turn, wins_game=turn.wins_game
        )

    def record(self, points: int, *, skips_next_turn: bool = False, wins_game: bool = False) -> int:
        """Credit ``points`` (0 for a bust) to the current player and pass the dice on."""
        if self.finished:
            raise ScoringError("the game is over")
        given, points = points, as_int(points)
        if points is None or points < 0 or points % 50:
            raise ScoringError(f"turn points must be a non-negative multiple of 50, got {given!r}")
        if wins_game and not self.game.wins_on_keep:
            raise ScoringError(f"{self.game.name} has no keep that wins the game at once")
        if skips_next_turn and not self.game.skip_after_pass:
            raise ScoringError(f"{self.game.name} skips no turn after a pass (F3 is farkle-five's)")
        if self.game.no_bank_on_50 and points % 100 and not wins_game:
            raise ScoringError(
                f"{self.game.name} banks no total ending in 50 (F2): got {points}; "
                "the turn had to roll again"
            )
        player = self.players[self._index]
        added = 0
        if not self.on_board[player] and points >= self.game.entry_threshold and points > 0:
            self.on_board[player] = True
        if self.on_board[player]:
            added = points
        self.scores[player] += added
        self.turns_taken[player] += 1
        self.skip_next[player] = bool(skips_next_turn)
        self.history.append({"player": player, "points": points, "added": added})
        self._final_turns_left.discard(player)
        if wins_game:
            self.instant_winner = player
            return added
        target = self.game.target
        if target is not None and self.final_round_by is None and self.scores[player] >= target:
            self.final_round_by = player
            self._final_turns_left = {p for p in self.players if p != player}
        self._advance()
        return added

    def _advance(self) -> None:
        for _ in range(2 * len(self.players)):
            if self.finished:
                return
            self._index = (self._index + 1) % len(self.players)
            player = self.players[self._index]
            if self.skip_next[player]:
                self.skip_next[player] = False
                self.history.append({"player": player, "skipped": True})
                self._final_turns_left.discard(player)
                continue
            return

    def to_dict(self) -> dict[str, Any]:
        return {
            "game": self.game.name,
            "players": list(self.players),
            "scores": dict(self.scores),
            "on_board": dict(self.on_board),
            "current_player": self.current_player,
            "final_round_by": self.final_round_by,
            "finished": self.finished,
            "winners": self.winners,
        }
