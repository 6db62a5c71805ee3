"""``dicecam score``, ``dicecam advise`` and ``dicecam strategy``: the rules and the advisor.

dicecam score --game morning-roll --json 1 1 1 5 2 3
dicecam advise --game morning-roll --banked 200 5 1 2
dicecam strategy --game farkle-five --rule free_keep=true
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from service.cli import UsageError

__all__ = ["register"]

GAMES = ("morning-roll", "farkle-five", "greed", "solitaire-dice", "low-high")
FARKLE = ("morning-roll", "farkle-five", "greed")
_RULE_EXAMPLES = {  # one house rule of each game that has one (scoring.games.HOUSE_RULES)
    "morning-roll": "three_pairs_any=true",
    "farkle-five": "free_keep=true",
    "low-high": "scoring=pips",
}


def _add_common(p: argparse.ArgumentParser, games: tuple[str, ...]) -> None:
    """``--game`` (its help naming the games the command plays), ``--json`` and ``--rule``."""
    p.add_argument(
        "--game", default="morning-roll", help=f"one of: {', '.join(games)} (default morning-roll)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a house rule (an '(option)' of the game's rules), repeatable, e.g. "
        f"{', '.join(_RULE_EXAMPLES[g] for g in games if g in _RULE_EXAMPLES)} (default: none, "
        "the rules as written; an unknown one is refused with the game's list)",
    )


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "score",
        help="score a roll: bust, best points, every legal keep",
        description="Score a roll under the game's rules: whether it busts, its best points and "
        "every legal move (a keep; Solitaire Dice: a split).",
    )
    _add_common(p, GAMES)
    p.add_argument("dice", nargs="*", help="die faces, e.g. 1 1 1 5 2 3")
    p.add_argument(
        "--rejects",
        default="",
        metavar="FACES",
        help="solitaire-dice: faces rejected so far, e.g. 1,1,5,6 (default: none)",
    )
    p.add_argument(
        "--highest-kept",
        default="0",
        metavar="FACE",
        help="low-high: highest face kept this turn (default 0: none)",
    )
    p.set_defaults(func=run_score)

    p = subparsers.add_parser(
        "advise",
        help="rank every keep then bank/roll by expected turn score",
        description="Rank every keep of the roll, each followed by bank or roll, by the exact "
        "expected final score of the turn, best first.",
    )
    _add_common(p, FARKLE)
    p.add_argument("dice", nargs="*", help="die faces of the roll just made")
    p.add_argument(
        "--banked", default="0", metavar="POINTS", help="points kept earlier this turn (default 0)"
    )
    p.add_argument(
        "--not-on-board",
        action="store_true",
        help="player has not made the entry score yet (farkle-five 500, greed 300; a turn below "
        "it banks nothing)",
    )
    p.set_defaults(func=run_advise)

    p = subparsers.add_parser(
        "strategy",
        help="expected turn score and bank thresholds",
        description="The expected score of an optimally played turn, and from how many points "
        "kept banking beats rolling, by dice left to roll.",
    )
    _add_common(p, FARKLE)
    p.add_argument(
        "--not-on-board",
        action="store_true",
        help="player has not made the entry score yet (farkle-five 500, greed 300; a turn below "
        "it banks nothing)",
    )
    p.set_defaults(func=run_strategy)


# --- parsing -----------------------------------------------------------------------------------
def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"{what} must be an integer, got {text!r}") from None


def _dice(tokens: list[str]) -> list[int]:
    out = []
    for token in tokens:
        for part in token.replace(",", " ").split():
            if not (part.isascii() and part.isdigit()):  # '²' is a digit int() refuses
                raise UsageError(f"a die face must be a number 1 to 6, got {part!r}")
            out.append(int(part))
    if not out:
        raise UsageError("no dice given: list the faces, e.g. 1 1 1 5 2 3")
    return out


def _rules(pairs: list[str]) -> dict[str, Any]:
    from scoring import parse_house_rules

    try:
        return parse_house_rules(pairs)
    except ValueError as exc:
        raise UsageError(f"--rule: {exc}") from None


def _game(args: argparse.Namespace) -> Any:
    from scoring import get_game

    try:
        return get_game(args.game, **_rules(args.rule))
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _print_json(obj: Any) -> None:
    print(json.dumps(obj))


# --- commands ----------------------------------------------------------------------------------
def run_score(args: argparse.Namespace) -> int:
    from scoring import SolitaireSheet

    game = _game(args)
    dice = _dice(args.dice)
    try:
        if args.game == "solitaire-dice":
            sheet = SolitaireSheet()
            for face in _dice([args.rejects]) if args.rejects.strip() else []:
                sheet.add_reject(face)
            result = game.score(dice, sheet)
        elif args.game == "low-high":
            result = game.score(dice, _int(args.highest_kept, "--highest-kept"))
        else:
            result = game.score(dice)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        _print_json(result)
        return 0
    print(f"{args.game}: {' '.join(map(str, result['dice']))}")
    if args.game == "solitaire-dice":
        print(f"{'reject':>6}  combos   score after")
        for o in result["splits"]:
            rej = "free" if o["free_ride"] else str(o["reject"])
            end = "  (ends game)" if o["ends_game"] else ""
            combos = f"{o['combos'][0]}+{o['combos'][1]}"
            print(f"{rej:>6}  {combos:<7}  {o['score_after']:>6}{end}")
    elif args.game == "low-high":
        print(f"bad: {result['bad'] or 'none'}")
        for o in result["sets"]:
            print(f"  keep {o['count']} x {o['face']}")
        if result["turn_over"]:
            print("every die went bad: the turn is over")
    elif result["bust"]:
        print("BUST: no scoring dice")
    else:
        print(f"best: {result['max_points']} points")
        print(f"{'keep':<20} {'points':>6}")
        for k in result["keeps"]:
            note = "  forced re-roll" if k["forced_reroll"] else ""
            note += "  wins the game" if k["wins_game"] else ""
            print(f"{' '.join(map(str, k['dice'])):<20} {k['points']:>6}{note}")
    return 0


def _advisor(args: argparse.Namespace) -> Any:
    from scoring import get_advisor, unknown_game

    if args.game not in GAMES:
        raise UsageError(unknown_game(args.game))
    if args.game not in FARKLE:
        raise UsageError(
            f"no strategy advisor for {args.game!r}; advisors exist for: {', '.join(FARKLE)}"
        )
    _game(args)  # a house rule this game lacks ('on_board' too) is refused as `score` does
    try:
        return get_advisor(args.game, on_board=not args.not_on_board, **_rules(args.rule))
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def run_advise(args: argparse.Namespace) -> int:
    advisor = _advisor(args)
    dice = _dice(args.dice)
    banked = _int(args.banked, "--banked")
    try:
        options = advisor.advise(dice, banked)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        _print_json(
            {
                "game": args.game,
                "dice": sorted(dice),
                "banked": banked,
                "bust": not options,
                "options": [o.to_dict() for o in options],
            }
        )
        return 0
    print(f"{args.game}: roll {' '.join(map(str, sorted(dice)))} with {banked} kept this turn")
    if not options:
        print("BUST: the turn scores 0")
        return 0
    print(f"{'#':>2}  {'keep':<14} {'then':<5} {'points':>6} {'expected':>10}")
    for rank, o in enumerate(options, 1):
        keep = " ".join(map(str, o.keep))
        note = _note(advisor, o, len(dice), banked)
        print(f"{rank:>2}  {keep:<14} {o.then:<5} {o.points:>6} {o.expected:>10.2f}{note}")
    return 0


def _note(advisor: Any, option: Any, n_dice: int, banked: int) -> str:
    """Why an option's expected value is not plain points: a forced re-roll, a win, a pass
    that skips a turn (F3), a bank below the entry score (F7, G3)."""
    game = advisor.game
    if option.forced_reroll:
        return "  forced re-roll"
    if option.then != "bank":
        return ""
    if any(k.wins_game and k.dice == option.keep for k in game.keeps(option.keep)):
        return "  wins the game"
    if not advisor.on_board and banked + option.points < game.entry_threshold:
        return f"  below the entry score {game.entry_threshold}: banks nothing"
    if game.skip_after_pass and len(option.keep) == n_dice:
        return f"  skips your next turn (worth {advisor.skip_penalty:.2f})"
    return ""


def run_strategy(args: argparse.Namespace) -> int:
    advisor = _advisor(args)
    summary = advisor.to_dict()
    if args.json:
        _print_json(summary)
        return 0
    print(f"{args.game}: expected score of an optimal turn {summary['expected_turn_score']:.2f}")
    if advisor.skip_penalty:
        print(f"(a pass on hot dice costs a turn, valued at {advisor.skip_penalty:.2f} points)")
    print(f"banking is optimal wherever allowed from {summary['cutoff']} points (proved cut-off)")
    print(f"{'dice to roll':>12}  {'bank at or above':>16}  {'bust chance':>11}")
    for n, t in summary["bank_thresholds"].items():
        print(f"{n:>12}  {t:>16}  {summary['bust_chance'][n]:>11.4f}")
    return 0
