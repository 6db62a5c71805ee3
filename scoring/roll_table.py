"""What each roll of ``n`` dice allows, as the strategy solver (:mod:`scoring.strategy`) reads
it: turn totals in steps of ``STEP`` points, and the rolls grouped by the best keep of each kind
(``FREE``: dice left to roll, ``HOT``: every die scored, ``FORCED``: a keep that must roll
again, ``WIN``: a keep that wins the game)."""

from __future__ import annotations

from typing import Any

from scoring.dice import as_int, distinct_rolls
from scoring.farkle import FarkleRules

__all__ = ["FORCED", "FREE", "HOT", "STEP", "WIN", "check_banked", "option_table"]

STEP = 50
FREE, HOT, FORCED, WIN = "free", "hot", "forced", "win"


def check_banked(total: Any) -> int:
    """``total`` points kept this turn as a grid index (``total // STEP``); ValueError unless
    it is a non-negative multiple of 50."""
    given, total = total, as_int(total)
    if total is None:
        raise ValueError(f"points kept this turn must be an integer, got {given!r}")
    if total < 0 or total % STEP:
        raise ValueError(
            f"points kept this turn must be a non-negative multiple of 50, got {total}"
        )
    return total // STEP


def option_table(
    game: FarkleRules, n: int
) -> tuple[list[tuple[float, list[tuple[str, int, int]]]], float, float]:
    """Rolls of ``n`` dice grouped by what they allow: ``(groups, bust_chance, mean_best)``.

    Each group is ``(probability, options)`` with options ``(kind, next_n, points // 50)``;
    per kind and next dice count only the highest-scoring keep matters, and where a total
    ending in 50 may not be banked (F2) the highest of each ending: keeping a 5 alone (+50)
    can beat keeping a 1 (+100) when only the total it makes can be banked.
    """
    sigs: dict[tuple, float] = {}
    bust = 0.0
    gain = 0.0
    for roll, p in distinct_rolls(n):
        keeps = game.keeps(roll)
        if not keeps:
            bust += p
            continue
        best: dict[tuple[str, int, int], int] = {}
        for k in keeps:
            left = n - len(k.dice)
            kind = WIN if k.wins_game else FORCED if k.forced_reroll else HOT if left == 0 else FREE
            nn = game.n_dice if left == 0 else left
            dp = k.points // STEP
            key = (kind, nn, dp % 2 if game.no_bank_on_50 else 0)
            best[key] = max(best.get(key, 0), dp)
        sig = tuple(sorted((kind, nn, dp) for (kind, nn, _end), dp in best.items()))
        sigs[sig] = sigs.get(sig, 0.0) + p
        gain += p * max(k.points for k in keeps)
    return [(p, list(sig)) for sig, p in sigs.items()], bust, gain
