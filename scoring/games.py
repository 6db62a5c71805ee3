"""Look up a game's rules or its advisor by name, with house rules as keyword options."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from scoring.farkle import FarkleFive, FarkleRules, Greed, MorningRoll
from scoring.lowhigh import LowHigh
from scoring.solitaire import SolitaireDice
from scoring.strategy import FarkleAdvisor

__all__ = [
    "GAME_NAMES",
    "GAME_TITLES",
    "HOUSE_RULES",
    "HOUSE_RULE_CHOICES",
    "HOUSE_RULE_CHOICE_LABELS",
    "HOUSE_RULE_HINTS",
    "HOUSE_RULE_LABELS",
    "get_advisor",
    "get_game",
    "parse_house_rules",
    "unknown_game",
]

GAME_NAMES = ("morning-roll", "farkle-five", "greed", "solitaire-dice", "low-high")

GAME_TITLES: dict[str, str] = {
    "morning-roll": "Morning Roll",
    "farkle-five": "Five-dice Farkle",
    "greed": "Greed",
    "solitaire-dice": "Solitaire Dice",
    "low-high": "Low-High",
}
"""Each game of :data:`GAME_NAMES` by the name its rule text gives it, for a player to read."""

_CLASSES: dict[str, type] = {
    "morning-roll": MorningRoll,
    "farkle-five": FarkleFive,
    "greed": Greed,
    "solitaire-dice": SolitaireDice,
    "low-high": LowHigh,
}

HOUSE_RULES: dict[str, dict[str, Any]] = {
    "morning-roll": {"three_pairs_any": False},
    "farkle-five": {"free_keep": False},
    "greed": {},
    "solitaire-dice": {},
    "low-high": {"scoring": "dice", "cancel": "ascending", "target": 30},
}
"""Each game's house rules (the (option) items of READINGS.md) and their defaults."""

HOUSE_RULE_CHOICES: dict[str, dict[str, tuple[str, ...]]] = {
    "low-high": {"scoring": ("dice", "pips"), "cancel": ("ascending", "descending")},
}
"""The values a house rule of text takes (true/false and whole-number rules are not listed)."""

HOUSE_RULE_CHOICE_LABELS: dict[str, dict[str, dict[str, str]]] = {
    "low-high": {
        "scoring": {"dice": "Dice left, 1 point each", "pips": "Pips of the dice left"},
        "cancel": {"ascending": "Lowest good dice first", "descending": "Highest good dice first"},
    },
}
"""A player's name of each value of :data:`HOUSE_RULE_CHOICES` (for a menu; the value is what
a new turn's ``rules`` and /api/v1/score's ``rule`` take), from the game's rule text."""

HOUSE_RULE_LABELS: dict[str, dict[str, str]] = {
    "morning-roll": {"three_pairs_any": "Any three pairs are boxcars"},
    "farkle-five": {"free_keep": "Keep any scoring dice"},
    "low-high": {"scoring": "Score by", "cancel": "Cancel order (pips)", "target": "Points to win"},
}
"""A player's name of each house rule of :data:`HOUSE_RULES` (a short label for a menu)."""

HOUSE_RULE_HINTS: dict[str, dict[str, str]] = {
    "morning-roll": {
        "three_pairs_any": "Four of a kind with a pair, or six of a kind, score 2500 as three "
        "pairs too (as written: only three pairs of different faces).",
    },
    "farkle-five": {
        "free_keep": "Keep some of a roll's scoring dice and roll the others again, as in "
        "common Farkle (as written: every scoring die is kept).",
    },
    "low-high": {
        "scoring": "dice: each good die left scores 1, each bad die left loses 1; pips: good "
        "dice left score their pips, bad dice left lose theirs.",
        "cancel": "With pips scoring, bad dice cancel the lowest good dice first (as written) "
        "or the highest (lower scores).",
        "target": "The first to reach it at the end of a turn wins (30 as written).",
    },
}
"""One line on what each house rule changes, from READINGS.md and the game's rule text."""


def unknown_game(name: str) -> str:
    """What to say of a game name that is not one of :data:`GAME_NAMES`, with the likeliest
    meant one when the name is close to it.

    >>> unknown_game("farkle")
    "unknown game 'farkle' (did you mean 'farkle-five'?); expected one of: morning-roll, farkle-five, greed, solitaire-dice, low-high"
    """
    near = difflib.get_close_matches(str(name).strip().lower(), GAME_NAMES, n=1, cutoff=0.6)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return f"unknown game {name!r}{hint}; expected one of: {', '.join(GAME_NAMES)}"


_WHOLE_NUMBER = re.compile(r"-?\d+")
"""A house rule's value read as a whole number: what ``int`` takes (one sign, decimal digits)."""


def parse_house_rules(pairs: Iterable[str]) -> dict[str, Any]:
    """House rules written ``KEY=VALUE`` (the CLI's ``--rule``, the API's ``rule``) as
    keyword options of :func:`get_game`: true/false, whole numbers, else text.

    >>> parse_house_rules(["three_pairs_any=true", "target=40", "scoring=pips"])
    {'three_pairs_any': True, 'target': 40, 'scoring': 'pips'}

    Raises ``ValueError`` for an item that is not ``KEY=VALUE``.
    """
    if isinstance(pairs, str | bytes):
        raise ValueError(f"expected a list of KEY=VALUE house rules, got the string {pairs!r}")
    rules: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = str(pair).partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key:
            raise ValueError(f"expected a house rule as KEY=VALUE, got {pair!r}")
        low = value.lower()
        if low in ("true", "yes", "on"):
            rules[key] = True
        elif low in ("false", "no", "off"):
            rules[key] = False
        elif _WHOLE_NUMBER.fullmatch(low):
            rules[key] = int(low)
        else:
            rules[key] = value
    return rules


def get_game(name: str, **house_rules: Any) -> Any:
    """The rules object of a game.

    >>> get_game("morning-roll").n_dice
    6

    Raises ``ValueError`` naming the valid games, or the valid house rules of this game.
    """
    if not isinstance(name, str) or name not in _CLASSES:
        raise ValueError(unknown_game(name))
    allowed = HOUSE_RULES[name]
    unknown = sorted(set(house_rules) - set(allowed))
    if unknown:
        valid = ", ".join(allowed) or "none"
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""  # not a million
        raise ValueError(
            f"{name}: unknown house rule(s) {', '.join(unknown[:5])}{more}; valid: {valid}"
        )
    for key, value in house_rules.items():
        if isinstance(allowed[key], bool) and not isinstance(value, bool):
            raise ValueError(f"{name}: house rule {key} must be true or false, got {value!r}")
    return _CLASSES[name](**house_rules)


def get_advisor(name: str, *, on_board: bool = True, **house_rules: Any) -> FarkleAdvisor:
    """The exact strategy advisor of a Farkle-family game (solved once per process, cached).

    ``on_board=False``: the player has not yet made the entry score (F7, G3), so a turn below
    it banks nothing.
    """
    game = get_game(name, **house_rules)
    if not isinstance(game, FarkleRules):
        farkle = ", ".join(
            n
            for n in GAME_NAMES
            if isinstance(_CLASSES[n], type) and issubclass(_CLASSES[n], FarkleRules)
        )
        raise ValueError(f"no strategy advisor for {name!r}; advisors exist for: {farkle}")
    return _advisor(game, bool(on_board))


@lru_cache(maxsize=32)
def _advisor(game: FarkleRules, on_board: bool) -> FarkleAdvisor:
    return FarkleAdvisor(game, on_board=on_board)
