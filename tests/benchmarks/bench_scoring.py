"""Scoring benchmark: time to solve each game's full policy, and one advice call.

    python tests/benchmarks/bench_scoring.py

Targets: a full solve < 1 s, one advice call < 5 ms (on the 2-core CI-like machine).
Solves are cold: every rules/roll cache is cleared first.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scoring import FarkleAdvisor, get_game  # noqa: E402
from scoring import dice as dice_mod  # noqa: E402
from scoring import farkle as farkle_mod  # noqa: E402

VARIANTS = [
    ("morning-roll", {}),
    ("morning-roll", {"three_pairs_any": True}),
    ("farkle-five", {}),
    ("farkle-five", {"free_keep": True}),
    ("greed", {}),
]


def cold_solve(name: str, rules: dict) -> tuple[float, FarkleAdvisor]:
    farkle_mod._all_keeps.cache_clear()
    farkle_mod._group_points.cache_clear()
    dice_mod._rolls.cache_clear()
    start = time.perf_counter()
    adv = FarkleAdvisor(get_game(name, **rules))
    return time.perf_counter() - start, adv


def main() -> None:
    rng = random.Random(7)
    print(f"{'game':<34} {'solve s (min/med of 3)':>22} {'E[turn]':>9} {'cut-off':>8}")
    advisors = []
    for name, rules in VARIANTS:
        times = []
        for _ in range(3):
            dt, adv = cold_solve(name, rules)
            times.append(dt)
        label = name + (f" {rules}" if rules else "")
        print(
            f"{label:<34} {min(times):>10.3f} / {statistics.median(times):<9.3f} "
            f"{adv.expected_turn_score:>9.2f} {adv.cutoff:>8}"
        )
        advisors.append((label, adv))
    print()
    print(f"{'advice call':<34} {'mean ms':>8} {'p99 ms':>8} {'max ms':>8}  (2000 random rolls)")
    for label, adv in advisors:
        n_dice = adv.game.n_dice
        cases = [
            ([rng.randint(1, 6) for _ in range(rng.randint(1, n_dice))], 50 * rng.randint(0, 200))
            for _ in range(2000)
        ]
        farkle_mod._all_keeps.cache_clear()  # include computing the keeps of unseen rolls
        laps = []
        for dice, banked in cases:
            start = time.perf_counter()
            adv.advise(dice, banked)
            laps.append((time.perf_counter() - start) * 1000)
        laps.sort()
        print(
            f"{label:<34} {statistics.mean(laps):>8.3f} {laps[int(0.99 * len(laps))]:>8.3f} "
            f"{laps[-1]:>8.3f}"
        )


if __name__ == "__main__":
    main()
