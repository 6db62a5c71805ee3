"""Rules of the five dice games dicecam serves, and the exact strategy advisor.

Pure Python, no I/O: nothing here imports from ``vision`` or ``service``.

>>> from scoring import get_game, get_advisor
>>> get_game("morning-roll").best_score([1, 1, 1, 5, 2, 3])
1050
>>> round(get_advisor("morning-roll").expected_turn_score, 2)
641.06
"""

from scoring.farkle import FarkleFive, FarkleRules, Greed, Keep, MorningRoll
from scoring.games import (
    GAME_NAMES,
    HOUSE_RULE_CHOICES,
    HOUSE_RULES,
    get_advisor,
    get_game,
    parse_house_rules,
    unknown_game,
)
from scoring.lowhigh import LowHigh, LowHighGame, LowHighTurn
from scoring.solitaire import COMBO_VALUES, SolitaireDice, SolitaireGame, SolitaireSheet
from scoring.strategy import FarkleAdvisor, Option
from scoring.turn import FarkleGame, FarkleTurn, ScoringError

__all__ = [
    "COMBO_VALUES",
    "GAME_NAMES",
    "HOUSE_RULES",
    "HOUSE_RULE_CHOICES",
    "FarkleAdvisor",
    "FarkleFive",
    "FarkleGame",
    "FarkleRules",
    "FarkleTurn",
    "Greed",
    "Keep",
    "LowHigh",
    "LowHighGame",
    "LowHighTurn",
    "MorningRoll",
    "Option",
    "ScoringError",
    "SolitaireDice",
    "SolitaireGame",
    "SolitaireSheet",
    "get_advisor",
    "get_game",
    "parse_house_rules",
    "unknown_game",
]
