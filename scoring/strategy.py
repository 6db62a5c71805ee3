"""Exact expected-score strategy for the Farkle family, by backward induction.

State and objective
    Before a roll the turn is ``(n, t)``: ``n`` dice to roll and ``t`` points kept so far this
    turn (a multiple of 50 in all three games). ``R(n, t)`` is the expected final turn score of
    rolling now and playing optimally afterwards; after a keep the player may bank (value
    ``t``), unless the keep forces a re-roll (Morning Roll 2500 combos, M5) or the total ends in
    50 (five-dice Farkle, F2). The objective is the expected points of one turn (Morning Roll:
    a round is a year of turns, so points per turn is what counts).

Why a finite grid is exact
    Points only grow within a turn, so ``R(n, t)`` depends on larger totals only and is solved
    from the top down. Let ``b_n`` be the bust chance of ``n`` dice and ``g_n`` the mean of the
    best immediate points (0 on a bust). Rolling from ``t`` and then playing on can never be
    worth more than ``(1 - b_n) t + g_n``: by induction on the number of rolls left, every
    state reachable from a total ``t' >= T*`` is worth at most ``t'``, so the roll is worth at
    most ``t + g_n - b_n t``. Hence for ``t >= T* = max_n (g_n + lambda) / b_n`` banking is
    optimal wherever it is allowed (``lambda``: the cost of a skipped turn, below). This is the
    cut-off: above ``T*`` only states that cannot bank (forced re-rolls, totals ending in 50)
    still need a value, and those chains die out geometrically. The grid carries them up to
    ``T* + margin``; past that a state is given its upper bound ``t`` (and, in the check
    :meth:`FarkleAdvisor.truncation_gap`, its lower bound 0): the two solutions agree to
    rounding, so the values are exact, not estimates. A state near the grid's top would inherit
    the bound's error, so a total more than half a margin above ``T*`` is valued on a grid of
    its own, laid from that total up a whole margin.

Five-dice Farkle's skipped turn (F3)
    Banking after every die has scored costs the player's next turn. Maximising points per
    turn slot, that turn is worth ``lambda`` = the optimal points per slot, found as the fixed
    point of ``lambda = R_lambda(5, 0)`` (Dinkelbach/secant iteration, a few solves). Reported
    values of such banks are ``t - lambda``. A player not yet on the board (``on_board=False``)
    banks nothing below the entry threshold (F7, G3); by default the advisor assumes the
    player is on the board. A pass worth making banks the entry, so the turn it skips is an
    on-board one: ``lambda`` is the on-board fixed point either way.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Any

from scoring.farkle import FarkleRules
from scoring.roll_table import FORCED, FREE, HOT, STEP, WIN, check_banked, option_table

__all__ = ["FarkleAdvisor", "Option"]


@dataclass(frozen=True)
class Option:
    """One move after a roll: keep ``keep``, then ``bank`` or ``roll``, worth ``expected``
    final turn points on average; ``points`` is what the keep itself scores."""

    keep: tuple[int, ...]
    then: str
    expected: float
    points: int
    forced_reroll: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, ``expected`` unrounded (a JSON float carries it exactly)."""
        return {
            "keep": list(self.keep),
            "then": self.then,
            "expected": self.expected,
            "points": self.points,
            "forced_reroll": self.forced_reroll,
        }


class FarkleAdvisor:
    """Optimal single-turn play for a Farkle-family game; solved on construction (< 1 s).

    >>> from scoring import get_advisor
    >>> adv = get_advisor("morning-roll")
    >>> best = adv.advise([5, 1, 2], banked=200)[0]
    >>> best.then in ("bank", "roll")
    True
    """

    def __init__(
        self,
        game: FarkleRules,
        *,
        on_board: bool = True,
        skip_penalty: float | None = None,
        margin: int = 40000,
    ) -> None:
        self.game = game
        self.on_board = bool(on_board)
        self.n = game.n_dice
        self._margin = margin // STEP
        self._tables = {n: option_table(game, n) for n in range(1, self.n + 1)}
        self.bust_chance = {n: tab[1] for n, tab in self._tables.items()}
        if skip_penalty is None:
            skip_penalty = self._fixed_point_penalty() if game.skip_after_pass else 0.0
        self.skip_penalty = float(skip_penalty)
        self._solve_into_self(self.skip_penalty, upper=True)

    # --- public -------------------------------------------------------------------------------
    @property
    def expected_turn_score(self) -> float:
        """Expected points of an optimally played turn from zero."""
        return self._R[self.n][0]

    @property
    def cutoff(self) -> int:
        """``T*``: at or above this turn total, banking is optimal whenever allowed."""
        return self._istar * STEP

    def advise(self, dice: Any, banked: int = 0) -> list[Option]:
        """Every legal keep of ``dice`` followed by bank or roll, best first.

        ``banked``: points kept earlier this turn (before this roll). A bust gives ``[]``.
        """
        roll = self.game.check(dice)
        i = check_banked(banked)
        out: list[Option] = []
        for keep in self.game.keeps(roll):
            j = i + keep.points // STEP
            left = len(roll) - len(keep.dice)
            hot = left == 0
            nxt = self.n if hot else left
            if keep.wins_game:
                out.append(Option(keep.dice, "bank", float(j * STEP), keep.points))
                continue
            if keep.forced_reroll:
                out.append(
                    Option(keep.dice, "roll", self.roll_value(self.n, j * STEP), keep.points, True)
                )
                continue
            b = self._bank(j, hot)
            if b is not None:
                out.append(Option(keep.dice, "bank", b, keep.points))
            out.append(Option(keep.dice, "roll", self.roll_value(nxt, j * STEP), keep.points))
        out.sort(key=lambda o: -o.expected)
        return out

    def roll_value(self, n: int, total: int) -> float:
        """``R(n, total)``: expected final turn score of rolling ``n`` dice with ``total`` kept."""
        if not 1 <= n <= self.n:
            raise ValueError(f"{self.game.name}: dice to roll must be 1 to {self.n}, got {n}")
        i = check_banked(total)
        return self._R_at(n, i)

    def bank_value(self, total: int, *, hot: bool = False) -> float | None:
        """What banking ``total`` is worth (``None`` where banking is not allowed)."""
        return self._bank(check_banked(total), hot)

    def bank_thresholds(self) -> dict[int, int]:
        """Per number of dice to roll next: the smallest turn total from which banking is
        optimal at every higher total where banking is allowed (``n_dice`` = after all dice
        scored)."""
        out = {}
        for n in range(1, self.n + 1):
            hot = n == self.n
            i0 = self._istar
            for i in range(self._istar - 1, -1, -1):
                b = self._bank(i, hot)
                if b is None:
                    continue
                if b + 1e-9 < self._R[n][i]:
                    break
                i0 = i
            out[n] = i0 * STEP
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (``dicecam strategy --json``); values unrounded."""
        return {
            "game": self.game.name,
            "house_rules": self.game.house_rules,
            "on_board": self.on_board,
            "expected_turn_score": self.expected_turn_score,
            "bank_thresholds": {str(k): v for k, v in self.bank_thresholds().items()},
            "cutoff": self.cutoff,
            "skip_penalty": self.skip_penalty,
            "bust_chance": {str(k): v for k, v in self.bust_chance.items()},
        }

    def truncation_gap(self) -> float:
        """Largest difference, over all grid states below the cut-off, between the solution
        with truncated chains valued at their upper bound and at their lower bound (0)."""
        lo = self._solve(self.skip_penalty, upper=False)[0]
        return max(
            abs(self._R[n][i] - lo[n][i]) for n in range(1, self.n + 1) for i in range(self._istar)
        )

    # --- solver -------------------------------------------------------------------------------
    def _bank(self, i: int, hot: bool) -> float | None:
        if self.game.no_bank_on_50 and i % 2 == 1:
            return None
        t = i * STEP
        value = float(t) if self.on_board or t >= self.game.entry_threshold else 0.0
        if hot and self.game.skip_after_pass:
            value -= self.skip_penalty
        return value

    def _cutoff_index(self, lam: float) -> int:
        worst = 0.0
        for _n, (_groups, bust, gain) in self._tables.items():
            worst = max(worst, (gain + lam) / bust)
        istar = math.ceil(worst / STEP) + 1
        if not self.on_board:
            istar = max(istar, math.ceil(self.game.entry_threshold / STEP))
        return istar

    def _solve_into_self(self, lam: float, *, upper: bool) -> None:
        self._R, self._istar, self._itop = self._solve(lam, upper=upper)
        self._isafe = self._itop - self._margin // 2
        self._far: dict[int, dict[int, list]] = {}
        self._far_lock = threading.Lock()  # the service advises from several threads
        self._lazy: dict[tuple[int, int], float] = {}

    def _solve(self, lam: float, *, upper: bool, base: int = 0) -> tuple[dict[int, list], int, int]:
        saved = getattr(self, "skip_penalty", None)
        self.skip_penalty = lam
        try:
            return self._solve_grid(lam, upper, base)
        finally:
            if saved is not None:
                self.skip_penalty = saved

    def _solve_grid(
        self, lam: float, upper: bool, base: int = 0
    ) -> tuple[dict[int, list], int, int]:
        """``R`` on grid indices ``base ..``, stored from position 0; ``base`` is 0 (the main
        grid) or at or above the cut-off (a grid for high totals, see :meth:`_R_at`)."""
        N = self.n
        istar = self._cutoff_index(lam)
        itop = (base or istar) + self._margin
        maxdp = max(
            (
                dp
                for groups, _b, _g in self._tables.values()
                for _p, opts in groups
                for _k, _n, dp in opts
            ),
            default=1,
        )
        size = itop - base + maxdp + 1
        R: dict[int, list] = {n: [None] * size for n in range(1, N + 1)}
        A: dict[int, list] = {n: [0.0] * size for n in range(1, N + 1)}
        AH: list = [0.0] * size
        W = [float((base + j) * STEP) for j in range(size)]
        has_forced = any(
            k == FORCED for g, _b, _g in self._tables.values() for _p, o in g for k, _n, _d in o
        )
        f2 = self.game.no_bank_on_50
        plans = {}
        for n, (groups, _b, _g) in self._tables.items():
            plan = []
            for p, opts in groups:
                refs = []
                for kind, nn, dp in opts:
                    arr = {FREE: None, HOT: AH, FORCED: R[N], WIN: W}[kind]
                    refs.append((A[nn] if arr is None else arr, dp))
                plan.append((p, refs))
            plans[n] = plan
        bank = self._bank
        for k in range(size - 1, -1, -1):
            i = base + k
            for n in range(N, 0, -1):
                Rn = R[n]
                if i > itop:
                    Rn[k] = float(i * STEP) if upper else 0.0
                elif i < istar or (f2 and i % 2 == 1) or (has_forced and n == N):
                    total = 0.0
                    for p, refs in plans[n]:
                        if len(refs) == 1:
                            arr, dp = refs[0]
                            total += p * arr[k + dp]
                        else:
                            total += p * max([arr[k + dp] for arr, dp in refs])
                    Rn[k] = total
                b = bank(i, False)
                r = Rn[k]
                A[n][k] = r if b is None else (b if r is None or i >= istar else max(b, r))
                if n == N:
                    bh = bank(i, True)
                    AH[k] = r if bh is None else (bh if r is None or i >= istar else max(bh, r))
        return R, istar, itop

    def _R_at(self, n: int, i: int) -> float:
        """``R(n, i * STEP)`` from the main grid up to half a margin below its top, else from
        a grid laid for that total (kept for the next few calls)."""
        if i <= self._isafe:
            grid, base = self._R, 0
        else:
            half = self._margin // 2
            base = self._isafe + 1 + (i - self._isafe - 1) // half * half
            grid = self._far.get(base)
            if grid is None:
                with self._far_lock:
                    grid = self._far.get(base)
                    if grid is None:
                        grid = self._solve(self.skip_penalty, upper=True, base=base)[0]
                        if len(self._far) >= 4:
                            self._far.clear()
                        self._far[base] = grid
        value = grid[n][i - base]
        return self._expand(n, i) if value is None else value

    def _expand(self, n: int, i: int) -> float:
        """``R`` of a state the grid leaves out (above the cut-off, where banking is allowed
        and optimal): one roll, each keep banked where allowed, else valued by :meth:`_R_at`."""
        key = (n, i)
        known = self._lazy.get(key)
        if known is not None:
            return known
        groups, _b, _g = self._tables[n]
        total = 0.0
        for p, opts in groups:
            best = -math.inf
            for kind, nn, dp in opts:
                j = i + dp
                if kind == WIN:
                    v = float(j * STEP)
                elif kind == FORCED:
                    v = self._R_at(self.n, j)
                else:
                    b = self._bank(j, kind == HOT)
                    v = b if b is not None else self._R_at(self.n if kind == HOT else nn, j)
                best = max(best, v)
            total += p * best
        if len(self._lazy) > 100_000:
            self._lazy.clear()
        self._lazy[key] = total
        return total

    def _fixed_point_penalty(self) -> float:
        """Points per turn slot when a pass on hot dice skips a turn: ``lam = R_lam(N, 0)``,
        solved on the board whatever ``on_board`` says (the skipped turn follows a bank)."""

        def h(lam: float) -> float:
            R, _s, _t = self._solve(lam, upper=True)
            return R[self.n][0] - lam

        on_board, self.on_board = self.on_board, True
        a, b = 0.0, self._solve(0.0, upper=True)[0][self.n][0]
        ha, hb = h(a), h(b)
        for _ in range(30):
            if abs(hb) < 1e-10 or hb == ha:
                break
            a, b, ha = b, b - hb * (b - a) / (hb - ha), hb
            hb = h(b)
        self.on_board = on_board
        return b
