"""Dice validation and counting helpers shared by every game."""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Iterable, Iterator
from functools import lru_cache
from itertools import combinations_with_replacement
from math import factorial, prod

__all__ = [
    "as_int",
    "check_dice",
    "counts_of",
    "distinct_rolls",
    "is_submultiset",
    "roll_probability",
]

FACES = (1, 2, 3, 4, 5, 6)


def as_int(value: object) -> int | None:
    """``value`` as a plain int when it is a whole number (a numpy integer too), else None;
    a bool is not a number of dice or points.

    >>> as_int(3), as_int(True), as_int(2.0)
    (3, None, None)
    """
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def check_dice(
    dice: Iterable[object],
    *,
    min_count: int = 1,
    max_count: int | None = None,
    exact: int | None = None,
) -> tuple[int, ...]:
    """Validate a roll and return it sorted.

    Raises ``ValueError`` naming the problem: a face outside 1 to 6, a value that is not an
    integer, or a wrong number of dice.

    >>> check_dice([5, 1, 3])
    (1, 3, 5)
    """
    if isinstance(dice, str | bytes):
        raise ValueError(f"expected a sequence of die faces, got the string {dice!r}")
    if not isinstance(dice, Iterable):
        raise ValueError(f"expected a sequence of die faces, got {dice!r}")
    values = []
    for value in dice:
        face = as_int(value)
        if face is None:
            raise ValueError(f"a die face must be an integer 1 to 6, got {value!r}")
        if not 1 <= face <= 6:
            raise ValueError(f"a die face must be 1 to 6, got {face}")
        values.append(face)
    n = len(values)
    if exact is not None and n != exact:
        raise ValueError(f"expected {exact} dice, got {n}")
    if n < min_count:
        raise ValueError(f"expected at least {min_count} dice, got {n}")
    if max_count is not None and n > max_count:
        raise ValueError(f"expected at most {max_count} dice, got {n}")
    return tuple(sorted(values))


def counts_of(dice: Iterable[int]) -> tuple[int, int, int, int, int, int]:
    """Counts of faces 1..6: ``counts_of([1, 1, 5]) == (2, 0, 0, 0, 1, 0)``."""
    c = Counter(dice)
    return tuple(c.get(f, 0) for f in FACES)  # type: ignore[return-value]


def is_submultiset(part: Iterable[int], whole: Iterable[int]) -> bool:
    """Whether every die of ``part`` can be taken from ``whole``."""
    return not (Counter(part) - Counter(whole))


@lru_cache(maxsize=16)
def _rolls(n: int) -> tuple[tuple[tuple[int, ...], float], ...]:
    total = 6**n
    out = []
    for roll in combinations_with_replacement(FACES, n):
        ways = factorial(n) // prod(factorial(c) for c in counts_of(roll))
        out.append((roll, ways / total))
    return tuple(out)


def distinct_rolls(n: int) -> Iterator[tuple[tuple[int, ...], float]]:
    """Every distinct sorted roll of ``n`` dice with its probability (they sum to 1)."""
    return iter(_rolls(n))


def roll_probability(dice: Iterable[int]) -> float:
    """Probability of rolling exactly this multiset of faces."""
    roll = tuple(dice)
    n = len(roll)
    ways = factorial(n) // prod(factorial(c) for c in counts_of(roll))
    return ways / 6**n
