"""An audit of the strategy advisor for Morning Roll and five-dice Farkle: both games scored
here from their rule texts (morning-roll.txt, farkle-five-dice.txt, READINGS.md M1-M7 and
F1-F7) and solved by plain backward induction over ``(dice to roll, turn total)``, then
compared with what the advisor says: ``roll_value``, and every option of ``advise`` (keep,
bank or roll, value, the move advised). Nothing here calls the rules' keeps/score or the
advisor's helpers."""

import json
from collections import Counter
from functools import cache
from itertools import product

import pytest

from scoring import get_advisor
from service.cli import main

STEP = 50
FREE, HOT, FORCED, WIN = "free", "hot", "forced", "win"
# a keep: (kept dice sorted, points, kind); kind says what may follow it


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


def _free_keeps(roll: tuple[int, ...]) -> list[tuple[tuple[int, ...], int, str]]:
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


def morning_keeps(
    roll: tuple[int, ...], any_pairs: bool = False
) -> list[tuple[tuple[int, ...], int, str]]:
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


def farkle_keeps(roll: tuple[int, ...]) -> list[tuple[tuple[int, ...], int, str]]:
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


def farkle_free_keeps(roll: tuple[int, ...]) -> list[tuple[tuple[int, ...], int, str]]:
    """F1 option: any scoring dice may be kept; five 1s win (F4), and a Big Roll is the whole
    of a five-dice 1-2-3-4-5 (F6)."""
    if roll == (1, 1, 1, 1, 1):
        return [k for k in _free_keeps(roll) if len(k[0]) < 5] + [(roll, 5000, WIN)]
    if roll == (1, 2, 3, 4, 5):
        return [*_free_keeps(roll), (roll, 500, HOT)]
    return _free_keeps(roll)


GAMES = {
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
def solver(game: str, on_board: bool, cap: int, skip: float | None = None, f2: bool = True):
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


@pytest.mark.parametrize(
    ("game", "roll", "keeps"),
    [
        # morning-roll.txt's examples: 1 of 1,2,2,3,5,6 is 100; 1 and 4s of 1,4,4,4,6 are 500
        ("morning-roll", (1, 2, 2, 3, 5, 6), {(1,): 100, (5,): 50, (1, 5): 150}),
        ("morning-roll", (1, 4, 4, 4, 6), {(1,): 100, (4, 4, 4): 400, (1, 4, 4, 4): 500}),
        ("morning-roll", (2, 2, 3, 4, 6), {}),  # Tom busts
        ("morning-roll", (3, 4), {}),  # Mike busts
        # M3: four 1s as 2000; M1: 1s of a triple as singles too; M6: a pair of 5s is 100
        (
            "morning-roll",
            (1, 1, 1, 1),
            {(1,): 100, (1, 1): 200, (1, 1, 1): 1000, (1, 1, 1, 1): 2000},
        ),
        ("morning-roll", (5, 5, 2), {(5,): 50, (5, 5): 100}),
        ("morning-roll", (6, 6, 6, 6, 6, 6), {(6,) * k: 600 * 2 ** (k - 3) for k in (3, 4, 5, 6)}),
        # M4: four of a kind and a pair is no boxcars; M2: three of the four 4s keep as 400
        (
            "morning-roll",
            (2, 4, 4, 4, 4, 2),
            {(4, 4, 4): 400, (4, 4, 4, 4): 800},
        ),
        # farkle-five-dice.txt: three twos, a five and a one are 350 (all kept, F1)
        ("farkle-five", (2, 2, 2, 5, 1), {(1, 2, 2, 2, 5): 350}),
        ("farkle-five", (4, 4, 4, 2, 6), {(4, 4, 4): 400}),
        ("farkle-five", (1, 1, 1, 1, 5), {(1, 1, 1, 1, 5): 2050}),  # four 1s 2000
        ("farkle-five", (5, 5, 5, 5, 5), {(5,) * 5: 2000}),  # F5
        ("farkle-five", (2, 2, 2, 2, 2), {(2,) * 5: 800}),
        ("farkle-five", (1, 2, 3, 4, 5), {(1, 2, 3, 4, 5): 500}),  # F6: Big Roll
        ("farkle-five", (1, 2, 3, 4), {(1,): 100}),  # no Big Roll on four dice
        ("farkle-five", (2, 3, 4, 6, 6), {}),
    ],
)
def test_the_scorer_here_follows_the_texts(game, roll, keeps):
    got = {kept: pts for kept, pts, kind in GAMES[game][1](tuple(sorted(roll)))}
    assert got == {tuple(sorted(k)): v for k, v in keeps.items()}


def test_the_scorer_here_forces_a_re_roll_after_2500_and_wins_on_five_1s():
    """M5: boxcars and the straight keep as 2500 and roll on; from a straight the 1 and/or the
    5 alone are ordinary keeps. F4: five 1s win with 5000."""
    straight = {(k, p, kind) for k, p, kind in morning_keeps((1, 2, 3, 4, 5, 6))}
    assert straight == {
        ((1, 2, 3, 4, 5, 6), 2500, FORCED),
        ((1,), 100, FREE),
        ((5,), 50, FREE),
        ((1, 5), 150, FREE),
    }
    boxcars = {(k, p, kind) for k, p, kind in morning_keeps((1, 1, 3, 3, 6, 6))}
    assert boxcars == {((1, 1, 3, 3, 6, 6), 2500, FORCED), ((1,), 100, FREE), ((1, 1), 200, FREE)}
    assert farkle_keeps((1, 1, 1, 1, 1)) == [((1, 1, 1, 1, 1), 5000, WIN)]


@pytest.mark.parametrize(("game", "on_board"), BOARD)
def test_roll_values_and_the_turn_score_match(game, on_board):
    """``R(n, t)`` for every dice count, totals 0 to 3000 (on and off the board: Morning Roll
    has no entry score, so both are the same)."""
    mine = solver(game, on_board, CAP[game])
    adv = get_advisor(game, on_board=on_board)
    for n in mine.R:
        for t in range(0, 3050, STEP):
            assert adv.roll_value(n, t) == pytest.approx(mine.R[n][t // STEP], abs=1e-9), (n, t)
    assert adv.expected_turn_score == pytest.approx(mine.R[mine.n_dice][0], abs=1e-9)
    assert adv.bank_value(450) == mine.bank(450, False)
    assert adv.bank_value(1000, hot=True) == pytest.approx(mine.bank(1000, True), abs=1e-9)


@pytest.mark.parametrize(("game", "on_board"), BOARD)
def test_every_option_advised_matches(game, on_board):
    """Each roll of 1 to 3 dice at totals around the thresholds, and of more dice at a few:
    the same keeps, each keep's bank and roll values, and the same best move."""
    mine = solver(game, on_board, CAP[game])
    adv = get_advisor(game, on_board=on_board)
    near = [0, 50, 100, 150, 200, 250, 300, 350, 400, 450, 500, 550, 1000, 1450, 1550, 3000]
    checked = 0
    for n in range(1, mine.n_dice + 1):
        for roll, _p in rolls(n):
            for banked in near if n <= 3 else (0, 1000):
                want = options(mine, roll, banked)
                got = adv.advise(list(roll), banked)
                assert {
                    (o.keep, o.then, o.forced_reroll): o.expected for o in got
                } == pytest.approx(want, abs=1e-9)
                if want:
                    assert got[0].expected == pytest.approx(max(want.values()), abs=1e-9)
                    checked += 1
    assert checked > 1000


@pytest.mark.parametrize("on_board", [True, False])
def test_the_skipped_turn_is_worth_an_on_board_turn(on_board):
    """F3 valued as points per turn slot: on the board, the skipped turn is worth the turn
    itself. A pass worth making banks 500 or more (F7), so the turn it skips is an on-board
    turn for a player not yet on the board too (the advisor used the fixed point of an
    off-board turn there, 199.35, and advised banking hot dice at 1500 and 1600)."""
    lam = skip_value()
    assert get_advisor("farkle-five", on_board=on_board).skip_penalty == pytest.approx(
        lam, abs=1e-9
    )
    assert lam == pytest.approx(solver("farkle-five", True, CAP["farkle-five"]).R[5][0], abs=1e-9)


@pytest.mark.parametrize(("banked", "roll"), [(1400, (1,)), (1300, (1, 1)), (500, (1, 1, 1))])
def test_not_on_board_hot_dice_at_1500_roll_on(banked, roll, capsys):
    """1500 on hot dice: banking is worth 1500 - lam (on the board from then on), rolling five
    more (1289.66) is worth more; ``dicecam advise --not-on-board`` says so."""
    mine = options(solver("farkle-five", False, CAP["farkle-five"]), roll, banked)
    assert mine[roll, "bank", False] == pytest.approx(1500 - skip_value(), abs=1e-9)
    assert mine[roll, "roll", False] > mine[roll, "bank", False]
    args = ["advise", "--game", "farkle-five", "--not-on-board", "--json"]
    assert main([*args, "--banked", str(banked), *map(str, roll)]) == 0
    got = json.loads(capsys.readouterr().out)["options"]
    assert [(tuple(o["keep"]), o["then"]) for o in got] == [(roll, "roll"), (roll, "bank")]
    assert {json_key(o): o["expected"] for o in got} == pytest.approx(mine, abs=1e-9)


def test_morning_roll_boxcars_and_straight_from_the_cli(capsys):
    """The 2500 combos offer only the forced re-roll, worth R(6, t + 2500); the straight's
    1 and 5 may be kept alone and banked (M5)."""
    mine = solver("morning-roll", True, CAP["morning-roll"])
    for roll in ((2, 2, 4, 4, 6, 6), (1, 2, 3, 4, 5, 6)):
        assert main(["advise", "--json", "--banked", "300", *map(str, roll)]) == 0
        got = json.loads(capsys.readouterr().out)["options"]
        combo = [o for o in got if o["forced_reroll"]]
        assert [(o["keep"], o["then"]) for o in combo] == [(list(roll), "roll")]
        assert combo[0]["expected"] == pytest.approx(mine.R[6][(300 + 2500) // STEP], abs=1e-9)
        assert {json_key(o): o["expected"] for o in got} == pytest.approx(
            options(mine, roll, 300), abs=1e-9
        )


@pytest.mark.parametrize("game", ["morning-roll", "farkle-five"])
def test_a_higher_cap_changes_no_value(game):
    """Past the cap a turn is valued at its total; a cap a quarter (Morning Roll) or twice
    (Farkle) higher gives the same values to 1e-9."""
    cap = CAP[game]
    low, high = (
        solver(game, True, cap),
        solver(game, True, cap * 5 // 4 if game == "morning-roll" else 2 * cap),
    )
    for n in low.R:
        for i in range(0, 3000 // STEP + 1):
            assert low.R[n][i] == pytest.approx(high.R[n][i], abs=1e-9)


def test_a_solver_that_forgets_f2_disagrees():
    """The comparison has teeth: banking totals ending in 50 (F2 left out) changes values
    and advice the advisor gives."""
    broken = solver("farkle-five", True, CAP["farkle-five"], f2=False)
    adv = get_advisor("farkle-five")
    assert abs(adv.expected_turn_score - broken.R[5][0]) > 1
    want = options(broken, (1, 5, 2), 0)
    got = {(o.keep, o.then) for o in adv.advise([1, 5, 2], 0)}
    assert set(want) == {((1, 5), "roll", False), ((1, 5), "bank", False)}
    assert got == {((1, 5), "roll")}


@pytest.mark.parametrize(
    ("variant", "rules", "on_board"),
    [
        ("morning-roll/three_pairs_any", {"three_pairs_any": True}, True),
        ("farkle-five/free_keep", {"free_keep": True}, True),
        ("farkle-five/free_keep", {"free_keep": True}, False),
    ],
)
def test_house_rules_match(variant, rules, on_board):
    """The (option) readings: four of a kind and a pair, and six of a kind, as boxcars (M4);
    any scoring dice kept in five-dice Farkle (F1). Roll values, the skip penalty and every
    option on 1 to 3 dice (and 4 to 6 at two totals)."""
    game = variant.split("/")[0]
    mine = solver(variant, on_board, CAP[game])
    adv = get_advisor(game, on_board=on_board, **rules)
    assert adv.skip_penalty == pytest.approx(mine.skip, abs=1e-9)
    for n in mine.R:
        for t in range(0, 3050, 250):
            assert adv.roll_value(n, t) == pytest.approx(mine.R[n][t // STEP], abs=1e-9), (n, t)
    for n in mine.R:
        for roll, _p in rolls(n):
            for banked in (0, 150, 450, 1000) if n <= 3 else (0, 1000):
                want = options(mine, roll, banked)
                got = adv.advise(list(roll), banked)
                assert {(o.keep, o.then, o.forced_reroll): o.expected for o in got} == (
                    pytest.approx(want, abs=1e-9)
                ), (roll, banked)
