"""Low-High: 13 dice, keep sets, a good and a bad track, first to 30.

>>> from scoring import get_game
>>> game = get_game("low-high")
>>> [o["face"] for o in game.options([1, 1, 1, 1, 2, 4, 4, 4, 5, 5, 5, 5, 6])]
[1, 2, 4, 5, 6]
>>> game.turn_score(good=[1, 1, 1, 1, 2, 2, 2, 4], bad=[1, 1, 2])
5
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from scoring.dice import as_int, check_dice

__all__ = ["LowHigh", "LowHighGame", "LowHighTurn"]


class LowHigh:
    """Rules. House rules (L4): ``scoring="dice"`` (default) or ``"pips"``; with pips,
    ``cancel="ascending"`` (default) or ``"descending"``; ``target`` (30; the table agrees one
    for pips)."""

    name = "low-high"
    n_dice = 13

    def __init__(
        self, *, scoring: str = "dice", cancel: str = "ascending", target: int = 30
    ) -> None:
        if scoring not in ("dice", "pips"):
            raise ValueError(f"low-high scoring must be 'dice' or 'pips', got {scoring!r}")
        if cancel not in ("ascending", "descending"):
            raise ValueError(f"low-high cancel must be 'ascending' or 'descending', got {cancel!r}")
        given, target = target, as_int(target)
        if target is None or target <= 0:
            raise ValueError(f"low-high target must be a positive integer, got {given!r}")
        self.scoring, self.cancel, self.target = scoring, cancel, target

    @property
    def house_rules(self) -> dict[str, Any]:
        return {"scoring": self.scoring, "cancel": self.cancel, "target": self.target}

    def check(self, dice: Any) -> tuple[int, ...]:
        try:
            return check_dice(dice, max_count=self.n_dice)
        except ValueError as exc:
            raise ValueError(f"{self.name}: {exc}") from None

    def split(self, dice: Any, highest_kept: int = 0) -> tuple[list[int], list[int]]:
        """``(good, bad)``: dice at or below the highest face kept this turn go bad (L1)."""
        roll = self.check(dice)
        given, highest_kept = highest_kept, as_int(highest_kept)
        if highest_kept is None or not 0 <= highest_kept <= 6:
            raise ValueError(f"highest kept face must be 0 (none yet) to 6, got {given!r}")
        return [d for d in roll if d > highest_kept], [d for d in roll if d <= highest_kept]

    def options(self, dice: Any, highest_kept: int = 0) -> list[dict[str, Any]]:
        """The sets a roll allows: ``[{"face", "count", "keep"}]``, one per face among the good
        dice (L2); empty when every die went bad (L3)."""
        good, _bad = self.split(dice, highest_kept)
        counts = Counter(good)
        return [{"face": f, "count": c, "keep": [f] * c} for f, c in sorted(counts.items())]

    def turn_score(self, good: Any, bad: Any) -> int:
        """Score of a finished turn from its good and bad tracks (L4).

        Dice scoring: each bad die cancels a good die; the rest score +1 each (good) or -1
        (bad). Pips scoring: tracks are sorted (ascending, or descending under that option) and
        cancelled pairwise from the front; leftover good dice add their pips, leftover bad dice
        subtract theirs.
        """
        g = sorted(check_dice(good, min_count=0), reverse=self.cancel == "descending")
        b = sorted(check_dice(bad, min_count=0), reverse=self.cancel == "descending")
        if len(g) + len(b) > self.n_dice:
            raise ValueError(f"a turn has {self.n_dice} dice, got {len(g)} good and {len(b)} bad")
        if self.scoring == "dice":
            return len(g) - len(b)
        k = min(len(g), len(b))
        return sum(g[k:]) - sum(b[k:])

    def turn_range(self) -> range:
        """The scores a turn can make: a set is kept from the first roll and cancels one of at
        most ``n_dice - 1`` bad dice (dice scoring: -11 to 13; pips: -66 to 78)."""
        pips = 6 if self.scoring == "pips" else 1
        return range(-(self.n_dice - 2) * pips, self.n_dice * pips + 1)

    def score(self, dice: Any, highest_kept: int = 0) -> dict[str, Any]:
        good, bad = self.split(dice, highest_kept)
        return {
            "game": self.name,
            "dice": sorted(good + bad),
            "bad": bad,
            "sets": self.options(dice, highest_kept),
            "turn_over": not good,
        }


class LowHighTurn:
    """A turn: ``roll`` -> ``keep(face)`` -> (``roll`` | ``end``); states ``awaiting_roll``,
    ``awaiting_keep``, ``over``."""

    def __init__(self, rules: LowHigh) -> None:
        self.rules = rules
        self.good: list[int] = []
        self.bad: list[int] = []
        self.state = "awaiting_roll"
        self._roll_good: list[int] = []

    @property
    def dice_left(self) -> int:
        return self.rules.n_dice - len(self.good) - len(self.bad)

    @property
    def highest_kept(self) -> int:
        return max(self.good, default=0)

    def roll(self, dice: Any) -> list[dict[str, Any]]:
        """Record a roll of the unlocked dice; returns the sets that may be kept."""
        if self.state != "awaiting_roll":
            raise ValueError(f"cannot roll now: the turn is {self.state}")
        roll = self.rules.check(dice)
        if len(roll) != self.dice_left:
            raise ValueError(f"expected a roll of {self.dice_left} dice, got {len(roll)}")
        good, bad = self.rules.split(roll, self.highest_kept)
        self.bad.extend(bad)
        self._roll_good = good
        self.state = "awaiting_keep" if good else "over"
        return self.rules.options(good) if good else []

    def keep(self, face: int) -> None:
        if self.state != "awaiting_keep":
            raise ValueError(f"cannot keep now: the turn is {self.state}")
        given, face = face, as_int(face)  # type: ignore[assignment]
        if face not in self._roll_good:
            raise ValueError(f"no good {given!r} to keep; good dice: {self._roll_good}")
        self.good.extend(d for d in self._roll_good if d == face)
        self._roll_good = []
        self.state = "awaiting_roll" if self.dice_left else "over"

    def end(self) -> int:
        """End the turn (after a keep, or once it is over) and return its score."""
        if self.state == "awaiting_keep":
            raise ValueError("a set must be kept before the turn can end")
        if not self.good and not self.bad:
            raise ValueError("nothing rolled yet")
        self.state = "over"
        return self.score

    @property
    def score(self) -> int:
        return self.rules.turn_score(self.good, self.bad)

    def to_dict(self) -> dict[str, Any]:
        return {"state": self.state, "good": self.good, "bad": self.bad, "score": self.score}


class LowHighGame:
    """2 to 6 players in turn; the first to reach the target at the end of a turn wins."""

    def __init__(self, rules: LowHigh, players: list[str]) -> None:
        bad = isinstance(players, str | bytes) or not 2 <= len(players) <= 6
        if bad or len(set(players)) != len(players):
            raise ValueError(f"low-high needs a list of 2 to 6 distinct players, got {players!r}")
        self.rules = rules
        self.players = list(players)
        self.scores = {p: 0 for p in players}
        self._index = 0
        self.winner: str | None = None

    @property
    def current_player(self) -> str | None:
        return None if self.winner else self.players[self._index]

    def record(self, points: int) -> None:
        """Add the current player's turn score (:meth:`LowHighTurn.end`) and pass the dice."""
        if self.winner:
            raise ValueError(f"the game is over: {self.winner} won")
        given, points = points, as_int(points)  # type: ignore[assignment]
        span = self.rules.turn_range()
        if points not in span:
            raise ValueError(
                f"expected a turn score, a whole number {span[0]} to {span[-1]}, got {given!r}"
            )
        player = self.players[self._index]
        self.scores[player] += points
        if self.scores[player] >= self.rules.target:
            self.winner = player
        self._index = (self._index + 1) % len(self.players)
