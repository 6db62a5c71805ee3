"""A model of Morning Roll and five-dice Farkle written from their rule texts alone, to audit
the strategy advisor with (``tests/scoring/test_strategy_audit_farkle_*.py``): both games
scored here from morning-roll.txt, farkle-five-dice.txt and READINGS.md (M1-M7, F1-F7), and
solved by plain backward induction over ``(dice to roll, turn total)``. Nothing here calls the
rules' keeps/score or the advisor's helpers.

Example:
    >>> farkle_keeps((1, 2, 2, 2, 5))
    [((1, 2, 2, 2, 5), 350, 'hot')]
    >>> len(rolls(2)), rolls(2)[0]  # 21 sorted rolls of two dice, each with its chance
    (21, ((1, 1), 0.027777777777777776))
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import cache
from itertools import product

__all__ = [
    "BOARD",
    "CAP",
    "FORCED",
    "FREE",
    "GAMES",
    "HOT",
    "STEP",
    "WIN",
    "Solver",
    "farkle_keeps",
    "json_key",
    "morning_keeps",
    "options",
    "rolls",
    "skip_value",
    "solver",
]

Keep = tuple[tuple[int, ...], int, str]
"""A keep: (kept dice sorted, points, kind); the kind says what may follow it."""

STEP = 50
FREE, HOT, FORCED, WIN = "free", "hot", "forced", "win"


def _of_a_kind(face: int, k: int) -> int:
    """Three of a kind 1000 (1s) or 100 x face; each further die doubles (both texts)."""
    return (1000 if face == 1 else 100 * face) * 2 ** (k - 3)


def _face_points(face: int, c: int) -> int | None:
    """Best points of ``c`` dice of one face all scoring: one group of three or more, and 1s
    (100) or 5s (50) left over as singles (M1, M3); ``None`` if some die cannot score. Two
    groups of one face never beat one group (each extra die doubles)."""
    single = {1: 100, 5: 50}.get(face)
    best = None if single is None else c * single
    for k in range(3, c + 1):
        rest = c - k
        if rest and single is None:
            continue
        pts = _of_a_kind(face, k) + rest * (single or 0)
        best = pts if best is None else max(best, pts)
    return 0 if c == 0 else best


def _free_keeps(roll: tuple[int, ...]) -> list[Keep]:
    """Every sub-multiset of ``roll`` whose dice all score, at its best value (M2, M3)."""
    counts = Counter(roll)
    faces = sorted(counts)
    out = []
    for sub in product(*(range(counts[f] + 1) for f in faces)):
        kept = tuple(f for f, c in zip(faces, sub, strict=True) for _ in range(c))
        parts = [_face_points(f, c) for f, c in zip(faces, sub, strict=True)]
        if kept and None not in parts:
            out.append((kept, sum(parts), HOT if len(kept) == len(roll) else FREE))
    return out


def morning_keeps(roll: tuple[int, ...], any_pairs: bool = False) -> list[Keep]:
    """Every legal keep of a Morning Roll roll (M2: any scoring sub-multiset, at its best
    value, M3); boxcars (three different pairs, M4) and the straight of six dice are 2500 and
    force a re-roll of all six (M5). ``any_pairs`` (M4 option): four of a kind and a pair, or
    six of a kind, are boxcars too, kept as such where 2500 is their best value (M3)."""
    out = _free_keeps(roll)
    shape = sorted(Counter(roll).values())
    pairs = shape == [2, 2, 2] or (any_pairs and shape in ([2, 4], [6]))
    best = max((pts for kept, pts, _kind in out if kept == roll), default=0)
    if len(roll) == 6 and (len(shape) == 6 or pairs) and best < 2500:
        out.append((roll, 2500, FORCED))
    return out


def farkle_keeps(roll: tuple[int, ...]) -> list[Keep]:
    """The one keep of a five-dice Farkle roll (F1: every scoring die): five 1s win (F4),
    1-2-3-4-5 on five dice is a Big Roll of 500 (F6), else each face at its best."""
    counts = Counter(roll)
    n = len(roll)
    if counts[1] == 5:
        return [(roll, 5000, WIN)]
    if n == 5 and sorted(roll) == [1, 2, 3, 4, 5]:
        return [(roll, 500, HOT)]
    kept: list[int] = []
    points = 0
    for face, c in sorted(counts.items()):
        if c >= 3:
            kept += [face] * c
            points += _of_a_kind(face, c)
        elif face in (1, 5):
            kept += [face] * c
            points += c * (100 if face == 1 else 50)
    if not kept:
        return []
    return [(tuple(kept), points, HOT if len(kept) == n else FREE)]


def farkle_free_keeps(roll: tuple[int, ...]) -> list[Keep]:
    """F1 option: any scoring dice may be kept; five 1s win (F4), and a Big Roll is the whole
    of a five-dice 1-2-3-4-5 (F6)."""
    if roll == (1, 1, 1, 1, 1):
        return [k for k in _free_keeps(roll) if len(k[0]) < 5] + [(roll, 5000, WIN)]
    if roll == (1, 2, 3, 4, 5):
        return [*_free_keeps(roll), (roll, 500, HOT)]
    return _free_keeps(roll)


GAMES: dict[str, tuple[int, Callable[[tuple[int, ...]], list[Keep]], int]] = {
    "morning-roll": (6, morning_keeps, 0),
    "morning-roll/three_pairs_any": (6, lambda roll: morning_keeps(roll, any_pairs=True), 0),
    "farkle-five": (5, farkle_keeps, 500),
    "farkle-five/free_keep": (5, farkle_free_keeps, 500),
}


@cache
def rolls(n: int) -> tuple[tuple[tuple[int, ...], float], ...]:
    """Every roll of ``n`` dice as its sorted faces, with its probability."""
    ways = Counter(tuple(sorted(r)) for r in product(range(1, 7), repeat=n))
    return tuple((r, w / 6**n) for r, w in ways.items())


class Solver:
    """Expected final turn points by backward induction on turn totals up to ``cap``; a state
    past the cap is valued at its total (the turn banked there).

    ``bank(t, hot)``: what stopping at ``t`` pays, ``None`` where stopping is not allowed
    (Farkle F2: totals ending in 50); off the board nothing below the entry (F7); a pass after
    every die scored costs the skipped turn, ``skip`` points (F3)."""

    def __init__(self, game: str, *, on_board: bool, cap: int, skip: float, f2: bool) -> None:
        self.n_dice, self.keeps, entry = GAMES[game]
        self.entry = 0 if on_board else entry
        self.skip, self.f2, self.top = skip, f2, cap // STEP
        size = self.top + 1
        self.R = {n: [0.0] * size for n in range(1, self.n_dice + 1)}
        groups = {n: self._groups(n) for n in self.R}
        for i in range(self.top, -1, -1):
            for n in self.R:
                self.R[n][i] = sum(p * max(self.after(o, i) for o in opts) for p, opts in groups[n])

    def _groups(self, n: int) -> list[tuple[float, tuple]]:
        """Rolls of ``n`` dice merged by what their keeps lead to: ``(kind, dice next, +i)``."""
        merged: Counter = Counter()
        for roll, p in rolls(n):
            opts = {
                (kind, n - len(kept) or self.n_dice, pts // STEP)
                for kept, pts, kind in self.keeps(roll)
            }
            if opts:  # a bust adds 0
                merged[tuple(sorted(opts))] += p
        return [(p, opts) for opts, p in merged.items()]

    def bank(self, t: int, hot: bool) -> float | None:
        if self.f2 and t % 100 == 50:
            return None
        return (t if t >= self.entry else 0.0) - (self.skip if hot else 0.0)

    def after(self, option: tuple[str, int, int], i: int) -> float:
        """Value of taking ``option`` on a roll made at total index ``i``."""
        kind, nxt, di = option
        j = i + di
        if kind == WIN or j > self.top:
            return float(j * STEP)
        roll = self.R[nxt][j]
        if kind == FORCED:
            return roll
        bank = self.bank(j * STEP, kind == HOT)
        return roll if bank is None else max(bank, roll)


def options(solver: Solver, roll: tuple[int, ...], banked: int) -> dict[tuple, float]:
    """``{(keep, 'bank' or 'roll', forced re-roll): value}`` of every move after ``roll``."""
    out = {}
    for kept, pts, kind in solver.keeps(tuple(sorted(roll))):
        t = banked + pts
        if kind == WIN:
            out[kept, "bank", False] = float(t)
            continue
        left = len(roll) - len(kept) or solver.n_dice
        out[kept, "roll", kind == FORCED] = solver.R[left][t // STEP]
        bank = None if kind == FORCED else solver.bank(t, kind == HOT)
        if bank is not None:
            out[kept, "bank", False] = bank
    return out


def json_key(option: dict) -> tuple:
    """An option of ``dicecam advise --json`` keyed as :func:`options` keys its moves."""
    return tuple(option["keep"]), option["then"], option["forced_reroll"]


@cache
def skip_value(game: str = "farkle-five", cap: int = 26000) -> float:
    """F3's skipped turn, valued as points per turn slot: ``lam`` with ``lam`` = the turn
    value of an on-board player whose hot-dice passes cost ``lam`` (plain fixed-point
    iteration). The turn a pass skips follows a bank, so it is played on the board."""
    lam = 0.0
    for _ in range(50):
        new = solver(game, True, cap, lam).R[5][0]
        if abs(new - lam) < 1e-11:
            return new
        lam = new
    raise AssertionError(f"no fixed point after 50 rounds: {lam}")


@cache
def solver(
    game: str, on_board: bool, cap: int, skip: float | None = None, f2: bool = True
) -> Solver:
    """A solved game; five-dice Farkle's skip defaults to :func:`skip_value`."""
    if game.startswith("morning-roll"):  # no entry score: on and off the board alike
        return solver_morning(game, cap)
    lam = skip_value(game) if skip is None else skip
    return Solver(game, on_board=on_board, cap=cap, skip=lam, f2=f2)


@cache
def solver_morning(game: str, cap: int) -> Solver:
    return Solver(game, on_board=True, cap=cap, skip=0.0, f2=False)


CAP = {"morning-roll": 40000, "farkle-five": 26000}
BOARD = [
    ("morning-roll", True),
    ("morning-roll", False),
    ("farkle-five", True),
    ("farkle-five", False),
]
