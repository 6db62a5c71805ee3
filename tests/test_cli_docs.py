"""The ``dicecam`` and ``python -m vision.train.X`` commands the docs quote run as written.

README.md, docs/*.md, the model cards (models/*.md) and datasets/**/*.md quote commands in code
spans and fenced code blocks. Each is checked against the real argparse parser, without running
it: the subcommand exists, every ``--option`` is one the (sub)command takes, spelled out in
full, and a value given to an option (or positional) with choices is one of them. Upper-case
words (``SET``, ``N``), ``...`` and ``<...>`` are placeholders and stand for any value.

A model card records how a shipped model was made; an option a later version renamed or removed
stays in its commands, and the card says so with a marker the test reads::

    <!-- cli-history: dicecam train --old-option: renamed to --new-option -->

(one per option; the words after the second colon are free, for the reader of the source).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest

from scoring import GAME_NAMES
from service.cli import build_parser, main

REPO = Path(__file__).resolve().parents[1]
DOCS = [
    REPO / "README.md",
    *sorted((REPO / "docs").glob("*.md")),
    *sorted((REPO / "models").glob("*.md")),
    *sorted((REPO / "datasets").rglob("*.md")),  # synth.md, README.md, the card's recipe parts
]

FENCE = re.compile(r"^[ \t]*```[^\n]*\n(.*?)^[ \t]*```", re.M | re.S)
SPAN = re.compile(r"`([^`]+)`")
# `dicecam WORDS` (also `.venv/bin/dicecam`), up to the end of its shell command, JSON string or
# code span (a fenced JSON block quotes spans in its strings)
DICECAM = re.compile(r"(?<![\w.-])dicecam[ \t]+([^\n\"`|;&#]*)")
TRAIN_MODULE = re.compile(r"python3? -m (vision\.train\.\w+)([^\n\"`|;&#]*)")
HISTORY = re.compile(r"<!--\s*cli-history:\s*(dicecam [a-z ]+?|python -m [\w.]+)\s+(--[\w-]+):")
PLACEHOLDER = re.compile(r"[A-Z][A-Z0-9_]*|\.\.\.|.*[<>{}].*")


@dataclass(frozen=True)
class Quoted:
    """One command a doc quotes: where, the program (``dicecam`` or a module) and its words."""

    where: str
    program: str
    words: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.where}: {self.program} {' '.join(self.words)}"


def code_texts(text: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every line of a fenced code block and every inline code span."""
    for block in FENCE.finditer(text):
        first = text.count("\n", 0, block.start(1)) + 1
        lines = block.group(1).split("\n")
        joined = ""
        for n, line in enumerate(lines):
            joined += line
            if line.rstrip().endswith("\\"):  # a shell line continued
                joined = joined.rstrip()[:-1] + " "
                continue
            if joined.strip():
                yield first + n, joined
            joined = ""
    # spans outside the blocks, with the blocks blanked out (line numbers kept)
    prose = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    for span in SPAN.finditer(prose):
        yield prose.count("\n", 0, span.start()) + 1, span.group(1)


def words(rest: str) -> tuple[str, ...]:
    """The words of a command line: optional brackets dropped, ``--a/--b`` split in two."""
    out: list[str] = []
    for word in rest.split():
        word = word.strip("[](),")
        if word.startswith("--") and "/--" in word:
            out.extend(word.split("/"))
        elif word:
            out.append(word)
    return tuple(out)


def quoted_commands() -> list[Quoted]:
    """Every ``dicecam`` and ``python -m vision.train.X`` command of the docs."""
    out: list[Quoted] = []
    for doc in DOCS:
        name = doc.relative_to(REPO).as_posix()
        for line, text in code_texts(doc.read_text()):
            for m in DICECAM.finditer(text):
                out.append(Quoted(f"{name}:{line}", "dicecam", words(m.group(1))))
            for m in TRAIN_MODULE.finditer(text):
                out.append(Quoted(f"{name}:{line}", m.group(1), words(m.group(2))))
    return out


def history(doc: Path) -> set[tuple[str, str]]:
    """(command, option) pairs a doc marks as options of a past version."""
    return {(m.group(1), m.group(2)) for m in HISTORY.finditer(doc.read_text())}


class _Captured(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


def module_parser(module: str) -> argparse.ArgumentParser:
    """The parser a ``python -m`` training module's ``main`` builds (caught before parsing)."""

    def capture(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> NoReturn:
        raise _Captured(self)

    main = importlib.import_module(module).main
    original = argparse.ArgumentParser.parse_args
    argparse.ArgumentParser.parse_args = capture  # type: ignore[method-assign]
    try:
        main([])
    except _Captured as caught:
        return caught.parser
    finally:
        argparse.ArgumentParser.parse_args = original  # type: ignore[method-assign]
    raise AssertionError(f"{module}.main([]) returned without parsing its arguments")


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The subcommands of ``parser`` by name ({} when it has none)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def is_placeholder(word: str) -> bool:
    return PLACEHOLDER.fullmatch(word) is not None


def bad_value(action: argparse.Action, value: str) -> str | None:
    """Why ``value`` is not a choice of ``action`` (None when it is, or is a placeholder)."""
    choices: Sequence[Any] | None = action.choices
    if action.dest == "game":  # checked when run, against the games of scoring/
        choices = GAME_NAMES
    if choices is None or is_placeholder(value):
        return None
    try:
        converted = action.type(value) if callable(action.type) else value
    except (TypeError, ValueError):
        converted = value
    if converted in choices:
        return None
    return f"{value!r} is not a choice of {action.dest} ({', '.join(map(str, choices))})"


def problems(parser: argparse.ArgumentParser, words: Sequence[str], allowed: set[str]) -> list[str]:
    """What in ``words`` (the command's words after its program) ``parser`` would refuse."""
    found: list[str] = []
    positionals = [a for a in parser._actions if not a.option_strings]
    if words and not words[0].startswith("-") and not is_placeholder(words[0]):
        first = next((a for a in positionals if a.choices), None)
        if first is not None and (why := bad_value(first, words[0])):
            found.append(why)
    for i, word in enumerate(words):
        if not word.startswith("--"):
            continue
        option = word.split("=", 1)[0]
        action = parser._option_string_actions.get(option)
        if action is None:
            if option not in allowed:
                found.append(f"no option {option}")
            continue
        value = word.split("=", 1)[1] if "=" in word else None
        if value is None and action.nargs != 0 and i + 1 < len(words):
            value = words[i + 1]
        if value is not None and (why := bad_value(action, value)):
            found.append(f"{option}: {why}")
    return found


def command_parser(quoted: Quoted) -> tuple[str, argparse.ArgumentParser, Sequence[str]]:
    """The command's name (``dicecam train``), its parser and the words after it."""
    if quoted.program != "dicecam":
        assert importlib.util.find_spec(quoted.program), f"{quoted}: no module {quoted.program}"
        return f"python -m {quoted.program}", module_parser(quoted.program), quoted.words
    name, parser, rest = "dicecam", build_parser(), quoted.words
    while rest and (sub := subparsers(parser)):
        word = rest[0]
        if word.startswith("-") or is_placeholder(word):
            break
        assert word in sub, f"{quoted}: {name} has no command {word!r} (it has {', '.join(sub)})"
        name, parser, rest = f"{name} {word}", sub[word], rest[1:]
    return name, parser, rest


QUOTED = quoted_commands()


def test_the_docs_quote_commands() -> None:
    programs = {(q.program, q.words[0] if q.words else "") for q in QUOTED}
    for expected in [
        ("dicecam", "read"),
        ("dicecam", "eval"),
        ("dicecam", "train"),
        ("dicecam", "synth"),
        ("dicecam", "labels"),
        ("dicecam", "serve"),
        ("dicecam", "outbox"),
        ("vision.train.surface", "runs/surf/synth-s11"),
        ("vision.train.quantize", "models/dicecam-reader-verify.onnx"),
    ]:
        assert expected in programs
    # a quoted command split over lines in a fenced block is read whole
    assert any(q.program == "vision.train.verify" and "--cache" in q.words for q in QUOTED)


@pytest.mark.parametrize("quoted", QUOTED, ids=str)
def test_a_quoted_command_runs_as_written(quoted: Quoted) -> None:
    doc = REPO / quoted.where.split(":")[0]
    name, parser, rest = command_parser(quoted)
    allowed = {option for command, option in history(doc) if command == name}
    found = problems(parser, rest, allowed)
    assert not found, f"{quoted}: {'; '.join(found)}"


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("dicecam reed photos/", "has no command 'reed'"),
        ("dicecam read --jsn roll.jpg", "no option --jsn"),
        ("dicecam read --backend cuda roll.jpg", "'cuda' is not a choice of backend"),
        ("dicecam train --stage=faces2", "'faces2' is not a choice of stage"),
        ("dicecam score --game yahtzee 1 2 3", "'yahtzee' is not a choice of game"),
        ("dicecam outbox send", "'send' is not a choice of action"),
        ("dicecam labels import x --to yolo", "no option --to"),
        ("python -m vision.train.surface d --layers 2", "'2' is not a choice of layers"),
        ("python -m vision.train.surface d --widht 2", "no option --widht"),
    ],
)
def test_a_wrong_command_is_caught(command: str, why: str) -> None:
    [quoted] = [
        *(Quoted("x", "dicecam", words(m.group(1))) for m in DICECAM.finditer(command)),
        *(Quoted("x", m.group(1), words(m.group(2))) for m in TRAIN_MODULE.finditer(command)),
    ]
    try:
        _, parser, rest = command_parser(quoted)
    except AssertionError as error:
        found = [str(error)]
    else:
        found = problems(parser, rest, set())
    assert any(why in f for f in found), found


def test_a_marked_past_option_is_allowed(tmp_path: Path) -> None:
    card = tmp_path / "card.md"
    card.write_text(
        "```bash\ndicecam train --faces-width 2\n```\n"
        "<!-- cli-history: dicecam train --faces-width: removed 2026-11-20 -->\n"
    )
    [(line, text)] = list(code_texts(card.read_text()))
    [m] = DICECAM.finditer(text)
    _, parser, rest = command_parser(Quoted("card.md:1", "dicecam", words(m.group(1))))
    assert problems(parser, rest, set()) == ["no option --faces-width"]
    allowed = {o for c, o in history(card) if c == "dicecam train"}
    assert problems(parser, rest, allowed) == []


def commands(
    parser: argparse.ArgumentParser, name: str = "dicecam"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every command of ``parser`` by name (``dicecam labels import``), ``parser`` first."""
    yield name, parser
    for word, sub in subparsers(parser).items():
        yield from commands(sub, f"{name} {word}")


@pytest.mark.parametrize(("name", "parser"), list(commands(build_parser())), ids=str)
def test_a_command_help_says_what_it_does_and_what_it_takes(
    name: str, parser: argparse.ArgumentParser
) -> None:
    assert parser.description, f"`{name} --help` says nothing of what it does"
    silent = [
        "/".join(a.option_strings) or a.dest
        for a in parser._actions
        if not a.help and not isinstance(a, argparse._SubParsersAction)
    ]
    assert not silent, f"`{name} --help` leaves {', '.join(silent)} without a word"


ENV_DEFAULT = re.compile(r"default:? (DICECAM_[A-Z_]+)(?P<rest>[^;)]*)")
"""An option's default taken from a variable, and what follows up to the next ';' or ')'."""


@pytest.mark.parametrize(("name", "parser"), list(commands(build_parser())), ids=str)
def test_a_command_help_gives_each_options_default(
    name: str, parser: argparse.ArgumentParser
) -> None:
    """An option with a default says it, and one whose default is a DICECAM_ variable says what
    it is without one: "(default: DICECAM_CONF)" alone left a player to guess the 0.25."""
    unsaid = []
    for action in parser._actions:
        option = "/".join(action.option_strings) or action.dest
        said = " ".join((action.help or "").split())
        default = action.default
        given = default is not None and default is not False
        if given and default is not argparse.SUPPRESS and "default" not in said:
            unsaid.append(f"{option} (default {default!r})")
        for m in ENV_DEFAULT.finditer(said):
            if "else" not in m.group("rest"):
                unsaid.append(f"{option} ({m.group(0)}, and without it?)")
    assert not unsaid, f"`{name} --help` leaves the default of {', '.join(unsaid)} unsaid"


@pytest.mark.parametrize("command", ["score", "advise", "strategy"])
def test_every_game_a_command_help_names_is_one_it_plays(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = subparsers(build_parser())[command]
    named = re.search(
        r"one of: ([a-z, -]+?) \(", parser._option_string_actions["--game"].help or ""
    )
    assert named, f"`dicecam {command} --help` names no game"
    games = named.group(1).split(", ")
    assert parser.get_default("game") in games
    dice = [] if command == "strategy" else ["5", "1", "2", "4", "6"]
    for game in games:
        assert main([command, "--game", game, *dice]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("command", ["score", "advise", "strategy"])
def test_every_house_rule_a_command_help_gives_is_taken_by_one_of_its_games(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = subparsers(build_parser())[command]
    helps = [parser._option_string_actions[o].help or "" for o in ("--game", "--rule")]
    games = re.search(r"one of: ([a-z, -]+?) \(", helps[0]).group(1).split(", ")
    examples = re.search(r"e\.g\. (.+?) \(", " ".join(helps[1].split())).group(1).split(", ")
    dice = [] if command == "strategy" else ["5", "1", "2", "4", "6"]
    for rule in examples:
        taken = [g for g in games if main([command, "--game", g, "--rule", rule, *dice]) == 0]
        capsys.readouterr()
        assert taken, f"`dicecam {command} --help` gives --rule {rule}, which none of {games} takes"


@pytest.mark.parametrize("command", ["advise", "strategy"])
def test_the_entry_scores_a_command_help_gives_are_the_games(command: str) -> None:
    from scoring import get_game

    helped = subparsers(build_parser())[command]._option_string_actions["--not-on-board"].help
    given = dict(re.findall(r"([a-z-]+) (\d+)", helped or ""))
    assert given, f"`dicecam {command} --help` gives no entry score"
    assert {g: get_game(g).entry_threshold for g in given} == {g: int(n) for g, n in given.items()}
