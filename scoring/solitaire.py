"""Solitaire Dice: split five dice into a reject and two combos; score sheets; shared rolls.

>>> from scoring import get_game
>>> game = get_game("solitaire-dice")
>>> [o["combos"] for o in game.options([1, 4, 4, 4, 6]) if o["reject"] == 1]
[[8, 10]]
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from types import MappingProxyType
from typing import Any

from scoring.dice import as_int, check_dice

__all__ = ["COMBO_VALUES", "SolitaireDice", "SolitaireGame", "SolitaireSheet"]

COMBO_VALUES = {2: 100, 12: 100, 3: 70, 11: 70, 4: 60, 10: 60, 5: 50, 9: 50, 6: 40, 8: 40, 7: 30}
"""Points per mark past the fifth (S1)."""
OPENING_COST = 200
MAX_REJECTS = 7
"""A face may be rejected seven times; the eighth ends the player's game (S4)."""


def _pairings(four: tuple[int, ...]) -> set[tuple[int, int]]:
    a, b, c, d = four
    return {
        tuple(sorted((a + b, c + d))),
        tuple(sorted((a + c, b + d))),
        tuple(sorted((a + d, b + c))),
    }  # type: ignore[return-value]


def _split_choice(reject: Any, combos: Any) -> tuple[int | None, tuple[int, ...]]:
    """``(reject, sorted combos)`` as plain ints; ``ValueError`` naming what was expected."""
    face = None if reject is None else as_int(reject)
    if reject is not None and (face is None or not 1 <= face <= 6):
        raise ValueError(f"expected a reject face 1 to 6 (None: a free ride), got {reject!r}")
    sums = None if isinstance(combos, str | bytes) else _ints(combos)
    if sums is None or len(sums) != 2 or not all(2 <= s <= 12 for s in sums):
        raise ValueError(f"expected two combo sums, each 2 to 12, got {combos!r}")
    return face, tuple(sorted(sums))


def _counts(given: Any, keys: range, what: str, span: str) -> dict[int, int]:
    """``{key: count}`` for every key, from ``given`` (missing keys 0); ``ValueError`` for a
    key off ``keys`` or a count that is not a whole number from 0."""
    counts = dict.fromkeys(keys, 0)
    if given is None:
        return counts
    if not isinstance(given, Mapping):
        raise ValueError(f"expected a mapping of {what} to count, got {given!r}")
    for key, count in given.items():
        if as_int(key) not in counts:
            raise ValueError(f"expected a {what} {span}, got {key!r}")
        if as_int(count) is None or count < 0:
            raise ValueError(f"expected a whole number from 0 for {what} {key}, got {count!r}")
        counts[int(key)] = int(count)
    return counts


def _ints(values: Any) -> list[int] | None:
    try:
        out = [as_int(v) for v in values]
    except TypeError:
        return None
    return None if None in out else out  # type: ignore[return-value]


class SolitaireSheet:
    """One player's score pad: reject marks per face and marks per combo sum (2 to 12).

    ``rejects`` and ``marks`` are read-only views: the sheet changes only through
    :meth:`apply` and :meth:`add_reject`. A sheet carried over from earlier rolls is made with
    its counts, which are checked (faces 1 to 6, three of them at most, none past its eighth
    reject, S3-S4; totals 2 to 12; whole numbers from 0).

    Example:
        >>> sheet = SolitaireSheet(rejects={1: 7, 5: 1}, marks={7: 6})
        >>> sheet.score, sheet.reject_faces
        (30, [1, 5])
        >>> sheet.marks[7] = 99
        Traceback (most recent call last):
        ...
        TypeError: 'mappingproxy' object does not support item assignment
    """

    def __init__(
        self,
        rejects: Mapping[int, int] | None = None,
        marks: Mapping[int, int] | None = None,
        free_rides: int = 0,
    ) -> None:
        self._rejects = _counts(rejects, range(1, 7), "reject face", "1 to 6")
        self._marks = _counts(marks, range(2, 13), "combo total", "2 to 12")
        faces = [f for f, c in self._rejects.items() if c]
        if len(faces) > 3:
            raise ValueError(f"a sheet has three reject faces at most (S3), got {faces}")
        if any(c > MAX_REJECTS + 1 for c in self._rejects.values()) or (
            sum(c > MAX_REJECTS for c in self._rejects.values()) > 1
        ):
            raise ValueError(
                "the eighth reject of one face ends the game (S4): expected 8 rejects of one "
                f"face at most, and of one face only, got {dict(rejects or {})}"
            )
        if as_int(free_rides) is None or free_rides < 0:
            raise ValueError(f"expected free_rides a whole number from 0, got {free_rides!r}")
        self._free_rides = int(free_rides)
        self._turns = 0

    @property
    def rejects(self) -> Mapping[int, int]:
        """Reject marks per face 1 to 6 (read-only)."""
        return MappingProxyType(self._rejects)

    @property
    def marks(self) -> Mapping[int, int]:
        """Marks per combo total 2 to 12 (read-only)."""
        return MappingProxyType(self._marks)

    @property
    def free_rides(self) -> int:
        """Splits made with no reject (S3)."""
        return self._free_rides

    @property
    def turns(self) -> int:
        """Splits marked through :meth:`apply`."""
        return self._turns

    def add_reject(self, face: int) -> None:
        """Mark one reject of ``face`` (as a sheet carried over from earlier rolls). Raises
        ``ValueError`` for a face that is not 1 to 6, or a fourth reject face (S3).

        Example:
            >>> sheet = SolitaireSheet()
            >>> for face in (1, 1, 5):
            ...     sheet.add_reject(face)
            >>> sheet.reject_faces
            [1, 5]
        """
        given, face = face, as_int(face)
        if face is None or not 1 <= face <= 6:
            raise ValueError(f"a reject face must be 1 to 6, got {given!r}")
        if self.finished:
            raise ValueError(
                f"this sheet's game is over (eighth reject of one face, S4): "
                f"no reject of {face} can follow"
            )
        if face not in self.reject_faces and len(self.reject_faces) == 3:
            raise ValueError(
                f"a sheet has three reject faces at most, {self.reject_faces}; "
                f"{face} would be a fourth (S3)"
            )
        self._rejects[face] += 1

    @property
    def reject_faces(self) -> list[int]:
        """Faces rejected at least once, in face order (three at most)."""
        return [f for f, c in self.rejects.items() if c]

    @property
    def finished(self) -> bool:
        """The eighth reject of one face ends this player's game (S4)."""
        return any(c > MAX_REJECTS for c in self.rejects.values())

    @staticmethod
    def combo_score(total: int, marks: int) -> int:
        """Score of one combo row: -200 while opened with 1-4 marks, 0 at 5, then value per
        mark for marks 6 to 10; the 11th and later add nothing (S2). Raises ``ValueError``
        for a total that is not 2 to 12 or a count of marks that is not a whole number."""
        if as_int(total) not in COMBO_VALUES:
            raise ValueError(f"a combo total must be 2 to 12, got {total!r}")
        if as_int(marks) is None or marks < 0:
            raise ValueError(f"a combo's marks must be a whole number from 0, got {marks!r}")
        if marks == 0:
            return 0
        if marks < 5:
            return -OPENING_COST
        return COMBO_VALUES[total] * (min(marks, 10) - 5)

    @property
    def score(self) -> int:
        return sum(self.combo_score(s, m) for s, m in self.marks.items())

    def options(self, dice: Any) -> list[dict[str, Any]]:
        """Every legal split of a 5-dice roll for this sheet, distinct, as dicts:
        ``{"reject": face or None, "combos": [a, b], "free_ride": bool, "ends_game": bool,
        "score_after": int}``. Raises ``ValueError`` for a bad roll or a finished sheet."""
        roll = check_dice(dice, exact=5)
        if self.finished:
            raise ValueError("this player's game is over (eighth reject of one face)")
        faces = self.reject_faces
        allowed = set(roll) if len(faces) < 3 else set(roll) & set(faces)
        out: dict[tuple, dict[str, Any]] = {}
        if allowed:
            for reject in sorted(allowed):
                rest = list(roll)
                rest.remove(reject)
                for combos in sorted(_pairings(tuple(rest))):
                    out[(reject, combos)] = self._option(reject, combos)
        else:  # free ride: any four dice make the two combos, no reject mark (S3)
            for four in combinations(roll, 4):
                for combos in _pairings(four):
                    out[(None, combos)] = self._option(None, combos)
        return [out[k] for k in sorted(out, key=lambda k: (k[0] or 0, k[1]))]

    def _option(self, reject: int | None, combos: tuple[int, int]) -> dict[str, Any]:
        marks = dict(self.marks)
        for s in combos:
            marks[s] += 1
        after = sum(self.combo_score(s, m) for s, m in marks.items())
        ends = reject is not None and self.rejects[reject] + 1 > MAX_REJECTS
        return {
            "reject": reject,
            "combos": list(combos),
            "free_ride": reject is None,
            "ends_game": ends,
            "score_after": after,
        }

    def apply(self, dice: Any, reject: int | None, combos: Any) -> dict[str, Any]:
        """Mark a split chosen from :meth:`options`; raises ``ValueError`` if it is not legal
        (``reject`` is a face 1 to 6, or None for a free ride; ``combos`` two sums 2 to 12)."""
        want = _split_choice(reject, combos)
        legal = {(o["reject"], tuple(o["combos"])): o for o in self.options(dice)}
        if want not in legal:
            shown = ", ".join(f"reject {r} combos {list(c)}" for r, c in legal)
            raise ValueError(
                f"reject {reject} with combos {list(want[1])} is not legal; legal: {shown}"
            )
        if want[0] is None:
            self._free_rides += 1
        else:
            self._rejects[want[0]] += 1
        for s in want[1]:
            self._marks[s] += 1
        self._turns += 1
        return legal[want]

    def to_dict(self) -> dict[str, Any]:
        return {
            "rejects": {str(k): v for k, v in self.rejects.items()},
            "marks": {str(k): v for k, v in self.marks.items()},
            "free_rides": self.free_rides,
            "score": self.score,
            "finished": self.finished,
        }


class SolitaireDice:
    """The rules object: ``options(dice, sheet=None)`` lists the splits a roll allows."""

    name = "solitaire-dice"
    n_dice = 5
    house_rules: dict[str, Any] = {}

    def check(self, dice: Any) -> tuple[int, ...]:
        try:
            return check_dice(dice, exact=5)
        except ValueError as exc:
            raise ValueError(f"{self.name}: {exc}") from None

    def options(self, dice: Any, sheet: SolitaireSheet | None = None) -> list[dict[str, Any]]:
        """Legal splits of ``dice`` for ``sheet`` (a fresh sheet if omitted)."""
        self.check(dice)
        return (sheet or SolitaireSheet()).options(dice)

    def new_sheet(self) -> SolitaireSheet:
        return SolitaireSheet()

    def score(self, dice: Any, sheet: SolitaireSheet | None = None) -> dict[str, Any]:
        """JSON-ready summary of a roll: its splits."""
        return {
            "game": self.name,
            "dice": list(self.check(dice)),
            "splits": self.options(dice, sheet),
        }


class SolitaireGame:
    """Any number of players on the same rolls; a player's game ends at an eighth reject, the
    game when every player's has; the highest score wins."""

    def __init__(self, players: list[str]) -> None:
        if isinstance(players, str | bytes) or not players or len(set(players)) != len(players):
            raise ValueError(f"expected a list of distinct player names, got {players!r}")
        self.sheets = {p: SolitaireSheet() for p in players}
        self.roll: tuple[int, ...] | None = None
        self._chosen: set[str] = set()

    @property
    def active(self) -> list[str]:
        return [p for p, s in self.sheets.items() if not s.finished]

    @property
    def finished(self) -> bool:
        return not self.active

    def new_roll(self, dice: Any) -> None:
        """Start a round with a shared roll; every active player must then :meth:`choose`."""
        if self.finished:
            raise ValueError("the game is over")
        waiting = [p for p in self.active if p not in self._chosen]
        if self.roll is not None and waiting:
            raise ValueError(f"players still to choose on the current roll: {waiting}")
        self.roll = check_dice(dice, exact=5)
        self._chosen = set()

    def choose(self, player: str, reject: int | None, combos: Any) -> dict[str, Any]:
        if player not in self.sheets:
            raise ValueError(f"unknown player {player!r}; players: {list(self.sheets)}")
        if self.roll is None:
            raise ValueError("no roll yet: call new_roll first")
        if player in self._chosen:
            raise ValueError(f"{player} has already chosen on this roll")
        if self.sheets[player].finished:
            raise ValueError(f"{player}'s game is over")
        result = self.sheets[player].apply(self.roll, reject, combos)
        self._chosen.add(player)
        return result

    @property
    def winners(self) -> list[str]:
        if not self.finished:
            return []
        top = max(s.score for s in self.sheets.values())
        return [p for p, s in self.sheets.items() if s.score == top]
