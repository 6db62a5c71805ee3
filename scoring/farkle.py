"""Rules of the Farkle family: Morning Roll (6 dice), five-dice Farkle and Greed (5 dice).

Each game is a :class:`FarkleRules` object that answers, for one roll, whether it busts, every
legal keep and the best score. The readings follow ``READINGS.md`` (items M*, F*, G*).

>>> from scoring import get_game
>>> game = get_game("morning-roll")
>>> game.best_score([1, 1, 1, 5, 2, 3])
1050
>>> game.is_bust([2, 3, 4, 6, 6, 3])
True
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from itertools import product
from typing import Any

from scoring.dice import check_dice, counts_of

__all__ = ["FarkleFive", "FarkleRules", "Greed", "Keep", "MorningRoll"]

Counts = tuple[int, ...]


@dataclass(frozen=True)
class Keep:
    """Dice set aside from a roll and what they score.

    ``forced_reroll``: keeping them as a 2500 combo obliges the player to roll all dice again
    (Morning Roll M5). ``wins_game``: five 1s in five-dice Farkle (F4).
    """

    dice: tuple[int, ...]
    points: int
    forced_reroll: bool = False
    wins_game: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "dice": list(self.dice),
            "points": self.points,
            "forced_reroll": self.forced_reroll,
            "wins_game": self.wins_game,
        }


class FarkleRules:
    """Common machinery: a keep scores when every kept die belongs to a scoring group.

    Subclasses define the groups (:meth:`kind_points`) and full-roll specials (:meth:`specials`).
    The points of a kept multiset are the maximum over its partitions into groups (M3).
    """

    name: str = ""
    n_dice: int = 6
    one_keep: bool = False
    """All scoring dice of a roll are kept: one keep per roll (F1, G1)."""
    entry_threshold: int = 0
    """A player's first counted turn must reach this (F7, G3); 0 for none."""
    target: int | None = None
    """Reaching this total starts the final round (F8, G); ``None``: no end (Morning Roll)."""
    no_bank_on_50: bool = False
    """A turn total ending in 50 may not be banked (F2)."""
    skip_after_pass: bool = False
    """Banking after every die has scored skips the player's next turn (F3)."""
    wins_on_keep: bool = False
    """A keep can win the game at once (F4: five 1s)."""

    # --- per-game scoring -------------------------------------------------------------------
    def kind_points(self, face: int, k: int) -> int | None:
        """Points of ``k`` dice showing ``face`` as one group, or ``None`` if not a group."""
        raise NotImplementedError

    def specials(self, counts: Counts) -> list[tuple[int, bool, bool]]:
        """Full-roll combos for these counts: ``(points, forced_reroll, wins_game)``."""
        return []

    @property
    def house_rules(self) -> dict[str, Any]:
        return {}

    # --- public API ---------------------------------------------------------------------------
    def check(self, dice: Any) -> tuple[int, ...]:
        """Validate a roll of 1 to ``n_dice`` dice for this game and return it sorted."""
        try:
            return check_dice(dice, max_count=self.n_dice)
        except ValueError as exc:
            raise ValueError(f"{self.name}: {exc}") from None

    def keeps(self, dice: Any) -> list[Keep]:
        """Every legal keep of a roll, best points first; empty when the roll busts.

        Free-choice games list one entry per distinct kept multiset (and, under the Morning Roll
        three-pairs option, a combo that may also be scored without the forced re-roll appears
        once each way). One-keep games (F1, G1) list the single keep of all scoring dice.
        """
        counts = counts_of(self.check(dice))
        found = _all_keeps(self, counts)
        if self.one_keep and found:
            return [max(found, key=lambda k: (k.points, len(k.dice)))]
        return list(found)

    def is_bust(self, dice: Any) -> bool:
        """No die of the roll scores."""
        return not self.keeps(dice)

    def best_score(self, dice: Any) -> int:
        """Most points the roll can score in one keep (0 for a bust)."""
        found = self.keeps(dice)
        return max((k.points for k in found), default=0)

    def options(self, dice: Any) -> list[dict[str, Any]]:
        """What a roll allows, as JSON-ready dicts (the keeps): the same method name as
        Solitaire Dice's splits and Low-High's sets."""
        return [k.to_dict() for k in self.keeps(dice)]

    def score(self, dice: Any) -> dict[str, Any]:
        """JSON-ready summary: ``bust``, ``max_points`` and ``keeps``."""
        roll = self.check(dice)  # once: ``dice`` may be a generator
        found = self.keeps(roll)
        return {
            "game": self.name,
            "dice": list(roll),
            "bust": not found,
            "max_points": max((k.points for k in found), default=0),
            "keeps": [k.to_dict() for k in found],
        }

    def group_points(self, counts: Counts) -> int | None:
        """Best points when every die of ``counts`` scores in ordinary groups, else ``None``."""
        return _group_points(self, tuple(counts))

    def _key(self) -> tuple:
        return (type(self).__name__, tuple(sorted(self.house_rules.items())))

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FarkleRules) and self._key() == other._key()

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.house_rules.items())
        return f"{type(self).__name__}({opts})"


@cache
def _group_points(rules: FarkleRules, counts: Counts) -> int | None:
    if not any(counts):
        return 0
    best: int | None = None
    for face in range(1, 7):
        c = counts[face - 1]
        if not c:
            continue
        options = []
        if face in (1, 5):
            options.append((1, 100 if face == 1 else 50))
        for k in range(3, c + 1):
            pts = rules.kind_points(face, k)
            if pts is not None:
                options.append((k, pts))
        for k, pts in options:
            rest = list(counts)
            rest[face - 1] -= k
            sub = _group_points(rules, tuple(rest))
            if sub is not None and (best is None or pts + sub > best):
                best = pts + sub
        # every die of this face must be used by some group, so the first non-empty face
        # decides: exploring it exhaustively covers every partition.
        return best
    return best


@cache
def _all_keeps(rules: FarkleRules, counts: Counts) -> tuple[Keep, ...]:
    out: list[Keep] = []
    for sub in product(*(range(c + 1) for c in counts)):
        if not any(sub):
            continue
        dice = tuple(f for f in range(1, 7) for _ in range(sub[f - 1]))
        plain = rules.group_points(sub)
        candidates = [(p, forced, wins) for p, forced, wins in rules.specials(sub)]
        if plain is not None:
            candidates.append((plain, False, False))
        if not candidates:
            continue
        # scored at its best value (M3); ties prefer the reading without a forced re-roll
        best = max(candidates, key=lambda c: (c[0], not c[1]))
        out.append(Keep(dice, best[0], best[1], best[2]))
        if best[1] and plain is not None:
            out.append(Keep(dice, plain))
    out.sort(key=lambda k: (-k.points, -len(k.dice), k.dice, k.forced_reroll))
    return tuple(out)


class MorningRoll(FarkleRules):
    """Morning Roll, 6 dice; the objective is points per turn (a round is a year of turns).

    House rule ``three_pairs_any`` (M4 option): four of a kind plus a pair, and six of a kind,
    also count as boxcars.
    """

    name = "morning-roll"
    n_dice = 6

    def __init__(self, *, three_pairs_any: bool = False) -> None:
        self.three_pairs_any = bool(three_pairs_any)

    @property
    def house_rules(self) -> dict[str, Any]:
        return {"three_pairs_any": self.three_pairs_any}

    def kind_points(self, face: int, k: int) -> int | None:
        if k < 3:
            return None
        return (1000 if face == 1 else 100 * face) * 2 ** (k - 3)

    def specials(self, counts: Counts) -> list[tuple[int, bool, bool]]:
        if sum(counts) != 6:
            return []
        if all(c == 1 for c in counts):
            return [(2500, True, False)]
        nonzero = sorted(c for c in counts if c)
        if nonzero == [2, 2, 2] or (self.three_pairs_any and all(c % 2 == 0 for c in nonzero)):
            return [(2500, True, False)]
        return []


class FarkleFive(FarkleRules):
    """Five-dice Farkle: all scoring dice kept (F1), no banking on ...50 (F2), skip after a
    pass on hot dice (F3), five 1s win (F4), Big Roll on five dice (F6), entry 500 (F7),
    game to 5000 with a final round (F8).

    House rule ``free_keep`` (F1 option): any scoring dice may be kept, as in common Farkle.
    """

    name = "farkle-five"
    n_dice = 5
    entry_threshold = 500
    target = 5000
    no_bank_on_50 = True
    skip_after_pass = True
    wins_on_keep = True

    def __init__(self, *, free_keep: bool = False) -> None:
        self.free_keep = bool(free_keep)
        self.one_keep = not self.free_keep

    @property
    def house_rules(self) -> dict[str, Any]:
        return {"free_keep": self.free_keep}

    def kind_points(self, face: int, k: int) -> int | None:
        if k < 3 or (k == 5 and face == 1):
            return None  # five 1s are the game-winning special
        return (1000 if face == 1 else 100 * face) * 2 ** (k - 3)

    def specials(self, counts: Counts) -> list[tuple[int, bool, bool]]:
        if tuple(counts) == (5, 0, 0, 0, 0, 0):
            return [(5000, False, True)]
        if tuple(counts) == (1, 1, 1, 1, 1, 0):
            return [(500, False, False)]
        return []


class Greed(FarkleRules):
    """Greed: scoring dice removed (G1), triples only (G2), no straight (G4), entry 300 (G3),
    game to 3000 with a final round."""

    name = "greed"
    n_dice = 5
    one_keep = True
    entry_threshold = 300
    target = 3000

    def kind_points(self, face: int, k: int) -> int | None:
        if k != 3:
            return None
        return 1000 if face == 1 else 100 * face
